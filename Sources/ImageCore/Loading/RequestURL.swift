import Foundation

/// The parts of an absolute http(s) URL that the engine needs, checked before anything is sent.
public struct RequestURL: Hashable, Sendable {
    /// `http` or `https`.
    public var scheme: String
    /// Host name or address, lowercased (IPv6 literal in brackets).
    public var host: String
    /// Explicit or default port.
    public var port: Int

    /// `scheme://host:port`: the key connection limits are counted under.
    public var origin: String { "\(scheme)://\(host):\(port)" }

    /// Parses `url`, refusing other schemes, credentials, spaces and missing hosts.
    public init(_ url: String) throws(ImageCoreError) {
        guard let separator = url.range(of: "://") else {
            throw ImageCoreError(.invalidURL, subject: url, message: "not an absolute URL (expected http:// or https://)")
        }
        let scheme = url[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw ImageCoreError(.unsupportedScheme, subject: url, message: "scheme '\(scheme)' is not allowed (only http and https)")
        }
        guard !url.contains(where: { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }) else {
            throw ImageCoreError(.invalidURL, subject: url, message: "URL contains white space")
        }
        // A NUL would end the URL libcurl is given early (another host than the one checked), and no URL needs a
        // control character.
        guard !url.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw ImageCoreError(.invalidURL, subject: url.debugDescription, message: "URL contains a control character")
        }
        let rest = url[separator.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.contains("@") else {
            throw ImageCoreError(.invalidURL, subject: url, message: "URLs with credentials are refused")
        }
        var host = Substring(authority)
        var port = scheme == "https" ? 443 : 80
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else {
                throw ImageCoreError(.invalidURL, subject: url, message: "unterminated IPv6 address")
            }
            let after = host[host.index(after: close)...]
            if after.hasPrefix(":") { port = Int(after.dropFirst()) ?? -1 }
            host = host[...close]
        } else if let colon = host.lastIndex(of: ":") {
            port = Int(host[host.index(after: colon)...]) ?? -1
            host = host[..<colon]
        }
        guard !host.isEmpty else { throw ImageCoreError(.invalidURL, subject: url, message: "URL has no host") }
        guard (1...65535).contains(port) else { throw ImageCoreError(.invalidURL, subject: url, message: "invalid port") }
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port
    }
}

extension RequestURL {
    /// Whether `text` starts with `http://` or `https://`, in any case: the schemes the engine fetches.
    public static func isHTTP(_ text: some StringProtocol) -> Bool {
        let start = text.prefix(8).lowercased()
        return start.hasPrefix("http://") || start.hasPrefix("https://")
    }
}

/// How a URL writes a host and a port: the one place an address becomes the authority of a URL that is printed or
/// sent.
public enum URLAuthority {
    /// `host:port`, with an IPv6 literal in brackets as RFC 3986 writes it (`[::1]:8080`; `127.0.0.1:8080`,
    /// `example.com:80`). A host already in brackets is kept as it is.
    public static func string(host: String, port: Int) -> String {
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(bracketed):\(port)"
    }
}
