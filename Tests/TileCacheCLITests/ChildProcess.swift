import Foundation
import NIOConcurrencyHelpers
import Testing
import TileCacheFixtures

#if canImport(Glibc)
import Glibc
#endif

/// The real `tilecache` binary run as a child process: for what needs a process of its own (signals, environment
/// variables, exit codes as the shell sees them).
final class ChildProcess: Sendable {
    /// The `tilecache` executable SwiftPM built beside this test bundle.
    static var binary: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("tilecache").path
    }

    private let process: Process
    private let output = NIOLockedValueBox<(out: Data, err: Data)>((Data(), Data()))

    /// Starts `tilecache arguments...`, with `environment` added to this process's.
    init(_ arguments: [String], environment: [String: String] = [:], directory: String? = nil) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            throw TestFailure("no tilecache binary at \(Self.binary): build it first (swift build --product tilecache)")
        }
        process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        let output = self.output
        out.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            output.withLockedValue { $0.out.append(data) }
        }
        err.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            output.withLockedValue { $0.err.append(data) }
        }
        try process.run()
    }

    /// Sends `signal` to the process.
    func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Waits for the exit, up to `timeout`; returns the exit code (128 + the signal when a signal ended it).
    func wait(timeout: Duration = TestTime.scaled(.seconds(60))) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                process.terminate()
                throw TestFailure("tilecache \(process.arguments ?? []) did not exit within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: .milliseconds(50))  // the pipes' last bytes
        return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
    }

    /// What it wrote to stdout so far.
    var out: String { String(decoding: output.withLockedValue { $0.out }, as: UTF8.self) }
    /// What it wrote to stderr so far.
    var err: String { String(decoding: output.withLockedValue { $0.err }, as: UTF8.self) }

    /// Runs `tilecache arguments...` to the end: exit code, stdout, stderr.
    static func run(_ arguments: [String], environment: [String: String] = [:], directory: String? = nil) async throws
        -> (code: Int32, out: String, err: String) {
        let child = try ChildProcess(arguments, environment: environment, directory: directory)
        let code = try await child.wait()
        return (code, child.out, child.err)
    }
}

/// A test that cannot go on, with why.
struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
