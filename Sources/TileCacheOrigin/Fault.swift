/// A misbehaviour the origin injects for matching paths, deterministically.
public enum Fault: Sendable, Hashable {
    /// Always answer with this status and a short text body (404, 410, 500, ...).
    case status(Int)
    /// Always answer with this status, a short text body and this `Cache-Control` (a 404 a cache may keep, or not).
    case statusWithCacheControl(Int, String)
    /// Answer the first `count` requests for a path with `status`, then serve normally (503 then success).
    case failFirst(count: Int, status: Int)
    /// Answer the first `count` requests with 429 and `Retry-After: seconds`, then serve normally.
    case tooManyRequests(count: Int, retryAfterSeconds: Int)
    /// Serve the real image with this Content-Type.
    case contentType(String)
    /// Serve an HTML error page with status 200 and `Content-Type: image/jpeg`.
    case htmlPage
    /// Announce the full Content-Length, send only this fraction of the body, then close.
    case truncatedBody(fraction: Double)
    /// Send half the body, then reset the connection (RST).
    case resetMidBody
    /// Redirect (302) to this path or absolute URL.
    case redirect(to: String)
    /// Send the body at this many bytes per second.
    case slowDrip(bytesPerSecond: Int)
    /// Serve a JPEG whose header claims 65500x65500 pixels.
    case hugeDimensions
    /// Send the body with `Transfer-Encoding: chunked` (no Content-Length).
    case chunked
    /// Read the request and never answer.
    case noResponse
    /// Add this delay before answering (on top of the server-wide latency).
    case delay(Duration)
    /// Serve the requested image in another form, or damaged (see `BodyForm`), always as `image/jpeg`.
    case body(BodyForm)
    /// Serve a body of this many bytes (a real JPEG, then zero padding): with Content-Length, or chunked without it.
    case oversized(bytes: Int, chunked: Bool)
    /// Redirect (302) through this many hops before the real image.
    case redirectChain(hops: Int)

    /// Parses the command-line form: `404`, `status-cache-control:404:max-age=5`, `fail-first:2:503`, `429:1:2`, `content-type:text/plain`, `html`,
    /// `truncate:0.5`, `reset`, `redirect:/path`, `drip:2000`, `huge`, `chunked`, `hang`, `delay-ms:200`,
    /// `body:FORM` (a `BodyForm` name, e.g. `body:png`), `oversize:BYTES`, `oversize-chunked:BYTES`, `redirect-chain:3`.
    public init?(argument: String) {
        let parts = argument.split(separator: ":", maxSplits: 2).map(String.init)
        switch parts.first {
        case let code? where Int(code) == 429 && parts.count == 3:
            guard let count = Int(parts[1]), let seconds = Int(parts[2]) else { return nil }
            self = .tooManyRequests(count: count, retryAfterSeconds: seconds)
        case let code? where Int(code) != nil && parts.count == 1: self = .status(Int(code)!)
        case "status-cache-control":
            guard parts.count == 3, let status = Int(parts[1]), (100...599).contains(status) else { return nil }
            self = .statusWithCacheControl(status, parts[2])
        case "fail-first":
            guard parts.count == 3, let count = Int(parts[1]), let status = Int(parts[2]) else { return nil }
            self = .failFirst(count: count, status: status)
        case "content-type" where parts.count >= 2: self = .contentType(parts.dropFirst().joined(separator: ":"))
        case "html": self = .htmlPage
        case "truncate":
            guard parts.count == 2, let fraction = Double(parts[1]), (0..<1).contains(fraction) else { return nil }
            self = .truncatedBody(fraction: fraction)
        case "reset": self = .resetMidBody
        case "redirect" where parts.count >= 2: self = .redirect(to: parts.dropFirst().joined(separator: ":"))
        case "drip":
            guard parts.count == 2, let rate = Int(parts[1]), rate > 0 else { return nil }
            self = .slowDrip(bytesPerSecond: rate)
        case "huge": self = .hugeDimensions
        case "hang": self = .noResponse
        case "chunked": self = .chunked
        case "delay-ms":
            guard parts.count == 2, let milliseconds = Int(parts[1]) else { return nil }
            self = .delay(.milliseconds(milliseconds))
        case "body":
            guard parts.count == 2, let form = BodyForm(rawValue: parts[1]) else { return nil }
            self = .body(form)
        case "oversize", "oversize-chunked":
            guard parts.count == 2, let bytes = Int(parts[1]), bytes > 0 else { return nil }
            self = .oversized(bytes: bytes, chunked: parts[0] == "oversize-chunked")
        case "redirect-chain":
            guard parts.count == 2, let hops = Int(parts[1]), (1...50).contains(hops) else { return nil }
            self = .redirectChain(hops: hops)
        default: return nil
        }
    }
}

/// Other forms of the requested image (each decodes to the same picture) and damaged ones, for `Fault.body`.
public enum BodyForm: String, Sendable, Hashable, CaseIterable {
    /// The image as an 8-bit RGB PNG (served at its `.jpg` path as `image/jpeg`).
    case png
    /// Status 200 with an empty body.
    case empty
    /// The JPEG gzip-compressed, with `Content-Encoding: gzip`.
    case gzip
    /// A progressive JPEG.
    case progressive
    /// A grayscale (one-component) JPEG.
    case gray
    /// A four-component Adobe CMYK JPEG.
    case cmyk
    /// A PNG with 16 bits per sample.
    case png16 = "png-16"
    /// An Adam7-interlaced PNG.
    case pngInterlaced = "png-interlaced"
    /// A PNG whose first IDAT chunk has a wrong CRC.
    case pngBadCRC = "png-bad-crc"
    /// A PNG whose image data stops halfway through its first IDAT chunk (chunk lengths and CRCs consistent).
    case pngTruncatedIDAT = "png-truncated-idat"
    /// The baseline JPEG with four junk bytes before its DQT marker (`JPEGQuirk` `junk-before-dqt`): every viewer
    /// opens it; valid with a warning.
    case jpegJunkBeforeDQT = "jpeg-junk-before-dqt"
    /// The baseline JPEG with a DHT segment whose length field says 1 (`JPEGQuirk` `bogus-dht-length`): libjpeg
    /// stops reading the header, a fatal error.
    case jpegBogusDHTLength = "jpeg-bogus-dht-length"
}

/// Which requests a fault applies to.
public struct FaultRule: Sendable, Hashable {
    /// The fault applies to request paths containing this text (empty: every path).
    public var pathContains: String
    /// What to do.
    public var fault: Fault

    /// A rule for paths containing `pathContains`.
    public init(pathContains: String, fault: Fault) {
        self.pathContains = pathContains
        self.fault = fault
    }
}
