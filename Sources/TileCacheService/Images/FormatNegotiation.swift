import Foundation
import ImageCore

/// Which output formats an image URL that names none may be answered in, chosen from the request's `Accept`: AVIF,
/// then WebP, each only when enabled and named by the client (wildcards do not count: a browser that decodes AVIF
/// says so by name, as Chromium's `image/avif,image/webp,...` does). A negotiated answer carries `Vary: Accept`.
///
/// The catalogue's routes negotiate WebP always and AVIF with `--auto-avif`; imgproxy URLs negotiate as imgproxy's
/// `IMGPROXY_AUTO_WEBP` and `IMGPROXY_AUTO_AVIF` say (both off by default, as imgproxy's).
struct FormatNegotiation: Sendable, Hashable {
    /// Whether AVIF is offered to clients that accept it.
    var avif: Bool
    /// Whether WebP is offered to clients that accept it.
    var webp: Bool

    /// Whether any format is negotiated (the answer then varies by `Accept`).
    var negotiates: Bool { avif || webp }

    /// The format for a client sending `accept`; nil: the source's default (JPEG, or PNG for alpha).
    func format(accept: String?) -> ImageProcessing.OutputFormat? {
        if avif, Self.accepts("image/avif", accept) { return .avif }
        if webp, Self.accepts("image/webp", accept) { return .webp }
        return nil
    }

    /// Whether an Accept header lists `type` with a quality above 0 (wildcards do not count).
    static func accepts(_ type: String, _ accept: String?) -> Bool {
        guard let accept else { return false }
        for range in accept.split(separator: ",") {
            let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.first?.lowercased() == type else { continue }
            let quality = parts.dropFirst().first { $0.lowercased().hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return quality > 0
        }
        return false
    }
}
