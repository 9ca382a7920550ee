import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Local directories made with errors a person can act on ("/dev/null is not a directory"), where Foundation says
/// "The operation could not be completed".
public enum LocalDirectory {
    /// Creates `path` and any missing parents, like `mkdir -p`; an existing directory is fine.
    ///
    /// - Throws: `.io` about `path`, naming the component that failed and why (not a directory, read-only file
    ///   system, permission denied, ...).
    public static func create(_ path: String) throws(ImageCoreError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + component
            var info = stat()
            if stat(prefix, &info) == 0 {
                guard info.st_mode & S_IFMT == S_IFDIR else {
                    throw ImageCoreError(.io, subject: path, message: "\(prefix) is not a directory")
                }
                continue
            }
            guard mkdir(prefix, 0o755) == 0 || errno == EEXIST else {
                throw ImageCoreError(.io, subject: path, message: "cannot create \(prefix): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// The name of a `readdir` entry, read in place up to its NUL: an entry is only as long as its name (`d_reclen`), so
    /// copying the whole 256-byte `d_name` field reads past it (AddressSanitizer: heap-buffer-overflow).
    static func entryName(_ entry: UnsafeMutablePointer<dirent>) -> String {
        let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        return String(cString: UnsafeRawPointer(entry).advanced(by: offset).assumingMemoryBound(to: CChar.self))
    }

    /// Whether the directory at `path` holds a name `predicate` accepts, reading names only until the first such one;
    /// false when it cannot be listed.
    public static func containsName(in path: String, where predicate: (String) -> Bool) -> Bool {
        guard let directory = opendir(path) else { return false }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            if predicate(entryName(entry)) { return true }
        }
        return false
    }

    /// The directory part of `path`: "a/b" gives "a", "/a" gives "/", "a" gives "" (trailing slashes ignored). What
    /// `NSString.deletingLastPathComponent` answers, which crashes on a one-character name ("c") in the Foundation of
    /// Swift 6.3 on Linux.
    public static func parent(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        var parent = trimmed[..<slash]
        while parent.hasSuffix("/") { parent = parent.dropLast() }
        return parent.isEmpty ? "/" : String(parent)
    }

    /// The names in the directory at `path` (not `.` or `..`), in no particular order.
    ///
    /// - Throws: `.io` about `path` with the system's reason.
    public static func names(in path: String) throws(ImageCoreError) -> [String] {
        guard let directory = opendir(path) else {
            throw ImageCoreError(.io, subject: path, message: "cannot list the directory: \(String(cString: strerror(errno)))")
        }
        defer { closedir(directory) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(directory) else {
                guard errno == 0 else {
                    throw ImageCoreError(.io, subject: path, message: "cannot list the directory: \(String(cString: strerror(errno)))")
                }
                return names
            }
            let name = entryName(entry)
            if name != "." && name != ".." { names.append(name) }
        }
    }
}

/// Local files read with errors a person can act on, and without Foundation's `FileManager.contents(atPath:)`, which
/// says only "nil" and leaks a buffer on every empty file (found by LeakSanitizer).
public enum LocalFile {
    /// The whole contents of the file at `path` (symbolic links followed).
    ///
    /// - Throws: `.io` about `path` with the system's reason ("No such file or directory", "Is a directory", ...).
    public static func read(_ path: String) throws(ImageCoreError) -> [UInt8] {
        guard let bytes = try read(path, upTo: .max) else {
            throw ImageCoreError(.io, subject: path, message: String(cString: strerror(ENOENT)))
        }
        return bytes
    }

    /// The bytes of the regular file at `path`, at most `limit` of them: what a document names (`--extract`) is read
    /// this way, so `/dev/zero`, a FIFO (opened without blocking) or a file larger than the limit is refused by name
    /// rather than read forever.
    ///
    /// - Throws: `.io` about `path`: no such file, not a regular file, larger than `limit`, or the system's reason.
    public static func readRegular(_ path: String, atMost limit: Int) throws(ImageCoreError) -> [UInt8] {
        func failure() -> ImageCoreError { ImageCoreError(.io, subject: path, message: String(cString: strerror(errno))) }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw failure() }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw failure() }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw ImageCoreError(.io, subject: path, message: "not a regular file (a directory, device, FIFO or socket): not read")
        }
        guard Int(info.st_size) <= limit else {
            throw ImageCoreError(.io, subject: path, message: "\(info.st_size) bytes, above the limit of \(limit)")
        }
        let bytes = try readAll(descriptor, path: path, size: Int(info.st_size), upTo: limit + 1)
        guard bytes.count <= limit else { throw ImageCoreError(.io, subject: path, message: "grew past the limit of \(limit) bytes while read") }
        return bytes
    }

    /// The first `limit` bytes of the file at `path` (all of it when shorter), or nil when there is no such file: a
    /// cache's way to tell a miss from a failure.
    ///
    /// - Throws: `.io` about `path` with the system's reason for any failure other than "No such file or directory".
    public static func read(_ path: String, upTo limit: Int) throws(ImageCoreError) -> [UInt8]? {
        func failure() -> ImageCoreError { ImageCoreError(.io, subject: path, message: String(cString: strerror(errno))) }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw failure()
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw failure() }
        guard info.st_mode & S_IFMT != S_IFDIR else {
            throw ImageCoreError(.io, subject: path, message: String(cString: strerror(EISDIR)))
        }
        return try readAll(descriptor, path: path, size: Int(info.st_size), upTo: limit)
    }

    /// What a file is read by once it is longer than `fstat` said.
    private static let chunk = 64 * 1024

    /// The first `limit` bytes of the open file `descriptor` (all of it when shorter), whose size is `size`: read into
    /// the array that is returned (room for `size` and one byte more, so that a file as long as `fstat` said is read
    /// whole by one buffer and its end seen without another), then, only for a file that grew since, in chunks appended
    /// to it. A size of 0 may be a file whose size the system does not know (`/proc`, devices, some of which refuse
    /// small reads): its first read has room for a whole chunk.
    private static func readAll(_ descriptor: Int32, path: String, size: Int, upTo limit: Int) throws(ImageCoreError) -> [UInt8] {
        guard limit > 0 else { return [] }
        var failure: Int32 = 0
        var atEnd = false
        let room = size > 0 ? size + 1 : Self.chunk
        var bytes = [UInt8](unsafeUninitializedCapacity: min(limit, room)) { buffer, initialized in
            while initialized < buffer.count {
                let count = Glibc.read(descriptor, buffer.baseAddress! + initialized, buffer.count - initialized)
                if count == 0 { atEnd = true; return }
                if count < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                initialized += count
            }
        }
        if failure != 0 { throw ImageCoreError(.io, subject: path, message: String(cString: strerror(failure))) }
        if atEnd || bytes.count >= limit { return bytes }
        var chunk = [UInt8](repeating: 0, count: min(Self.chunk, limit - bytes.count))
        while bytes.count < limit {
            let wanted = min(chunk.count, limit - bytes.count)
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, wanted) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw ImageCoreError(.io, subject: path, message: String(cString: strerror(errno)))
            }
            bytes += chunk[..<count]
        }
        return bytes
    }
}
