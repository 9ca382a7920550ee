public import Catalogue
import Foundation
import ImageCore
import TileCacheOrigin

/// The decoded size of each image (what it costs in `MemoryCache`): measured by decoding the disk cache's copy when
/// there is one, else the size of the image the built-in origin generates for that URL's element and kind.
public struct ImageSizes: Sendable {
    /// Where the sizes came from, for reports.
    public private(set) var source: String
    private var measured: [String: Int]
    private let synthesizer: ImageSynthesizer
    private let catalogue: ElementCatalogue

    /// Sizes from the disk cache at `cacheDirectory` (every entry decoded once, through an `ImagePipeline` that may
    /// answer from its disk cache only and writes nothing), falling back on the origin's images. A nil or empty
    /// directory uses the origin's images only.
    public init(cacheDirectory: String?, catalogue: ElementCatalogue = .standard, seed: UInt64 = 1) async {
        self.init(catalogue: catalogue, seed: seed)
        guard let cacheDirectory, FileManager.default.fileExists(atPath: cacheDirectory + "/entries") else { return }
        var configuration = ImagePipeline.Configuration()
        configuration.diskDirectory = cacheDirectory
        configuration.inspector = ImageInspector(strictness: .lenient)
        let pipeline: ImagePipeline
        do { pipeline = try ImagePipeline(requiringDiskCacheWith: configuration) } catch { return }
        for metadata in await pipeline.diskCache?.allMetadata() ?? [] where !metadata.url.contains("#") {  // originals, not variants
            let request = ImageRequest(url: metadata.url, options: [.returnCacheDataDontLoad, .returnPixels, .disableMemoryCacheWrites,
                                                                    .disableDiskCacheWrites])
            guard let image = try? await pipeline.image(for: request).image else { continue }
            measured[metadata.url] = image.cost
        }
        if !measured.isEmpty {
            source = "\(measured.count) images decoded from the disk cache at \(cacheDirectory), the rest the built-in origin's"
        }
    }

    /// Sizes of the built-in origin's images only.
    public init(catalogue: ElementCatalogue = .standard, seed: UInt64 = 1) {
        self.catalogue = catalogue
        synthesizer = ImageSynthesizer(seed: seed)
        measured = [:]
        source = "the built-in origin's images"
    }

    /// The decoded size of the image at `url`.
    ///
    /// - Throws: `ImageSizes.Unknown` for a URL that is neither in the disk cache nor a catalogue image URL
    ///   (`…/Tiles/NNN/s7.JPG` or `…/<element name>.jpg`, on any host).
    public func bytes(of url: String) throws(Unknown) -> Int {
        if let bytes = measured[url] { return bytes }
        guard let (element, kind) = ImageURLBuilder.image(at: url, in: catalogue) else { throw Unknown(url: url) }
        let (width, height) = synthesizer.size(of: element, kind: kind)
        return width * height * 3  // the origin's images are RGB, one byte per channel
    }

    /// A URL whose decoded size is unknown.
    public struct Unknown: Error, CustomStringConvertible {
        /// The URL.
        public var url: String
        public var description: String {
            "\(url): not in the disk cache and not a catalogue image URL (…/Tiles/NNN/s7.JPG or …/<element name>.jpg), so its decoded size is unknown"
        }
    }

}
