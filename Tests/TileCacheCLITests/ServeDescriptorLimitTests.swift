import Foundation
import ImageCore
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `tilecache serve` under a low descriptor limit (issue 31): with `ulimit -n 128`, 110 clients that pipeline
/// requests and read no answers made `/healthz` time out while an event-loop thread spun a core on a failing `accept`,
/// until the clients left. Any 110 connections held open do the same.
@Suite("serve: descriptor limit", .timeLimit(.minutes(5)), .heavy)
struct ServeDescriptorLimitTests {
    @Test("ulimit -n 128 and 110 clients that never finish a request or never read: /healthz answers, no thread spins, connections are shed before descriptors run out")
    func descriptorExhaustion() async throws {
        try await withTemporaryDirectory { directory in
            let child = try ChildProcess(["serve", "--port", "0", "--cache-dir", directory + "/cache", "--db", directory + "/favorites.sqlite"],
                                         wrappedIn: ["/bin/sh", "-c", "ulimit -n 128 && exec \"$@\"", "sh"])
            var exited = false
            defer { if !exited { child.send(SIGKILL) } }
            let out = try await child.waitForOutput(containing: "serving on http://127.0.0.1:")
            let port = try #require(out.split(separator: "127.0.0.1:").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) })

            // Ten clients pipeline requests for a static file and read none of the answers (each has megabytes made
            // for it before it stalls: the kernel's send buffer grows to 4 MiB); a hundred send half a request head.
            let pipelined = Array(String(repeating: "GET /openapi.yaml HTTP/1.1\r\nHost: t\r\n\r\n", count: 300).utf8)
            let halfHead = Array("GET /healthz HTTP/1.1\r\nHost: t\r\n".utf8)
            var clients: [Int32] = []
            defer { for client in clients { close(client) } }
            for index in 0..<110 {
                let client = try Self.connect(port: port)
                clients.append(client)
                _ = (index < 10 ? pipelined : halfHead).withUnsafeBytes {
                    send(client, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                }
            }

            // Within 10 s: the half heads are closed by the idle timeout at 30 s, which would free descriptors anyway.
            let probe: @Sendable () async throws -> TransferResponse = {
                try await TransferEngine().perform(TransferRequest(url: "http://127.0.0.1:\(port)/healthz"))
            }
            let healthz = try await Deadline.first(of: probe, orThrow: { TestFailure("/healthz did not answer within 10 s") },
                                                   at: .now + TestTime.scaled(.seconds(10)))
            #expect(healthz.status == 200, "/healthz answers while 110 clients hold connections")

            // Quiet once every admitted client has stalled: a window of a second with little CPU. A thread retrying a
            // failing accept never gives one.
            let deadline = ContinuousClock.now + TestTime.scaled(.seconds(30))
            var busiest = 0.0
            while true {
                let before = try Self.cpuSeconds(child.processID)
                try await Task.sleep(for: .seconds(1))
                let used = try Self.cpuSeconds(child.processID) - before
                busiest = max(busiest, used)
                if used < 0.3 { break }
                guard ContinuousClock.now < deadline else {
                    Issue.record("the service used \(used) s of CPU in every second for 30 s with its clients stalled: a thread spins")
                    break
                }
            }
            let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(child.processID)/fd").count
            #expect(descriptors < 128, "descriptors open: \(descriptors) of 128")

            let metrics = try await TransferEngine().perform(TransferRequest(url: "http://127.0.0.1:\(port)/metrics"))
            let text = String(decoding: metrics.body, as: UTF8.self)
            let shed = text.split(separator: "\n").first { $0.hasPrefix("tilecache_http_connections_closed_total{reason=\"shed\"} ") }
            #expect(shed != nil, "connections were shed to make room: \(text.split(separator: "\n").filter { $0.contains("connections") })")

            for client in clients { close(client) }
            clients = []
            child.send(SIGTERM)
            exited = true
            #expect(try await child.wait() == 0, "\(child.err.suffix(2000))")
        }
    }

    /// A blocking TCP connection to 127.0.0.1:`port` with a 4 KiB receive buffer.
    static func connect(port: Int) throws -> Int32 {
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard client >= 0 else { throw TestFailure("socket: errno \(errno)") }
        var size: Int32 = 4096
        guard setsockopt(client, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            close(client)
            throw TestFailure("setsockopt SO_RCVBUF: errno \(errno)")
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(client)
            throw TestFailure("connect to port \(port): errno \(errno)")
        }
        return client
    }

    /// User and system CPU time the process has used, from /proc/PID/stat.
    static func cpuSeconds(_ pid: pid_t) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // Fields after the command's closing parenthesis: state is the first, utime the 12th, stime the 13th.
        let fields = try #require(stat.split(separator: ")").last?.split(separator: " "))
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw TestFailure("unreadable /proc/\(pid)/stat: \(stat)")
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
