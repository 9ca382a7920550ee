import Foundation
import ImageCore
import Testing
import TestSupport
import TileCacheOrigin

#if canImport(Glibc)
import Glibc
#endif

/// What `tilecache serve` says about where it listens, why it cannot start, and that it stops: in words a person can
/// act on, never a Swift type's description.
@Suite("serve's messages", .timeLimit(.minutes(5)), .heavy)
struct ServeMessagesTests {
    @Test("an IPv6 host is printed in brackets, and SIGTERM is answered with 'shutting down' and 'stopped' in the log")
    func ipv6AndShutdown() async throws {
        try await withTemporaryDirectory { directory in
            let child = try ChildProcess(["serve", "--host", "::1", "--port", "0", "--cache-dir", directory + "/cache"])
            let out = try await child.waitForOutput(containing: "serving on http://[::1]:")
            let port = try #require(out.split(separator: "]:").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) })
            let health = try await TransferEngine().perform(TransferRequest(url: "http://[::1]:\(port)/healthz"))
            #expect(health.status == 200, "the printed URL works")
            child.send(SIGTERM)
            #expect(try await child.wait() == 0)
            #expect(child.err.contains("shutting down: finishing the requests in flight"), "\(child.err)")
            #expect(child.err.split(separator: "\n").last?.hasSuffix("stopped") == true, "\(child.err)")
        }
    }

