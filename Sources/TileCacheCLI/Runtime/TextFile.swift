import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Writes a text file a user named (`--plot`), replacing it atomically, with the system's reason when it fails
/// ("No such file or directory", "Permission denied"), where Foundation says "The operation could not be completed".
enum TextFile {
    /// Writes `text` to `path` through a temp file in the same directory, then `rename`.
    ///
    /// - Throws: `RuntimeError` naming the option, the path and the reason.
    static func write(_ text: String, to path: String, option: String) throws(RuntimeError) {
        func failure() -> RuntimeError { RuntimeError("\(option): cannot write \(path): \(String(cString: strerror(errno)))") }
        let temp = path + ".tmp-\(getpid())"
        let descriptor = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure() }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                let error = failure()
                close(descriptor)
                unlink(temp)
                throw error
            }
            bytes = bytes.dropFirst(written)
        }
        guard close(descriptor) == 0 else {
            let error = failure()
            unlink(temp)
            throw error
        }
        guard rename(temp, path) == 0 else {
            let error = failure()
            unlink(temp)
            throw error
        }
    }
}
