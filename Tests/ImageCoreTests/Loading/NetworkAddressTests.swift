import Foundation
import ImageCore
import Testing
import TestSupport
import TileCacheOrigin

/// The rule behind refusing sources on the network behind the service: which addresses a public fetcher may connect
/// to, checked address by address against Python's ipaddress module.
@Suite("NetworkAddress", .timeLimit(.minutes(5)))
struct NetworkAddressTests {
    @Test("parses dotted quads and IPv6 (brackets allowed); refuses names and other IPv4 spellings")
    func parsing() {
        #expect(NetworkAddress("127.0.0.1") == .ipv4(0x7F00_0001))
        #expect(NetworkAddress("[::1]") == .ipv6(0, 1))
        #expect(NetworkAddress("::ffff:10.0.0.1") == .ipv6(0, 0xFFFF_0A00_0001))
        for text in ["localhost", "2130706433", "0x7f.0.0.1", "0177.0.0.1", "127.1", "1.2.3.4.5", "", "[::1", "::g"] {
            #expect(NetworkAddress(text) == nil, "\(text)")
        }
    }

    @Test("the addresses an attacker aims at are refused with their reason; public ones are not",
          arguments: [
              ("169.254.169.254", NetworkAddress.Restriction.linkLocal), ("127.0.0.1", .loopback), ("127.255.255.254", .loopback),
              ("0.0.0.0", .unspecified), ("10.1.2.3", .private), ("172.31.255.255", .private), ("192.168.0.1", .private),
              ("100.64.0.1", .sharedAddressSpace), ("224.0.0.1", .multicast), ("255.255.255.255", .reserved),
              ("198.18.0.1", .reserved), ("240.0.0.1", .reserved), ("::", .unspecified), ("::1", .loopback),
              ("::ffff:127.0.0.1", .loopback), ("::ffff:169.254.169.254", .linkLocal), ("::ffff:8.8.8.8", .reserved),
              ("64:ff9b::a9fe:a9fe", .linkLocal), ("2002:7f00:1::", .loopback), ("2001::1", .reserved),
              ("fd00::1", .private), ("fe80::1", .linkLocal), ("ff02::1", .multicast), ("fec0::1", .private),
              ("2001:db8::1", .reserved), ("fe80::5efe:a00:1", .linkLocal), ("2001:4860::5efe:a00:1", .private),
          ])
    func refused(text: String, restriction: NetworkAddress.Restriction) throws {
        #expect(try #require(NetworkAddress(text)).restriction == restriction)
    }

    @Test("public addresses pass", arguments: ["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111",
                                              "64:ff9b::808:808", "2002:808:808::1", "2a00:1450:4001::200e"])
    func allowed(text: String) throws {
        #expect(try #require(NetworkAddress(text)).restriction == nil)
    }

    @Test("agrees with Python's ipaddress on 20,000 seeded addresses in and around every special block")
    func agreesWithPython() async throws {
        var random = SplitMix64(seed: 0x5EED_ADD2)
        func v4(_ value: UInt32) -> String { "\(value >> 24).\(value >> 16 & 255).\(value >> 8 & 255).\(value & 255)" }
        func v6(_ high: UInt64, _ low: UInt64) -> String {
            (0..<8).map { String((($0 < 4 ? high : low) >> (48 - 16 * UInt64($0 % 4))) & 0xFFFF, radix: 16) }.joined(separator: ":")
        }
        // Blocks and their edges: addresses inside, at both ends and one past each end.
        let v4Blocks: [(UInt32, Int)] = [(0, 8), (0x0A00_0000, 8), (0x6440_0000, 10), (0x7F00_0000, 8), (0xA9FE_0000, 16),
                                         (0xAC10_0000, 12), (0xC000_0000, 24), (0xC000_0200, 24), (0xC058_6300, 24),
                                         (0xC0A8_0000, 16), (0xC612_0000, 15), (0xC633_6400, 24), (0xCB00_7100, 24),
                                         (0xE000_0000, 4), (0xF000_0000, 4)]
        var v4Samples: [UInt32] = [0xFFFF_FFFF]
        for (prefix, length) in v4Blocks {
            let size = UInt64(1) << (32 - length)
            let last = UInt32(UInt64(prefix) + size - 1)
            v4Samples += [prefix, last, prefix &- 1, last &+ 1]
            v4Samples += (0..<200).map { _ in prefix + UInt32(UInt64.random(in: 0..<size, using: &random)) }
        }
        v4Samples += (0..<4000).map { _ in UInt32.random(in: .min ... .max, using: &random) }
        var texts = v4Samples.map(v4)
        let v6Prefixes: [(UInt64, Int)] = [(0x0100_0000_0000_0000, 64), (0x2001_0DB8_0000_0000, 32), (0x2001_0000_0000_0000, 23),
                                           (0x3FFF_0000_0000_0000, 20), (0x5F00_0000_0000_0000, 16), (0xFC00_0000_0000_0000, 7),
                                           (0xFE80_0000_0000_0000, 10), (0xFEC0_0000_0000_0000, 10), (0xFF00_0000_0000_0000, 8),
                                           (0x0064_FF9B_0001_0000, 48), (0x2000_0000_0000_0000, 3)]
        for (prefix, length) in v6Prefixes {
            for _ in 0..<300 {
                let high = prefix | (UInt64.random(in: .min ... .max, using: &random) >> length)
                texts.append(v6(high, UInt64.random(in: .min ... .max, using: &random)))
            }
        }
        // IPv4 addresses wrapped in IPv6: mapped, compatible, NAT64, 6to4, Teredo, ISATAP.
        for value in v4Samples.prefix(6000).enumerated().filter({ $0.offset % 3 == 0 }).map(\.element) {
            let inner = UInt64(value)
            texts += [v6(0, 0xFFFF_0000_0000 | inner), v6(0, inner), v6(0x0064_FF9B_0000_0000, inner),
                      v6(0x2002_0000_0000_0000 | inner << 16, 1), v6(0x2001_0000_0000_0000, ~inner & 0xFFFF_FFFF),
                      v6(0x2600_0000_0000_0000, 0x0000_5EFE_0000_0000 | inner)]
        }
        try await withTemporaryDirectory { directory in
            try texts.joined(separator: "\n").write(toFile: directory + "/addresses", atomically: true, encoding: .utf8)
            try await runPythonClient("address_oracle.py", [directory + "/addresses", directory + "/out"])
            let verdicts = try String(contentsOfFile: directory + "/out", encoding: .utf8).split(separator: "\n")
            #expect(verdicts.count == texts.count)
            var disagreements: [String] = []
            for (text, verdict) in zip(texts, verdicts) {
                let ours = try #require(NetworkAddress(text), "\(text)").restriction == nil ? "public" : "restricted"
                if ours != verdict { disagreements.append("\(text): ours \(ours), Python \(verdict)") }
            }
            #expect(disagreements.isEmpty, "\(disagreements.count) of \(texts.count): \(disagreements.prefix(10))")
            #expect(texts.count > 20_000)
        }
    }
}
