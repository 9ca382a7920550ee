import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite("Test support: child processes", .timeLimit(.minutes(5)), .heavy)
struct SpawnTests {
    @Test("a child gets none of the test process's descriptors: a socket closed here reads as closed at once while the child runs")
    func noInheritedDescriptors() async throws {
        // A connected pair without close-on-exec, as SwiftNIO's accepted connections are.
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0, "socketpair: \(String(cString: strerror(errno)))")
        defer { close(pair[1]) }
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let child = try spawnProcess(["/bin/sleep", "30"], stdout: directory + "/out", stderr: directory + "/err")
        defer {
            kill(child, SIGKILL)
            var status: Int32 = 0
            waitpid(child, &status, 0)
        }
        close(pair[0])
        // Had the child inherited pair[0], the peer would see no end of stream until the child exited.
        var peer = pollfd(fd: pair[1], events: Int16(POLLIN), revents: 0)
        let ready = poll(&peer, 1, 5_000)
        #expect(ready == 1, "the peer saw no end of stream within 5 s")
        var byte: UInt8 = 0
        if ready == 1 { #expect(read(pair[1], &byte, 1) == 0, "end of stream") }
    }
}
