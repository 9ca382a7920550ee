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
}
