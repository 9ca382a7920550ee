import Foundation
import ImageCore

#if canImport(Glibc)
import Glibc
#endif

/// Where each thumbnail of a run goes, checked before anything is written: no output is one of the run's inputs (the
/// same file, however its path is spelled or linked), no two thumbnails go to one file, and an existing file is
/// replaced only with `--overwrite`. A plan with problems is refused whole, so a refused run writes nothing.
///
/// Checking and writing touch the file system: call them on the blocking-work threads.
struct ThumbnailOutputPlan: Sendable {
    /// One thumbnail to write: the input it is made from, and where it goes.
    struct Entry: Sendable, Equatable {
        /// The input's path, as given or found in a folder.
        var input: String
        /// The output's path, from `ThumbnailOutputPattern`.
        var output: String
    }

    /// Why an output is refused; each case names the paths involved.
    enum Problem: Sendable, Equatable, CustomStringConvertible {
        /// The output is an input of the run (the same file, through any spelling, link or hard link).
        case isInput(output: String, input: String)
        /// Two inputs map to one output.
        case twice(output: String, first: String, second: String)
        /// The output exists and `--overwrite` was not given.
        case exists(output: String, input: String)
        /// The output exists and is a folder or another file that is not a regular file.
        case notAFile(output: String, input: String)
        /// A folder the output needs is a file.
        case notAFolder(output: String, blocking: String)

        var description: String {
            switch self {
            case .isInput(let output, let input):
                "refusing to write \(output): it is the input \(input) itself (--overwrite never replaces an input); "
                    + "choose another --output folder, or a pattern such as 'thumbs/%s-64.%e'"
            case .twice(let output, let first, let second):
                "refusing to write \(output) twice: the inputs \(first) and \(second) both map to it; give them different "
                    + "--output folders in separate runs"
                    + (LocalDirectory.parent(of: first) == LocalDirectory.parent(of: second)
                        ? "" : ", or pass the folder holding them (its subfolders are kept)")
            case .exists(let output, let input):
                "\(output) already exists (the thumbnail of \(input) would replace it); pass --overwrite to replace it, "
                    + "or choose another --output"
            case .notAFile(let output, let input):
                "cannot write \(output) (the thumbnail of \(input)): it exists and is not a regular file"
            case .notAFolder(let output, let blocking):
                "cannot write \(output): \(blocking) is a file, not a folder"
            }
        }
    }

    /// The thumbnails to write, in the order given.
    let entries: [Entry]
    /// Every reason to refuse the plan; empty when it may be written.
    let problems: [Problem]
    /// Whether existing files (never inputs) are replaced.
    let overwrite: Bool

    /// Checks `entries` against the file system. `inputs` are every file the run read or tried to read, which are
    /// never written over, with or without `overwrite`.
    init(_ entries: [Entry], inputs: [String], overwrite: Bool) {
        var inputFiles: [FileID: String] = [:]
        for input in inputs {
            if let id = FileID(input), inputFiles[id] == nil { inputFiles[id] = input }
        }
        var problems: [Problem] = []
        var claimed: [String: String] = [:]  // resolved output path: the input that claimed it first
        for entry in entries {
            let (resolved, blocking) = Self.resolve(entry.output)
            if let first = claimed[resolved] {
                problems.append(.twice(output: entry.output, first: first, second: entry.input))
                continue
            }
            claimed[resolved] = entry.input
            if let blocking {
                problems.append(.notAFolder(output: entry.output, blocking: blocking))
            } else if let id = FileID(entry.output) {
                if let input = inputFiles[id] {
                    problems.append(.isInput(output: entry.output, input: input))
                } else if !id.isRegularFile {
                    problems.append(.notAFile(output: entry.output, input: entry.input))
                } else if !overwrite {
                    problems.append(.exists(output: entry.output, input: entry.input))
                }
            }
        }
        (self.entries, self.problems, self.overwrite) = (entries, problems, overwrite)
    }

    /// The refusal of a plan with problems: every problem (the first 20), and that nothing was written.
    var refusal: InputError? {
        guard let first = problems.first else { return nil }
        if problems.count == 1 { return InputError("\(first); nothing was written") }
        let shown = problems.prefix(20).map { "  \($0)\n" }.joined()
        let more = problems.count > 20 ? "  and \(problems.count - 20) more\n" : ""
        return InputError("nothing was written: \(problems.count) outputs refused:\n\(shown)\(more)".trimmingCharacters(in: .newlines))
    }

    /// Writes `bytes` to `output`, creating its folders. Without `overwrite` the file is created exclusively, so a
    /// file that appeared since the plan was checked is not replaced either; with it, the file is replaced atomically.
    ///
    /// - Throws: `.io` about `output` with the system's reason.
    func write(_ bytes: [UInt8], to output: String) throws(ImageCoreError) {
        func failure(_ reason: String) -> ImageCoreError { ImageCoreError(.io, subject: output, message: "cannot write \(output): \(reason)") }
        let folder = LocalDirectory.parent(of: output)
        do {
            if !folder.isEmpty { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            if overwrite {
                try Data(bytes).write(to: URL(fileURLWithPath: output), options: .atomic)
                return
            }
        } catch {
            throw failure(error.localizedDescription)
        }
        let descriptor = open(output, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure(String(cString: strerror(errno))) }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + written, bytes.count - written) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                let reason = String(cString: strerror(errno))
                close(descriptor)
                unlink(output)
                throw failure(reason)
            }
            written += count
        }
        guard close(descriptor) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(output)
            throw failure(reason)
        }
    }

    /// `path` made absolute with its symbolic links, `.` and `..` resolved as far as it exists, the rest appended as
    /// written; and the deepest existing part, spelled as in `path`, when it is not a folder (then nothing can be
    /// created below it).
    static func resolve(_ path: String) -> (resolved: String, blocking: String?) {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let components = absolute.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        let given = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        let working = components.count - given.count  // components of the working directory, for a relative path
        // The deepest prefix that exists.
        for count in stride(from: components.count, through: 0, by: -1) {
            let prefix = "/" + components.prefix(count).joined(separator: "/")
            guard let real = realpath(prefix, nil) else { continue }
            defer { free(real) }
            var resolved = String(cString: real).split(separator: "/").map(String.init)
            for component in components.dropFirst(count) {
                switch component {
                case ".": continue
                case "..": _ = resolved.popLast()
                default: resolved.append(component)
                }
            }
            var blocking: String?
            if count < components.count, let id = FileID(prefix), !id.isDirectory {
                blocking = (path.hasPrefix("/") ? "/" : "") + given.prefix(max(0, count - working)).joined(separator: "/")
            }
            return ("/" + resolved.joined(separator: "/"), blocking)
        }
        return (absolute, nil)
    }

    /// A file's identity (device and inode, symbolic links followed), so two spellings of one file compare equal.
    private struct FileID: Hashable {
        var device: UInt64
        var inode: UInt64
        var mode: UInt32

        /// The identity of the file at `path`, nil when there is none.
        init?(_ path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            (device, inode, mode) = (UInt64(info.st_dev), UInt64(info.st_ino), UInt32(info.st_mode))
        }

        var isRegularFile: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFREG) }
        var isDirectory: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFDIR) }

        static func == (a: Self, b: Self) -> Bool { a.device == b.device && a.inode == b.inode }
        func hash(into hasher: inout Hasher) { hasher.combine(device); hasher.combine(inode) }
    }
}
