import CCurl  // the shim includes <netinet/in.h>, so in_addr's members are seen through it

#if canImport(Glibc)
import Glibc
#endif

/// An IP address a transfer would connect to, and whether a service that fetches URLs its clients name may connect to
/// it: the rule behind refusing sources on the network behind the service (SSRF).
///
/// The ranges are IANA's special-purpose registries for IPv4 and IPv6, plus multicast. An IPv6 address that carries an
/// IPv4 address is judged by it: NAT64 (64:ff9b::/96) and 6to4 (2002::/16) are what they wrap (`64:ff9b::a9fe:a9fe` is
/// link-local), an ISATAP interface identifier wrapping a restricted address is refused; IPv4-mapped, IPv4-compatible
/// and Teredo addresses are refused whatever they wrap (a connection to one is a connection to what it wraps, by a
/// route no public image needs), named by the wrapped address's restriction when it has one. Stricter than imgproxy's
/// defaults, which allow private ranges and leave 198.18.0.0/15, 240.0.0.0/4 and most multicast open.
public enum NetworkAddress: Hashable, Sendable {
    case ipv4(UInt32)
    /// The 16 bytes, in network order.
    case ipv6(UInt64, UInt64)

    /// Why an address is not one a public service may fetch from.
    public enum Restriction: String, Sendable, CaseIterable {
        case unspecified
        case loopback
        /// RFC 1918, unique local (fc00::/7), site-local (fec0::/10).
        case `private`
        /// 100.64.0.0/10: carrier-grade NAT.
        case sharedAddressSpace = "shared-address-space"
        /// 169.254.0.0/16 (cloud metadata services live there) and fe80::/10.
        case linkLocal = "link-local"
        case multicast
        /// Documentation, benchmarking, protocol assignments, reserved and broadcast blocks, discard-only and other
        /// special-purpose blocks no public image lives on.
        case reserved
    }

    /// Parses an IPv4 dotted quad (four decimal parts, as `inet_pton` reads it: no octal, hex or shortened forms) or
    /// an IPv6 address (brackets allowed); nil for anything else, a host name included.
    public init?(_ text: String) {
        var text = Substring(text)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        var v4 = in_addr()
        if inet_pton(AF_INET, String(text), &v4) == 1 {
            self = .ipv4(UInt32(bigEndian: v4.s_addr))
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, String(text), &v6) == 1 else { return nil }
        self.init(ipv6Bytes: withUnsafeBytes(of: &v6) { Array($0) })
    }

    /// The address of 16 bytes in network order (`in6_addr`'s).
    public init(ipv6Bytes bytes: [UInt8]) {
        precondition(bytes.count == 16, "an IPv6 address has 16 bytes")
        let high = bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let low = bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        self = .ipv6(high, low)
    }

