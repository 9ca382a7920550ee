import Catalogue
import ImageCore
import Logging
import NIOCore

/// The element API's placeholders: each element's thumbnail placeholder (`ImagePlaceholder`), the pipeline's
/// placeholder variant of the thumbnail, so it is made once and kept in every tier as the thumbnail is; a page of
/// records asks for its elements' at once.
struct ElementPlaceholders: Sendable {
    let pipeline: ImagePipeline
    let builder: ImageURLBuilder
    let logger: Logger

    /// Placeholders loaded at once for one page of records.
    static let concurrency = 8

    /// The thumbnail placeholders of `elements`, by element number; an element whose thumbnail cannot be loaded now
    /// has none (its keys are `null`: the list never fails for a placeholder).
    func thumbnails(of elements: [Element]) async -> [Int: ImagePlaceholder] {
        await withTaskGroup(of: (Int, ImagePlaceholder?).self) { group in
            var found: [Int: ImagePlaceholder] = [:]
            var pending = elements[...]
            func start() {
                guard let element = pending.popFirst() else { return }
                group.addTask { (element.number, await thumbnail(of: element)) }
            }
            for _ in 0..<Self.concurrency { start() }
            for await (number, placeholder) in group {
                if let placeholder { found[number] = placeholder }
                start()
            }
            return found
        }
    }

    /// `element`'s thumbnail placeholder, or nil (logged) when it cannot be loaded.
    func thumbnail(of element: Element) async -> ImagePlaceholder? {
        let request = ImageRequest(url: builder.url(for: element, kind: .thumbnail)).placeholder
        do {
            let served = try await ImagesController.image(for: request, from: pipeline, logger: logger)
            return served.bytes.flatMap { ImagePlaceholder(json: Array($0.readableBytesView)) }
        } catch {
            return nil
        }
    }
}
