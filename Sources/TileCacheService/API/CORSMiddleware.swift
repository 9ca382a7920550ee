import Foundation
import HTTPTypes
import Hummingbird

/// Which web pages on other origins may call the service from a browser (`--cors-origin`).
///
/// `*` (the default) lets any page read: GET and HEAD of the API and images. A list of origins lets those pages (and
/// only those) also write: POST, PUT and DELETE with `Authorization` (a write token) and JSON bodies. `none` sends no
/// CORS headers at all. Hummingbird's `CORSMiddleware` allows one origin or all of them, with one method set for both;
/// the rule that a wildcard never opens writes needs the two policies, hence this one.
public struct CORSPolicy: Sendable, Equatable, CustomStringConvertible {
    public enum Origins: Sendable, Equatable {
        case any
        case listed(Set<String>)
        case none
    }

    public var origins: Origins

    public static let readOnlyForAll = CORSPolicy(origins: .any)

    public init(origins: Origins) { self.origins = origins }

    /// `*`, `none`, or comma-separated origins (`https://app.example.com,http://localhost:5173`).
    ///
    /// - Throws: `ServiceConfigurationError` naming the value that is not an origin.
    public init(parsing text: String) throws(ServiceConfigurationError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        switch trimmed {
        case "*": origins = .any
        case "none", "": origins = .none
        default:
            var listed: Set<String> = []
            for item in trimmed.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                let parts = item.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2, ["http", "https"].contains(parts[0].lowercased()), !parts[1].isEmpty,
                      !parts[1].contains("/"), !item.hasSuffix("/") else {
                    throw ServiceConfigurationError("--cors-origin: '\(item)' is not an origin (scheme://host[:port], no path; or * or none)")
                }
                listed.insert(item.lowercased())
            }
            origins = .listed(listed)
        }
    }

    public var description: String {
        switch origins {
        case .any: "*"
        case .none: "none"
        case .listed(let set): set.sorted().joined(separator: ",")
        }
    }

    /// The methods a page from an allowed origin may use.
    var methods: [HTTPRequest.Method] {
        switch origins {
        case .listed: [.get, .head, .post, .put, .delete]
        case .any, .none: [.get, .head]
        }
    }

    /// Whether a page on `origin` may write (POST, PUT, PATCH, DELETE): a page served by this service itself, or one
    /// of the listed origins. A wildcard or `none` never lets another origin write, and neither does the opaque origin
    /// `null` (sandboxed frames, `file:` pages).
    ///
    /// This service's own pages are those under `publicOrigin` (`--public-url`'s origin), and those whose origin names
    /// the authority the request was sent to (`host`) when that is an IP address or `localhost`: any other name may be
    /// an attacker's, pointed at this service's address after the page has loaded (DNS rebinding), and a page under it
    /// would be same-origin by the `Host` header alone. So behind a DNS name, the page writes with `--public-url` set
    /// (or its origin in `--cors-origin`).
    ///
    /// Browsers send `Origin` with every such request, including `no-cors` ones that need no preflight (a form, or a
    /// `fetch` with a `text/plain` body), so refusing on it stops cross-site writes whatever the request looks like.
    func allowsWrite(from origin: String, host: String?, publicOrigin: String?) -> Bool {
        let lowered = origin.lowercased()
        if let publicOrigin, lowered == publicOrigin.lowercased() { return true }
        if let host, Self.cannotBeRebound(host), let authority = lowered.split(separator: "://", maxSplits: 1).dropFirst().first,
           authority == host.lowercased() {
            return true
        }
        if case .listed(let set) = origins { return set.contains(lowered) }
        return false
    }

    /// Whether an authority (`host[:port]`) names this machine in a way a page's author cannot redirect: an IPv4 or
    /// bracketed IPv6 address, or `localhost` (and `*.localhost`, which browsers resolve to loopback themselves).
    static func cannotBeRebound(_ authority: String) -> Bool {
        let lowered = authority.lowercased()
        if lowered.hasPrefix("[") { return lowered.contains("]") }  // an IPv6 literal
        let host = lowered.split(separator: ":", maxSplits: 1).first.map(String.init) ?? lowered
        if host == "localhost" || host.hasSuffix(".localhost") { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && UInt8($0) != nil }
    }

    /// The `Access-Control-Allow-Origin` value for a request from `origin`; nil when it is not allowed.
    func allowOrigin(for origin: String) -> String? {
        switch origins {
        case .any: "*"
        case .none: nil
        case .listed(let set): set.contains(origin.lowercased()) ? origin : nil
        }
    }
}

