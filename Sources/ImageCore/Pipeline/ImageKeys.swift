/// Every key and name an image gets, derived here and nowhere else: the memory tier's key, the disk cache's key and
/// entry file, the shared store's object name, the ETag and the key concurrent requests share one load under.
///
/// A changed derivation is a cache flush for every user: each disk entry and shared-store object made before becomes
/// unreachable, and every client's cached ETag stops matching. `ImageKeysTests` pins each one with literal values.
public struct ImageKey: Hashable, Sendable {
    /// The URL whose image this is: the one asked for, or the other spelling that served it (an alias).
    public let url: String
    /// What is made of the image (`.none`: the original).
    public let processing: ImageProcessing
    /// The addresses the image may have been fetched from. An image a client named (an open source,
    /// `.publicOnly`) is kept apart from the same URL fetched by a trusted load: a trusted load may reach hosts the
    /// address rule refuses, and its bytes must not answer a client that could not have fetched them.
    public let addresses: AddressRule

    public init(url: String, processing: ImageProcessing = .none, addresses: AddressRule = .any) {
        self.url = url
        self.processing = processing
        self.addresses = addresses
    }

    /// The URL as the keys name it: itself, or `public-only:` and itself for `.publicOnly`.
    var keyURL: String { addresses == .publicOnly ? "public-only:" + url : url }

    /// The key of the memory tier and of the disk cache: the URL, and for a variant `#` and its options in a fixed
    /// order, defaults left out (`…/s7.JPG#w=64`, `…/gold.jpg#w=64&h=64&fit=cover&f=webp`); `public-only:` before an
    /// open source's. A disk variant is read back only while its ETag is the one its current source gives it.
    public var cacheKey: String { processing.isNone ? keyURL : keyURL + "#" + processing.canonicalQuery }

    /// The disk cache's file for `cacheKey`: its SHA-256 in hex, `.tce` (the key itself is in the file).
    public var diskEntryName: String { Self.diskEntryName(forKey: cacheKey) }

    /// The disk cache's file for a key (see `diskEntryName`).
    public static func diskEntryName(forKey key: String) -> String { DiskCache.sha256Hex(Array(key.utf8)) + ".tce" }

    /// The shared store's object: `objects/`, the first two hex digits of the URL's SHA-256, `/`, all of them, and a
    /// variant's `etagSuffix` (`objects/3f/3f…9a-r4w64`), relative to the store's prefix. Letters, digits, `/` and
    /// `-` only: S3 keys signed by curl 7.88 must avoid `+` and `=`.
    public var sharedObjectName: String {
        let hex = DiskCache.sha256Hex(Array(keyURL.utf8))
        return "objects/\(hex.prefix(2))/\(hex)" + etagSuffix
    }

    /// What a variant's ETag adds to its source's: `-r4w64`, `-r4w64h64cq90webp`; empty for the original. `r4` is
    /// `ImageProcessing.revision`: output an older resampler made is another variant, never served under the new ETag.
    public var etagSuffix: String { Self.etagSuffix(processing) }

    /// See `etagSuffix`.
    static func etagSuffix(_ processing: ImageProcessing) -> String {
        guard !processing.isNone else { return "" }
        /// Letters, digits and `-` only: `m` for a minus sign, `p` for a decimal point, `-` for a colon.
        func safe(_ text: String) -> String { String(text.map { $0 == "-" ? "m" : $0 == "." ? "p" : $0 == ":" ? "-" : $0 }) }
        var token = "-r\(ImageProcessing.revision)"
        if let width = processing.width { token += "w\(width)" }
        if let height = processing.height { token += "h\(height)" }
        switch processing.fit {
        case .inside: break
        case .cover: token += "c"
        case .fill: token += "s"
        case .coverClipped: token += "k"
        case .auto: token += "a"
        }
        if processing.enlarge { token += "e" }
        if let quality = processing.quality { token += "q\(quality)" }
        if let format = processing.format { token += format.rawValue }
        if processing.gravity != .centre {
            // Letters, digits and `-` only (S3 object names): `g` + the anchor and offsets, `m` for a minus sign, `p`
            // for a decimal point, `-` between them (`gno-10-0`, `gfp-0p3-0p6`).
            token += "g" + safe(processing.gravity.text)
        }
        if processing.boxCappedToSource { token += "u" }
        if processing.cropRule == .thumbor { token += "t" }
        if processing.dpr != 1 { token += "d" + String("\(processing.dpr)".map { $0 == "." ? "p" : $0 }) }
        // thumbor's other operations, each a part of its own after a `-`.
        if let crop = processing.sourceCrop { token += "-crop\(crop.left)x\(crop.top)x\(crop.right)x\(crop.bottom)" }
        if processing.fitInFull { token += "-full" }
        if processing.fitInAdaptive { token += "-adaptive" }
        if processing.flipHorizontal { token += "-fliph" }
        if processing.flipVertical { token += "-flipv" }
        if let canvas = processing.canvas { token += "-fill\(canvas.text)" + (processing.canvasUnderTransparency ? "u" : "") }
        if let maxBytes = processing.maxBytes { token += "-maxb\(maxBytes)" }
        // imgproxy's other options, the same way.
        if let minWidth = processing.minWidth { token += "-mw\(minWidth)" }
        if let minHeight = processing.minHeight { token += "-mh\(minHeight)" }
        if let crop = processing.regionCrop {
            token += "-c" + safe("\(crop.width):\(crop.height)" + (crop.gravity.map { ":" + $0.text } ?? ""))
        }
        if let extend = processing.extend { token += "-ex" + safe(extend.text) }
        if let background = processing.background { token += "-bg\(background.hex)" }
        if let trim = processing.trim { token += "-trim\(trim.fromBottomRight ? "br" : "tl")\(trim.tolerance)" }
        return token
    }

    /// The strong ETag of an original whose bytes have `checksum` (SHA-256 hex): its first 32 digits, quoted.
    public static func etag(sourceChecksum checksum: String) -> String { "\"\(checksum.prefix(32))\"" }

    /// The ETag of `processing`'s variant of a source whose ETag is `sourceETag`: the source's and `etagSuffix`.
    public static func etag(variantOf sourceETag: String, processing: ImageProcessing) -> String {
        String(sourceETag.dropLast()) + etagSuffix(processing) + "\""
    }
}

extension ImageRequest {
    /// The key of the image `servedBy` (`url`, or an alias) serves, processed as this request asks.
    public func key(servedBy: String) -> ImageKey { ImageKey(url: servedBy, processing: processing, addresses: addresses) }

    /// The key concurrent requests share one load under: the URL asked for, the processing, the alternatives and the
    /// options (a reload must not join a load that may answer from a cache).
    var coalescingKey: CoalescingKey { CoalescingKey(url: url, processing: processing, alternatives: alternatives, options: options,
                                                                  addresses: addresses) }

    /// See `coalescingKey`.
    struct CoalescingKey: Hashable, Sendable {
        var url: String
        var processing: ImageProcessing
        var alternatives: [String]
        var options: Options
        var addresses: AddressRule
    }
}
