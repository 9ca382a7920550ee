public import Foundation

/// What the disk cache keeps beside an image's bytes.
public struct DiskCacheMetadata: Sendable, Hashable, Codable {
    /// The URL the bytes came from (checked on every read: a hash collision is a miss, never a wrong image).
    public var url: String
    /// Content-Type the server sent, if any.
    public var contentType: String?
    /// Format sniffed from the bytes.
    public var format: ImageFormat
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// Size of the stored bytes.
    public var byteCount: Int
    /// The EXIF orientation the image declares (1...8), nil when none (absent from entries written before it existed).
    public var orientation: Int?
    /// ETag the server sent, for revalidation.
    public var etag: String?
    /// Last-Modified the server sent, for revalidation.
    public var lastModified: String?
    /// When the bytes were stored or last revalidated.
    public var storedAt: Date
    /// Freshness lifetime from Cache-Control (`max-age`; 0 for `no-cache`/`no-store`), nil when the server gave none.
    public var maxAgeSeconds: Int?
    /// SHA-256 of the stored bytes, lowercase hex.
    public var checksum: String

    /// Metadata for `bytes` that passed validation.
    public init(url: String, header: ImageHeader, bytes: [UInt8], contentType: String?, etag: String?,
                lastModified: String?, cacheControl: String?, storedAt: Date = Date()) {
        self.url = url
        self.contentType = contentType
        format = header.format
        width = header.width
        height = header.height
        orientation = header.orientation
        byteCount = bytes.count
        self.etag = etag
        self.lastModified = lastModified
        self.storedAt = storedAt
        maxAgeSeconds = Self.maxAge(fromCacheControl: cacheControl)
        checksum = DiskCache.sha256Hex(bytes)
    }

    /// Format, size and orientation, as the image's header said.
    public var header: ImageHeader {
        ImageHeader(format: format, width: width, height: height, byteCount: byteCount, orientation: orientation)
    }

    /// Whether the entry is past its freshness lifetime (`maxAgeSeconds`, else `defaultLifetime`).
    public func isStale(at now: Date = Date(), defaultLifetime: Duration) -> Bool {
        let lifetime = maxAgeSeconds.map { Double($0) } ?? Double(defaultLifetime.components.seconds)
        return now.timeIntervalSince(storedAt) >= lifetime
    }

    /// Whether a conditional request can revalidate the entry.
    public var hasValidators: Bool { etag != nil || lastModified != nil }

    static func maxAge(fromCacheControl value: String?) -> Int? {
        guard let value else { return nil }
        var maxAge: Int?
        for directive in value.lowercased().split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { String($0).trimmingWhitespace() }
            switch parts[0] {
            case "no-cache", "no-store": return 0
            case "s-maxage": if parts.count == 2, let seconds = Int(parts[1]) { return max(0, seconds) }
            case "max-age": if parts.count == 2, let seconds = Int(parts[1]) { maxAge = max(0, seconds) }
            default: break
            }
        }
        return maxAge
    }
}

/// A verified entry read from the disk cache.
public struct DiskCacheEntry: Sendable {
    /// Its metadata.
    public var metadata: DiskCacheMetadata
    /// The original validated bytes.
    public var bytes: [UInt8]

    public init(metadata: DiskCacheMetadata, bytes: [UInt8]) {
        self.metadata = metadata
        self.bytes = bytes
    }
}

/// The on-disk form: `TCE1`, a little-endian UInt32 metadata length, the metadata as JSON, then the bytes.
enum DiskCacheFile {
    static let magic: [UInt8] = Array("TCE1".utf8)

    /// What precedes the bytes in the file: the magic, the metadata's length and the metadata. (Written before the
    /// bytes, not joined to them: a photo's megabytes are not copied to be stored.)
    static func header(_ metadata: DiskCacheMetadata) throws -> [UInt8] {
        let json = [UInt8](try encoder.encode(metadata))
        let length = UInt32(json.count)
        var header = magic
        header.reserveCapacity(8 + json.count)
        header += [UInt8(length & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 24)]
        header += json
        return header
    }

    /// The length of the JSON metadata, from bytes 4..<8 of a file (little-endian), or nil when the file is too short.
    static func metadataLength(_ header: some RandomAccessCollection<UInt8>) -> Int? {
        guard header.count >= 8 else { return nil }
        let start = header.startIndex
        func byte(_ offset: Int) -> Int { Int(header[header.index(start, offsetBy: offset)]) }
        return byte(4) | byte(5) << 8 | byte(6) << 16 | byte(7) << 24
    }

    /// The metadata of a file's header, without its bytes; nil when the header is damaged.
    static func decodeMetadata(_ header: [UInt8]) -> DiskCacheMetadata? {
        guard header.count >= 8, Array(header[0..<4]) == magic else { return nil }
        return try? decoder.decode(DiskCacheMetadata.self, from: Data(header[8...]))
    }

    /// Parses and verifies a file; the reason is given when it is damaged. With `expectedURL` nil, any URL is accepted.
    static func decode(_ file: [UInt8], expectedURL: String?) -> Result<DiskCacheEntry, DamageReason> {
        guard Array(file.prefix(4)) == magic, let length = metadataLength(file) else { return .failure(.damaged("bad magic")) }
        guard 8 + length <= file.count,
              let metadata = try? decoder.decode(DiskCacheMetadata.self, from: Data(file[8..<(8 + length)])) else {
            return .failure(.damaged("unreadable metadata"))
        }
        if let expectedURL, metadata.url != expectedURL { return .failure(.otherURL) }
        let bytes = Array(file[(8 + length)...])
        guard bytes.count == metadata.byteCount else {
            return .failure(.damaged("\(bytes.count) bytes stored, \(metadata.byteCount) expected"))
        }
        guard DiskCache.sha256Hex(bytes) == metadata.checksum else { return .failure(.damaged("checksum mismatch")) }
        return .success(DiskCacheEntry(metadata: metadata, bytes: bytes))
    }

    enum DamageReason: Error, Equatable {
        case damaged(String)
        /// A different URL with the same hash: not damage, just not ours.
        case otherURL
    }

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }()
}

extension DiskCache {
    /// SHA-256 of `bytes` as lowercase hex.
    public static func sha256Hex(_ bytes: [UInt8]) -> String {
        Hashing.sha256(bytes).map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }
}
