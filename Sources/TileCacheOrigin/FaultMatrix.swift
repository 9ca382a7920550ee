public import Catalogue
public import ImageCore

/// The hardening fault matrix: every misbehaviour a client of image hosts must survive, each put on one thumbnail
/// (case 1 on `Tiles/001`, case 2 on `Tiles/002`, ...), with the outcome a correct client reports.
///
/// `tilecache origin --faults matrix` serves it, so `tilecache prefetch --elements 1-31 --kind thumbnails` shows every
/// case; the CLI and service tests run it end to end; docs/reliability.md prints it as a table.
public enum FaultMatrix {
    /// One row of the matrix.
    public struct Case: Sendable {
        /// What the origin does, in words.
        public var name: String
        /// The fault.
        public var fault: Fault
        /// What a correct client reports: a valid image, or a failure with this reason.
        public var outcome: Expected
        /// For a valid case, the format the bytes must be sniffed as (`jpeg` or `png`).
        public var format: String?
        /// The HTTP status `tilecache serve` answers for the thumbnail.
        public var serviceStatus: Int

        /// Whether the client must accept the image.
        public var isValid: Bool { outcome == .valid }
    }

    /// The outcome a case calls for.
    public enum Expected: Sendable, Hashable {
        /// A valid image.
        case valid
        /// A failure with this reason.
        case fails(ImageCoreError.Reason)

        /// `valid`, or the reason's code, as reports write them.
        public var rawValue: String {
            switch self {
            case .valid: "valid"
            case .fails(let reason): reason.rawValue
            }
        }
    }

    /// Bytes the oversized cases send: more than the default 20 MiB body limit.
    public static let oversizedBytes = 21 * 1024 * 1024

    /// The cases, in thumbnail order.
    public static let cases: [Case] = [
        Case(name: "404 Not Found", fault: .status(404), outcome: .fails(.httpStatus), serviceStatus: 404),
        Case(name: "410 Gone", fault: .status(410), outcome: .fails(.httpStatus), serviceStatus: 404),
        Case(name: "403 Forbidden", fault: .status(403), outcome: .fails(.httpStatus), serviceStatus: 502),
        Case(name: "500 Internal Server Error", fault: .status(500), outcome: .fails(.httpStatus), serviceStatus: 502),
        Case(name: "503, then success", fault: .failFirst(count: 1, status: 503), outcome: .valid, format: "jpeg", serviceStatus: 200),
        Case(name: "429 with Retry-After: 1, then success", fault: .tooManyRequests(count: 1, retryAfterSeconds: 1),
             outcome: .valid, format: "jpeg", serviceStatus: 200),
        Case(name: "redirect chain (3 hops)", fault: .redirectChain(hops: 3), outcome: .valid, format: "jpeg", serviceStatus: 200),
        Case(name: "redirect loop (to itself)", fault: .redirect(to: "/periodictable/Tiles/008/s7.JPG"), outcome: .fails(.redirectLoop),
             serviceStatus: 502),
        Case(name: "redirect to ftp://", fault: .redirect(to: "ftp://127.0.0.1/s7.JPG"), outcome: .fails(.unsupportedScheme),
             serviceStatus: 502),
        Case(name: "HTML page, 200, Content-Type: image/jpeg", fault: .htmlPage, outcome: .fails(.notAnImage), serviceStatus: 502),
        Case(name: "PNG served as .jpg (image/jpeg)", fault: .body(.png), outcome: .valid, format: "png", serviceStatus: 200),
        Case(name: "JPEG served as text/plain", fault: .contentType("text/plain"), outcome: .valid, format: "jpeg", serviceStatus: 200),
        Case(name: "empty body, 200", fault: .body(.empty), outcome: .fails(.notAnImage), serviceStatus: 502),
        Case(name: "body cut off (Content-Length larger than sent)", fault: .truncatedBody(fraction: 0.5), outcome: .fails(.truncated),
             serviceStatus: 502),
        Case(name: "connection reset mid-body", fault: .resetMidBody, outcome: .fails(.connect), serviceStatus: 502),
        Case(name: "accepts, never answers", fault: .noResponse, outcome: .fails(.timeout), serviceStatus: 504),
        Case(name: "slow drip (200 B/s)", fault: .slowDrip(bytesPerSecond: 200), outcome: .fails(.timeout), serviceStatus: 504),
        Case(name: "body over the limit, with Content-Length", fault: .oversized(bytes: oversizedBytes, chunked: false),
             outcome: .fails(.tooLarge), serviceStatus: 502),
        Case(name: "body over the limit, chunked", fault: .oversized(bytes: oversizedBytes, chunked: true), outcome: .fails(.tooLarge),
             serviceStatus: 502),
        Case(name: "gzip-encoded body (Content-Encoding: gzip)", fault: .body(.gzip), outcome: .valid, format: "jpeg", serviceStatus: 200),
        Case(name: "JPEG header claiming 65500x65500", fault: .hugeDimensions, outcome: .fails(.dimensions), serviceStatus: 502),
        Case(name: "PNG with a bad IDAT CRC", fault: .body(.pngBadCRC), outcome: .fails(.corrupt), serviceStatus: 502),
        Case(name: "PNG with a truncated IDAT", fault: .body(.pngTruncatedIDAT), outcome: .fails(.truncated), serviceStatus: 502),
        Case(name: "progressive JPEG", fault: .body(.progressive), outcome: .valid, format: "jpeg", serviceStatus: 200),
        Case(name: "grayscale JPEG", fault: .body(.gray), outcome: .valid, format: "jpeg", serviceStatus: 200),
        Case(name: "CMYK JPEG", fault: .body(.cmyk), outcome: .valid, format: "jpeg", serviceStatus: 200),
        Case(name: "16-bit PNG", fault: .body(.png16), outcome: .valid, format: "png", serviceStatus: 200),
        Case(name: "interlaced PNG", fault: .body(.pngInterlaced), outcome: .valid, format: "png", serviceStatus: 200),
        Case(name: "chunked body (no Content-Length)", fault: .chunked, outcome: .valid, format: "jpeg", serviceStatus: 200),
        Case(name: "JPEG with junk bytes before its DQT marker", fault: .body(.jpegJunkBeforeDQT), outcome: .valid, format: "jpeg",
             serviceStatus: 200),
        Case(name: "JPEG with a bogus DHT segment length", fault: .body(.jpegBogusDHTLength), outcome: .fails(.corrupt), serviceStatus: 502),
    ]

    /// The element whose thumbnail carries case `index` (0-based): atomic number `index + 1`.
    public static func element(ofCase index: Int) -> Element { ElementCatalogue.standard.element(number: index + 1)! }

    /// The origin rules: case N on `/Tiles/NNN/`.
    public static var rules: [FaultRule] {
        cases.indices.map { FaultRule(pathContains: "/Tiles/\(element(ofCase: $0).paddedNumber)/", fault: cases[$0].fault) }
    }
}
