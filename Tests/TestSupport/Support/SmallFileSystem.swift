import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small tmpfs mounted on a fresh directory: a real file system that fills up, or turns read-only, on demand.
///
/// Mounting needs root with CAP_SYS_ADMIN (as in the project's containers); tests that use it are enabled only
/// where `canMount` is true.
public enum SmallFileSystem {
    /// Whether this process may mount a tmpfs (tried once, on a scratch directory).
    public static let canMount: Bool = {
        let path = NSTemporaryDirectory() + "tilecache-mount-probe-" + UUID().uuidString
        guard (try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)) != nil else { return false }
        defer { try? FileManager.default.removeItem(atPath: path) }
        guard mount("tmpfs", path, "tmpfs", 0, "size=16k") == 0 else { return false }
        umount2(path, Int32(MNT_DETACH))
        return true
    }()

    /// A mount that failed, and why.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs `body` with a tmpfs of `kilobytes` mounted on a fresh directory, unmounted and removed afterwards.
    public static func with<T>(kilobytes: Int, _ body: (String) async throws -> T) async throws -> T {
        try await withTemporaryDirectory { path in
            guard mount("tmpfs", path, "tmpfs", 0, "size=\(kilobytes)k") == 0 else {
                throw Failure(description: "cannot mount a tmpfs on \(path): \(String(cString: strerror(errno)))")
            }
            defer { umount2(path, Int32(MNT_DETACH)) }
            return try await body(path)
        }
    }

    /// Remounts the tmpfs at `path` with a new size, read-only or read-write.
    public static func remount(_ path: String, kilobytes: Int, readOnly: Bool) throws {
        let flags = UInt(MS_REMOUNT) | (readOnly ? UInt(MS_RDONLY) : 0)
        guard mount("tmpfs", path, "tmpfs", flags, "size=\(kilobytes)k") == 0 else {
            throw Failure(description: "cannot remount \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Mounts `path` read-only over itself (a bind mount) and runs `body`, then unmounts it: the directory turns
    /// read-only while files elsewhere on the file system (a database a process holds open for writing, which keeps
    /// the whole file system from being remounted read-only) stay writable.
    public static func withReadOnly<T>(_ path: String, _ body: () async throws -> T) async throws -> T {
        guard mount(path, path, nil, UInt(MS_BIND), nil) == 0 else {
            throw Failure(description: "cannot bind-mount \(path): \(String(cString: strerror(errno)))")
        }
        defer { umount2(path, Int32(MNT_DETACH)) }
        guard mount(nil, path, nil, UInt(MS_REMOUNT) | UInt(MS_BIND) | UInt(MS_RDONLY), nil) == 0 else {
            throw Failure(description: "cannot make \(path) read-only: \(String(cString: strerror(errno)))")
        }
        return try await body()
    }
}