    @Test("a --host that is no address and does not resolve is named, with what to give instead")
    func unknownHost() async throws {
        try await withTemporaryDirectory { directory in
            let run = await tilecache("serve", "--host", "999.1.1.1", "--port", "0", "--cache-dir", directory + "/cache")
            #expect(run.code == 1)
            #expect(run.err.contains("cannot listen on 999.1.1.1:0: '999.1.1.1' is neither an IP address nor a host name that resolves"),
                    "\(run.err)")
            #expect(!run.err.contains("SocketAddressError"), "\(run.err)")
        }
    }

    @Test("a PostgreSQL that refuses the connection is named with the address and the system's reason")
    func databaseRefused() async throws {
        try await withTemporaryDirectory { directory in
            // A port nothing listens on: bound, then closed.
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")),
                                      sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let port = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw -> Int in
                    guard bind(socket, raw, length) == 0, getsockname(socket, raw, &length) == 0 else { return 0 }
                    return Int(UInt16(bigEndian: pointer.pointee.sin_port))
                }
            }
            close(socket)
            try #require(port > 0)
            let url = "postgres://tilecache:secret@127.0.0.1:\(port)/tilecache?sslmode=disable"
            let run = await tilecache("serve", "--port", "0", "--cache-dir", directory + "/cache", "--db", url)
            #expect(run.code == 1)
            #expect(run.err.contains("cannot open the favourites database postgres://tilecache:***@127.0.0.1:\(port)/tilecache: "
                                     + "127.0.0.1:\(port): Connection refused"), "\(run.err)")
            #expect(!run.err.contains("SingleConnectionFailure") && !run.err.contains("secret"), "\(run.err)")
        }
    }

    @Test("one-character paths (--cache-dir c, --db f) start the service: Foundation's deletingLastPathComponent crashed on them")
    func oneCharacterPaths() async throws {
        try await withTemporaryDirectory { directory in
            for arguments in [["--cache-dir", "c"], ["--cache-dir", "c", "--db", "f"]] {
                let child = try ChildProcess(["serve", "--port", "0"] + arguments, directory: directory)
                _ = try await child.waitForOutput(containing: "serving on http://127.0.0.1:")
                child.send(SIGTERM)
                #expect(try await child.wait() == 0, "\(arguments): \(child.err)")
            }
            #expect(FileManager.default.fileExists(atPath: directory + "/favorites.sqlite"))
            #expect(FileManager.default.fileExists(atPath: directory + "/f"))
        }
    }

    @Test("SIGTERM with a request in flight: 'shutting down' is logged at once, the request still completes, then 'stopped'")
    func shutdownNoticeComesFirst() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin({ $0.latency = TestTime.scaled(.milliseconds(1500)) }) { origin in
                let child = try ChildProcess(["serve", "--port", "0", "--cache-dir", directory + "/cache", "-v",
                                              "--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase])
                let out = try await child.waitForOutput(containing: "serving on http://127.0.0.1:")
                let port = try #require(out.split(separator: ":").dropFirst(2).first.flatMap { Int($0.prefix { $0.isNumber }) })
                let request = Task { try await TransferEngine().perform(TransferRequest(url: "http://127.0.0.1:\(port)/api/v1/elements/26/thumbnail")) }
                try await waitUntil("the request reaching the origin", within: .seconds(30)) { origin.statistics.requests >= 1 }
                child.send(SIGTERM)
                #expect(try await request.value.status == 200, "the request in flight completes")
                #expect(try await child.wait() == 0)
                let lines = child.err.split(separator: "\n").map(String.init)
                let notice = lines.firstIndex { $0.contains("shutting down: finishing the requests in flight") }
                let served = lines.firstIndex { $0.contains("/api/v1/elements/26/thumbnail") }
                let stopped = lines.firstIndex { $0.hasSuffix("stopped") }
                #expect(notice != nil && served != nil && stopped != nil, "\(child.err)")
                if let notice, let served, let stopped { #expect(notice < served && served < stopped, "\(child.err)") }
            }
        }
    }

    @Test("HTTPS: SIGTERM with HTTP/2 requests waiting on the origin (curl, and hyper-h2 with its 64 KiB window): every answer whole, then exit 0")
    func http2Shutdown() async throws {
        try await runProcess([ScriptServer.packageRoot + "/scripts/check-envs.sh", "h2"], description: "scripts/check-envs.sh h2")
        try await withTemporaryDirectory { directory in
            let tls = try await makeSelfSignedCertificate(in: directory)
            try await withOrigin({ $0.latency = TestTime.scaled(.milliseconds(1500)) }) { origin in
                let child = try ChildProcess(["serve", "--port", "0", "--cache-dir", directory + "/cache", "--tls-cert", tls.certificate,
                                              "--tls-key", tls.key, "--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase])
                let out = try await child.waitForOutput(containing: "serving on https://127.0.0.1:")
                let port = try #require(out.split(separator: "127.0.0.1:").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) })
                // On each connection a thumbnail and a photo, larger than HTTP/2's initial 64 KiB window, which hyper-h2
                // keeps: Hummingbird's own HTTP/2 server lost curl's photo at shutdown, and each stream's connection state
                // handler closed a stream whose answer was written but not yet let out by the window, cutting it.
                let urls = ["/api/v1/elements/5/thumbnail", "/api/v1/elements/6/image"].map { "https://127.0.0.1:\(port)\($0)" }
                let curl = Task {
                    try await runProcess(["/bin/sh", "-c", "curl -sS --max-time 60 --cacert \(tls.certificate) --http2 --parallel"
                                          + " -w '%{http_code} %{size_download} %{http_version}\\n' -o \(directory)/a -o \(directory)/b"
                                          + " \(urls.joined(separator: " ")) > \(directory)/curl.out"], description: "curl --http2 --parallel")
                }
                let h2 = Task {
                    try await runProcess([ScriptServer.packageRoot + "/.build/h2-venv/bin/python", ScriptServer.packageRoot + "/Tests/Clients/h2_client.py",
                                          "\(port)", tls.certificate, directory + "/h2.json", "GET /api/v1/elements/7/thumbnail",
                                          "GET /api/v1/elements/8/image"], description: "Tests/Clients/h2_client.py")
                }
                try await waitUntil("the four requests reaching the origin", within: .seconds(30)) { origin.statistics.requests >= 4 }
                child.send(SIGTERM)
                try await curl.value
                try await h2.value
                let answers = try String(contentsOfFile: directory + "/curl.out", encoding: .utf8).split(separator: "\n")
                let sizes = try [directory + "/a", directory + "/b"].map { try FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int ?? 0 }
                #expect(answers.count == 2 && answers.allSatisfy { $0.hasPrefix("200 ") && $0.hasSuffix(" 2") }, "\(answers)")
                #expect(sizes.min() ?? 0 > 0 && sizes.max() ?? 0 > 65_536, "\(sizes)")
                struct Run: Decodable {
                    struct Answer: Decodable {
                        let status: Int?
                        let length: Int
                        let contentLength: Int?
                        let ended: Bool
                    }
                    let answers: [Answer]
                    let closed: Bool
                }
                let run = try JSONDecoder().decode(Run.self, from: Data(contentsOf: URL(fileURLWithPath: directory + "/h2.json")))
                #expect(run.closed && run.answers.count == 2, "\(run)")
                for answer in run.answers {
                    #expect(answer.status == 200 && answer.ended && answer.length == answer.contentLength, "\(answer)")
                }
                #expect(run.answers.map(\.length).max() ?? 0 > 65_536, "\(run.answers.map(\.length))")
                #expect(try await child.wait() == 0)
            }
        }
    }

    @Test("secrets from a file: --config's write-token and signing-key take effect, and the process's command line shows neither")
    func secretsFromAFile() async throws {
        try await withTemporaryDirectory { directory in
            let secrets = directory + "/secrets.yaml"
            try "serve:\n  write-token: s3cret-from-file\n  signing-key: \"00112233445566778899aabbccddeeff\"\n"
                .write(toFile: secrets, atomically: true, encoding: .utf8)
            let child = try ChildProcess(["serve", "--config", secrets, "--port", "0", "--cache-dir", directory + "/cache"])
            let out = try await child.waitForOutput(containing: "serving on http://127.0.0.1:")
            let port = try #require(out.split(separator: "127.0.0.1:").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) })
            let commandLine = try #require(FileManager.default.contents(atPath: "/proc/\(child.processID)/cmdline"))
            let shown = String(decoding: commandLine, as: UTF8.self)
            #expect(shown.contains("secrets.yaml") && !shown.contains("s3cret") && !shown.contains("00112233"), "\(shown)")
            var delete = TransferRequest(url: "http://127.0.0.1:\(port)/api/v1/favorites/1")
            delete.method = .delete
            #expect(try await TransferEngine().perform(delete).status == 401, "the file's write token protects writes")
            delete.headers = [.init("Authorization", "Bearer s3cret-from-file")]
            #expect(try await TransferEngine().perform(delete).status == 404, "the file's token is accepted (no favourite 1)")
            let variant = try await TransferEngine().perform(TransferRequest(url: "http://127.0.0.1:\(port)/api/v1/elements/26/thumbnail?w=64"))
            #expect(variant.status == 403, "the file's signing key makes signatures required")
            child.send(SIGTERM)
            #expect(try await child.wait() == 0)
        }
    }
}