/// A configuration value the service cannot use: the message names the option and the value.
public struct ServiceConfigurationError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Answers CORS preflights and adds the CORS headers to answers for allowed origins (see `CORSPolicy`).
struct CORSMiddleware<Context: RequestContext>: RouterMiddleware {
    let policy: CORSPolicy
    /// The origin of `--public-url`, whose pages are this service's own (see `CORSPolicy.allowsWrite`).
    let publicOrigin: String?
    /// Request headers a page may send.
    static var allowedHeaders: String { "Accept, Authorization, Content-Type, If-None-Match, If-Modified-Since, X-Request-ID" }
    /// Response headers a page may read beyond the CORS-safelisted ones.
    static var exposedHeaders: String { "ETag, Retry-After, X-Request-ID, X-TileCache-Source, X-Total-Count" }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let origin = request.headers[.origin]
        if let origin, WriteTokenMiddleware<Context>.writeMethods.contains(request.method),
           !policy.allowsWrite(from: origin, host: request.head.authority, publicOrigin: publicOrigin) {
            throw ServiceError(.forbidden, reason: .crossOriginWrite,
                               message: "a page on '\(origin.prefix(100))' may not write here: only this service's own pages (at --public-url, or an IP address or localhost) and the origins given to --cors-origin may")
        }
        guard policy.origins != .none else { return try await next(request, context) }
        if let origin, request.method == .options, let asked = request.headers[.accessControlRequestMethod] {
            // A preflight: allowed origins learn the methods and headers; others get no CORS headers, so the browser
            // stops the request.
            var headers: HTTPFields = [.vary: "Origin"]
            if let allowed = policy.allowOrigin(for: origin), policy.methods.contains(where: { $0.rawValue == asked }) {
                headers[.accessControlAllowOrigin] = allowed
                headers[.accessControlAllowMethods] = policy.methods.map(\.rawValue).joined(separator: ", ")
                headers[.accessControlAllowHeaders] = Self.allowedHeaders
                headers[.accessControlMaxAge] = "600"
            }
            return Response(status: .noContent, headers: headers)
        }
        var response = try await next(request, context)
        Self.decorate(&response.headers, origin: origin, policy: policy)
        return response
    }

    /// Adds the CORS headers of an answer (not a preflight) to `headers`, whether the request came from a page or not:
    /// a shared cache may store an answer made for one client and give it to another, so the answer must be right for
    /// both. With `*`, every answer says `Access-Control-Allow-Origin: *`; with listed origins, every answer says
    /// `Vary: Origin`, and those to an allowed page name it.
    static func decorate(_ headers: inout HTTPFields, origin: String?, policy: CORSPolicy) {
        switch policy.origins {
        case .none:
            return
        case .any:
            // Fields made once (their values checked once): an image answer has neither, and any other keeps one.
            for field in CORSAnyOrigin.fields {
                if headers.contains(field.name) { headers[fields: field.name] = [field] } else { headers.append(field) }
            }
        case .listed:
            headers.append(HTTPField(name: .vary, value: "Origin"))  // no answer has it before this (Accept, Accept-Encoding)
            if let origin, let allowed = policy.allowOrigin(for: origin) {
                headers[.accessControlAllowOrigin] = allowed
                headers[.accessControlExposeHeaders] = exposedHeaders
            }
        }
    }
}

extension CORSMiddleware: ServiceMiddleware where Context == BasicRequestContext {
    /// The fast path answers a GET or HEAD, never a preflight or a write.
    func fastPath(_ request: FastRequest, next: (FastRequest) -> FastAnswer?) -> FastAnswer? {
        guard request.head.method == .get || request.head.method == .head else { return nil }
        return next(request)
    }

    /// The same headers on an image the fast path answers.
    func fastPathDecorate(_ head: inout HTTPResponse, for request: FastRequest) {
        Self.decorate(&head.headerFields, origin: request.head.headerFields[.origin], policy: policy)
    }

    /// The `Origin` when origins are listed (whether it is one decides the fields); nothing of the request otherwise.
    var fastPathDecorationKey: (@Sendable (FastRequest) -> String)? {
        guard case .listed = policy.origins else { return nil }
        return { request in request.head.headerFields[.origin].map { "+" + $0 } ?? "-" }
    }
}

/// The headers of every answer when any origin may read (`CORSMiddleware`, which is generic, cannot store them).
private enum CORSAnyOrigin {
    static let fields = [HTTPField(name: .accessControlAllowOrigin, value: "*"),
                         HTTPField(name: .accessControlExposeHeaders, value: CORSMiddleware<BasicRequestContext>.exposedHeaders)]
}