    /// The address as `inet_ntop` writes it (`10.0.0.1`, `::ffff:7f00:1`).
    public var text: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let written: UnsafePointer<CChar>? = switch self {
        case .ipv4(let address):
            withUnsafeBytes(of: address.bigEndian) { inet_ntop(AF_INET, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        case .ipv6(let high, let low):
            withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { inet_ntop(AF_INET6, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        }
        // inet_ntop fails only for an unknown family or a buffer too small, neither possible here.
        guard written != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Why a public service must not connect here; nil for an address on the public internet.
    public var restriction: Restriction? {
        switch self {
        case .ipv4(let address): Self.restriction(ipv4: address)
        case .ipv6(let high, let low): Self.restriction(ipv6High: high, low: low)
        }
    }

    // MARK: - IPv4

    /// The special-purpose IPv4 blocks, most specific first where they overlap.
    private static let ipv4Blocks: [(prefix: UInt32, length: Int, restriction: Restriction)] = [
        (0x0000_0000, 32, .unspecified),  // 0.0.0.0
        (0x0000_0000, 8, .reserved),  // "this network"
        (0x0A00_0000, 8, .private),  // 10/8
        (0x6440_0000, 10, .sharedAddressSpace),  // 100.64/10
        (0x7F00_0000, 8, .loopback),  // 127/8
        (0xA9FE_0000, 16, .linkLocal),  // 169.254/16
        (0xAC10_0000, 12, .private),  // 172.16/12
        (0xC000_0000, 24, .reserved),  // 192.0.0/24: IETF protocol assignments
        (0xC000_0200, 24, .reserved),  // 192.0.2/24: TEST-NET-1
        (0xC058_6300, 24, .reserved),  // 192.88.99/24: 6to4 relay anycast (deprecated)
        (0xC0A8_0000, 16, .private),  // 192.168/16
        (0xC612_0000, 15, .reserved),  // 198.18/15: benchmarking
        (0xC633_6400, 24, .reserved),  // 198.51.100/24: TEST-NET-2
        (0xCB00_7100, 24, .reserved),  // 203.0.113/24: TEST-NET-3
        (0xE000_0000, 4, .multicast),  // 224/4
        (0xFFFF_FFFF, 32, .reserved),  // limited broadcast
        (0xF000_0000, 4, .reserved),  // 240/4
    ]

    static func restriction(ipv4 address: UInt32) -> Restriction? {
        ipv4Blocks.first { block in
            block.length == 0 || address >> (32 - block.length) == block.prefix >> (32 - block.length)
        }?.restriction
    }

    // MARK: - IPv6

    /// The special-purpose IPv6 blocks that carry no IPv4 address, by their first 64 bits; most specific first.
    private static let ipv6Blocks: [(prefix: UInt64, length: Int, restriction: Restriction)] = [
        (0x0100_0000_0000_0000, 64, .reserved),  // 100::/64: discard-only
        (0x2001_0DB8_0000_0000, 32, .reserved),  // 2001:db8::/32: documentation
        (0x2001_0000_0000_0000, 23, .reserved),  // 2001::/23: IETF protocol assignments (Teredo handled before)
        (0x3FFF_0000_0000_0000, 20, .reserved),  // 3fff::/20: documentation
        (0x5F00_0000_0000_0000, 16, .reserved),  // 5f00::/16: segment routing SIDs
        (0xFC00_0000_0000_0000, 7, .private),  // fc00::/7: unique local
        (0xFE80_0000_0000_0000, 10, .linkLocal),  // fe80::/10
        (0xFEC0_0000_0000_0000, 10, .private),  // fec0::/10: site-local (deprecated)
        (0xFF00_0000_0000_0000, 8, .multicast),  // ff00::/8
    ]

    static func restriction(ipv6High high: UInt64, low: UInt64) -> Restriction? {
        if high == 0 {
            if low == 0 { return .unspecified }  // ::
            if low == 1 { return .loopback }  // ::1
            if low >> 32 == 0xFFFF { return restriction(ipv4: UInt32(truncatingIfNeeded: low)) ?? .reserved }  // ::ffff:a.b.c.d
            if low >> 32 == 0 { return restriction(ipv4: UInt32(truncatingIfNeeded: low)) ?? .reserved }  // ::a.b.c.d (deprecated)
            return .reserved  // the rest of ::/64
        }
        if high == 0x0064_FF9B_0000_0000, low >> 32 == 0 { return restriction(ipv4: UInt32(truncatingIfNeeded: low)) }  // 64:ff9b::/96
        if high >> 16 == 0x0064_FF9B_0001 { return .reserved }  // 64:ff9b:1::/48: local-use NAT64
        if high >> 48 == 0x2002 {  // 6to4: 2002:aabb:ccdd::/48 carries aa.bb.cc.dd
            return restriction(ipv4: UInt32(truncatingIfNeeded: high >> 16))
        }
        if high >> 32 == 0x2001_0000 {  // Teredo: the client's address is the last 32 bits, inverted
            return restriction(ipv4: ~UInt32(truncatingIfNeeded: low)) ?? .reserved
        }
        if let block = ipv6Blocks.first(where: { high >> (64 - $0.length) == $0.prefix >> (64 - $0.length) }) { return block.restriction }
        if (low >> 32) & 0xFDFF_FFFF == 0x0000_5EFE {  // ISATAP interface identifier: ::0:5efe:a.b.c.d or ::200:5efe:…
            return restriction(ipv4: UInt32(truncatingIfNeeded: low))
        }
        return nil
    }
}

/// Which IP addresses an engine's transfers may connect to.
public enum AddressRule: Sendable, Hashable {
    /// Any address: URLs the operator chose (the catalogue's hosts, the shared store, a user's own list).
    case any
    /// Only addresses on the public internet (`NetworkAddress.restriction` is nil): URLs a service's clients name.
    ///
    /// Checked on the address libcurl is about to connect to, by its open-socket callback: every address tried, every
    /// new connection, every redirect hop, after libcurl's own DNS lookup (so a name that resolves to a public address
    /// for a check and a private one for the transfer gains nothing). Proxies from the environment are not used (the
    /// check would see the proxy's address). A refusal ends the transfer with `.forbiddenAddress`. Connections are
    /// pooled per engine, so an engine with this rule never reuses a connection another engine opened.
    case publicOnly
}
