#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// The proxies whose `X-Forwarded-Host` and `X-Forwarded-Proto` the service believes (`--trusted-proxies`): addresses
/// or CIDR blocks, IPv4 or IPv6. From any other peer those headers are removed before a request reaches the router,
/// so a client cannot steer the JSON's absolute URLs (behind a shared cache, one request with a forged host would set
/// them for every client).
public struct TrustedProxies: Sendable, Equatable, CustomStringConvertible {
    /// One block: the address's bytes (4 or 16) and how many leading bits must match.
    struct Block: Sendable, Equatable {
        let bytes: [UInt8]
        let prefix: Int
    }

    let blocks: [Block]
    public let description: String

    /// No proxy is trusted.
    public static let none = TrustedProxies(blocks: [], description: "none")

    private init(blocks: [Block], description: String) {
        self.blocks = blocks
        self.description = description
    }

    /// Reads `10.0.0.0/8,127.0.0.1,::1,fd00::/8`: comma-separated addresses, each with an optional prefix length.
    ///
    /// - Throws: `ServiceConfigurationError` naming the entry that is not an address or block.
    public init(parsing text: String) throws(ServiceConfigurationError) {
        var blocks: [Block] = []
        for entry in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            let parts = entry.split(separator: "/", maxSplits: 1).map(String.init)
            guard let bytes = Self.bytes(of: parts[0]) else {
                throw ServiceConfigurationError("--trusted-proxies: '\(entry)' is not an IP address or CIDR block (10.0.0.0/8, 127.0.0.1, ::1)")
            }
            let prefix = parts.count == 2 ? Int(parts[1]) : bytes.count * 8
            guard let prefix, (0...(bytes.count * 8)).contains(prefix) else {
                throw ServiceConfigurationError("--trusted-proxies: '\(entry)' has a prefix length outside 0...\(bytes.count * 8)")
            }
            blocks.append(Block(bytes: bytes, prefix: prefix))
        }
        self.init(blocks: blocks, description: blocks.isEmpty ? "none" : text)
    }

    /// Whether no proxy is trusted.
    public var isEmpty: Bool { blocks.isEmpty }

    /// Whether `address` (an IP address as text) is in one of the blocks.
    func contains(_ address: String?) -> Bool {
        guard !blocks.isEmpty, let address, var bytes = Self.bytes(of: address) else { return false }
        // An IPv4 peer on a dual-stack socket appears as ::ffff:a.b.c.d.
        if bytes.count == 16, bytes.prefix(12) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] { bytes = Array(bytes.suffix(4)) }
        return blocks.contains { block in
            guard block.bytes.count == bytes.count else { return false }
            var left = block.prefix
            for (a, b) in zip(block.bytes, bytes) where left > 0 {
                let mask: UInt8 = left >= 8 ? 0xFF : ~(0xFF >> UInt8(left))
                if a & mask != b & mask { return false }
                left -= 8
            }
            return true
        }
    }

    /// The 4 or 16 bytes of an IPv4 or IPv6 address, by `inet_pton`; nil when it is neither.
    static func bytes(of text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}

/// Removes `X-Forwarded-Host`, `X-Forwarded-Proto` and `Forwarded` from requests whose peer is not a trusted proxy.
/// Sits after the HTTP codec, on every connection and HTTP/2 stream.
final class ForwardedHeaders: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    static let names: [HTTPField.Name] = [.forwardedHost, .forwardedProto, HTTPField.Name("Forwarded")!]

    private let proxies: TrustedProxies
    /// Whether this connection's peer is trusted, decided on its first request.
    private var trusted: Bool?

    init(proxies: TrustedProxies) { self.proxies = proxies }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var request) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        let trusted = self.trusted ?? {
            let decided = proxies.contains(context.channel.remoteAddress?.ipAddress)
            self.trusted = decided
            return decided
        }()
        guard !trusted, Self.names.contains(where: { request.headerFields[$0] != nil }) else {
            context.fireChannelRead(data)
            return
        }
        for name in Self.names { request.headerFields[name] = nil }
        context.fireChannelRead(wrapInboundOut(.head(request)))
    }
}

extension HTTPField.Name {
    static let forwardedHost = HTTPField.Name("X-Forwarded-Host")!
    static let forwardedProto = HTTPField.Name("X-Forwarded-Proto")!
}
