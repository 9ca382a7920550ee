import Foundation
import HTTPTypes
import Hummingbird
import ImageCore

/// The answers of the image routes: status, headers (`Cache-Control`, validators, `Vary`, where the bytes came from)
/// and bytes, or a 304; the same for the router and the fast path.
extension ImagesController {
    /// An image route's answer: its status, headers and bytes (none for a 304).
    struct ImageAnswer {
        var status: HTTPResponse.Status
        var headers: HTTPFields
        var body: ByteBuffer?

        /// As Hummingbird sends it (it adds `Content-Length` for the bytes).
        var response: Response {
            body.map { Response(status: status, headers: headers, body: .init(byteBuffer: $0)) } ?? Response(status: status, headers: headers)
        }
    }

    /// The headers every image answer has: how long to keep it, `Vary: Accept` when the format was negotiated, and
    /// where client hints are read, `Accept-CH` and the hints in `Vary`.
    static func cacheHeaders(_ options: ImageOptions, maxAgeSeconds: Int) -> HTTPFields {
        var headers: HTTPFields = [.cacheControl: "public, max-age=\(maxAgeSeconds)"]
        let vary = (options.negotiated ? ["Accept"] : []) + (options.variesByHints ? ClientHints.varyNames : [])
        if !vary.isEmpty { headers[.vary] = vary.joined(separator: ", ") }
        if options.variesByHints { headers[acceptCH] = ClientHints.accepted }
        return headers
    }

    /// `Accept-CH`: the client hints the service reads.
    static let acceptCH = HTTPField.Name("Accept-CH")!

    /// A 304 for a conditional request for a variant whose source's validators, processed as the variant is, match;
    /// nil when they do not.
    static func notModified(_ requestHeaders: HTTPFields, variantOf source: ImageResponse, options: ImageOptions,
                                    maxAgeSeconds: Int) -> ImageAnswer? {
        let validators = source.validators.processed(options.processing)
        let etag = options.placeholder.map { placeholderETag(validators.etag, form: $0) } ?? validators.etag
        guard isNotModified(requestHeaders, etag: etag, lastModified: validators.lastModified) else { return nil }
        var headers = cacheHeaders(options, maxAgeSeconds: maxAgeSeconds)
        headers[.eTag] = etag
        headers[.lastModified] = validators.lastModified
        return ImageAnswer(status: .notModified, headers: headers)
    }

    /// The answer with `served`'s bytes, or a 304 when the request's validators match them. For a placeholder request,
    /// `served` is the placeholder (JSON), answered in the form asked for, under an ETag of its own.
    static func answer(_ served: ImageResponse, to requestHeaders: HTTPFields, options: ImageOptions, maxAgeSeconds: Int) -> ImageAnswer {
        var headers = cacheHeaders(options, maxAgeSeconds: maxAgeSeconds)
        let etag = options.placeholder.map { placeholderETag(served.validators.etag, form: $0) } ?? served.validators.etag
        headers[.eTag] = etag
        headers[.lastModified] = served.validators.lastModified
        headers[sourceHeader] = ServedFrom(served).rawValue
        if isNotModified(requestHeaders, etag: etag, lastModified: served.validators.lastModified) {
            return ImageAnswer(status: .notModified, headers: headers)
        }
        if let form = options.placeholder {
            switch form {
            case .placeholder:
                headers[.contentType] = "application/json; charset=utf-8"
                return ImageAnswer(status: .ok, headers: headers, body: served.bytes ?? ByteBuffer())
            case .blurhash, .thumbhash:
                let placeholder = served.placeholder
                headers[.contentType] = "text/plain; charset=utf-8"
                return ImageAnswer(status: .ok, headers: headers,
                                   body: ByteBuffer(string: (form == .blurhash ? placeholder?.blurhash : placeholder?.thumbhash) ?? ""))
            }
        }
        headers[.contentType] = served.contentType
        return ImageAnswer(status: .ok, headers: headers, body: served.bytes ?? ByteBuffer())
    }

    /// The placeholder `response` (a placeholder request's) holds; a 500 when it does not read as one.
    static func placeholder(in response: ImageResponse) throws(ServiceError) -> ImagePlaceholder {
        guard let placeholder = response.placeholder else {
            throw ServiceError(.internalServerError, reason: .resizeFailed, message: "the image's placeholder could not be read")
        }
        return placeholder
    }

    /// The ETag of a placeholder in `form`: the placeholder's, and the form (each form is its own representation).
    static func placeholderETag(_ etag: String, form: ImageOptions.PlaceholderForm) -> String {
        form == .placeholder ? etag : String(etag.dropLast()) + "-" + form.rawValue + "\""
    }

    /// Where the bytes of an image response came from (`ServedFrom`).
    static let sourceHeader = HTTPField.Name("X-TileCache-Source")!

    /// The values of `X-TileCache-Source`.
    enum ServedFrom: String {
        /// The pipeline's memory tier (the image, or the variant).
        case memory
        /// The original, read from the disk cache.
        case diskHit
        /// The original, on disk and confirmed by upstream with a 304.
        case revalidated
        /// The original or the variant, from the shared store of a fleet.
        case sharedHit
        /// The original, downloaded for this request.
        case networkFetch
        /// A variant made for this request.
        case resized

        init(_ response: ImageResponse) {
            // A variant made for this request is `resized` whichever layer had its source (its source's outcome is a
            // memory hit when the original was in memory).
            switch response.outcome {
            case _ where response.processed: self = .resized
            case .memoryHit: self = .memory
            case .diskHit: self = .diskHit
            case .revalidated: self = .revalidated
            case .sharedHit: self = .sharedHit
            case .networkFetch: self = .networkFetch
            }
        }
    }

    /// If-None-Match wins over If-Modified-Since (RFC 9110 13.2.2).
    static func isNotModified(_ headers: HTTPFields, etag: String, lastModified: String) -> Bool {
        let tags = headers[values: .ifNoneMatch].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        if !tags.isEmpty {
            return tags.contains { $0 == "*" || $0 == etag || $0 == "W/" + etag }
        }
        guard let since = headers[.ifModifiedSince].flatMap(HTTPDate.date(from:)),
              let modified = HTTPDate.date(from: lastModified) else { return false }
        return modified <= since
    }
}
