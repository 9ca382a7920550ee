import Foundation
public import ImageCore

#if canImport(Glibc)
import Glibc
#endif

/// The validation of one local file.
public struct FileInspectionResult: Sendable, Encodable, Equatable {
    /// The path as given (or found in a directory).
    public var path: String
    /// Whether the file is a valid, fully decodable image.
    public var valid: Bool
    /// `jpeg`, `png`, another sniffed format, or nil when the bytes are no known image format.
    public var format: String?
    /// Width in pixels, when the header could be read.
    public var width: Int?
    /// Height in pixels, when the header could be read.
    public var height: Int?
    /// File size, when the file could be read.
    public var bytes: Int?
    /// The failure reason (an `ImageCoreError.Reason` raw value, or `not-found` for a path that does not exist), nil
    /// when valid.
    public var reason: String?
    /// What is wrong, in words; nil when valid.
    public var message: String?
    /// Non-fatal findings.
    public var warnings: [String]
    /// The EXIF orientation (1-8) a JPEG declares, nil when none: `width` and `height` are the stored pixels'.
    public var orientation: Int?
    /// The size a viewer shows (width and height swapped for orientations 5-8), when the header could be read.
    public var uprightWidth: Int?
    /// See `uprightWidth`.
    public var uprightHeight: Int?
    /// The image's placeholder (BlurHash, ThumbHash, colours, LQIP), with `--placeholders` and a valid image.
    public var placeholder: ImagePlaceholder?

    enum CodingKeys: String, CodingKey {
        case path, valid, format, width, height, bytes, reason, message, warnings, orientation, uprightWidth, uprightHeight, placeholder
    }

    /// Encodes absent values as `null`, so every object has every key.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(path, forKey: .path)
        try container.encode(valid, forKey: .valid)
        try container.encode(format, forKey: .format)
        try container.encode(width, forKey: .width)
        try container.encode(height, forKey: .height)
        try container.encode(bytes, forKey: .bytes)
        try container.encode(reason, forKey: .reason)
        try container.encode(message, forKey: .message)
        try container.encode(warnings, forKey: .warnings)
        try container.encode(orientation, forKey: .orientation)
        try container.encode(uprightWidth, forKey: .uprightWidth)
        try container.encode(uprightHeight, forKey: .uprightHeight)
        try container.encodeIfPresent(placeholder, forKey: .placeholder)
    }

    /// Records what `header` says about size and orientation.
    mutating func describe(_ header: ImageHeader) {
        width = header.width
        height = header.height
        orientation = header.orientation
        uprightWidth = header.uprightWidth
        uprightHeight = header.uprightHeight
    }
}

/// Validates local files with the same rules as downloaded images.
public enum FileInspection {
    /// What the command-line paths expand to.
    public struct Expansion: Sendable, Equatable {
        /// A path to judge: a file, or a path given on the command line that cannot be read.
        public enum Item: Sendable, Equatable {
            /// A regular file (symbolic links followed).
            case file(String)
            /// A path given that does not exist (or cannot be reached), and why.
            case unreadable(String, reason: String, message: String)
        }

        /// A path not judged, and why (hidden, not a regular file, a broken link, a directory cycle).
        public struct Skipped: Sendable, Equatable {
            /// The path.
            public var path: String
            /// Why.
            public var why: String

            /// What stderr says about `skipped` (the first 20 listed), for `inspect` and `thumbnail`; nil when empty.
            public static func notice(_ skipped: [Skipped]) -> String? {
                guard !skipped.isEmpty else { return nil }
                let shown = skipped.prefix(20).map { "  \($0.path): \($0.why)\n" }.joined()
                let more = skipped.count > 20 ? "  and \(skipped.count - 20) more\n" : ""
                return "skipped \(skipped.count) \(skipped.count == 1 ? "entry" : "entries"):\n\(shown)\(more)"
            }
        }

        /// A TileCache disk cache (or its entries directory), given or met while searching: not searched, since its
        /// files are cache entries, not images; `tilecache stats --verify` checks them.
        public struct Cache: Sendable, Equatable {
            /// The path as given (or found in a directory).
            public var path: String
            /// The cache directory: `path`, or its parent when `path` is the entries directory.
            public var cacheDirectory: String
            /// Whether `path` was a command-line argument (rather than found inside one).
            public var isArgument: Bool

            /// "/tmp/c is a TileCache disk cache: use `tilecache stats --verify --cache-dir /tmp/c` to check its
            /// entries"; with `skipped`, "..., skipped: use ...".
            public func notice(skipped: Bool) -> String {
                let what = path == cacheDirectory
                    ? "\(path) is a TileCache disk cache"
                    : "\(path) is the entries directory of the TileCache disk cache \(cacheDirectory)"
                return "\(what)\(skipped ? ", skipped" : ""): use `tilecache stats --verify --cache-dir "
                    + "\(FileInspection.shellWord(cacheDirectory))` to check its entries"
            }
        }

        /// What to judge, in the order given; each directory's files sorted by path.
        public var items: [Item] = []
        /// What was left out.
        public var skipped: [Skipped] = []
        /// Disk caches given or found, in the order met; nothing in them is in `items`.
        public var caches: [Cache] = []
    }

    /// The files named by `arguments`: files as given, directories searched recursively. Symbolic links are followed
    /// (to files and to directories); a directory already being searched is not entered again, so link cycles end.
    /// Hidden entries, files that are not regular (FIFOs, sockets, devices) and broken links inside directories are
    /// skipped and listed. A path given that does not exist becomes an `unreadable` item, reported like a broken file.
    /// A TileCache disk cache or its entries directory (`diskCacheDirectory(at:)`), given or found, is not entered:
    /// it is listed in `caches`.
    public static func expand(_ arguments: [String]) -> Expansion {
        var expansion = Expansion()
        for argument in arguments {
            var info = stat()
            guard stat(argument, &info) == 0 else {
                let missing = errno == ENOENT
                expansion.items.append(.unreadable(argument, reason: missing ? "not-found" : ImageCoreError.Reason.io.rawValue,
                                                   message: missing ? "no such file or directory" : String(cString: strerror(errno))))
                continue
            }
            switch info.st_mode & S_IFMT {
            case S_IFREG:
                expansion.items.append(.file(argument))
            case S_IFDIR:
                if let cache = diskCacheDirectory(at: argument) {
                    expansion.caches.append(.init(path: argument, cacheDirectory: cache, isArgument: true))
                    continue
                }
                var files: [String] = []
                search(argument, directory: info, ancestors: [], into: &files, expansion: &expansion)
                expansion.items += files.sorted().map { .file($0) }
            default:
                expansion.skipped.append(.init(path: argument, why: "not a regular file"))
            }
        }
        return expansion
    }

    /// A directory's identity, to find cycles through symbolic links.
    private struct DirectoryID: Hashable {
        var device: UInt64
        var inode: UInt64
        init(_ info: stat) { (device, inode) = (UInt64(info.st_dev), UInt64(info.st_ino)) }
    }

    private static func search(_ path: String, directory: stat, ancestors: Set<DirectoryID>, into files: inout [String],
                               expansion: inout Expansion) {
        let id = DirectoryID(directory)
        guard !ancestors.contains(id) else {
            expansion.skipped.append(.init(path: path, why: "a link back to a directory it is inside (cycle)"))
            return
        }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else {
            expansion.skipped.append(.init(path: path, why: "cannot read the directory"))
            return
        }
        for name in names.sorted() {
            let child = path.hasSuffix("/") ? path + name : path + "/" + name
            if name.hasPrefix(".") {
                expansion.skipped.append(.init(path: child, why: "hidden"))
                continue
            }
            var info = stat()
            guard stat(child, &info) == 0 else {
                var link = stat()
                expansion.skipped.append(.init(path: child, why: lstat(child, &link) == 0 ? "a broken symbolic link" : String(cString: strerror(errno))))
                continue
            }
            switch info.st_mode & S_IFMT {
            case S_IFREG: files.append(child)
            case S_IFDIR:
                if let cache = diskCacheDirectory(at: child) {
                    expansion.caches.append(.init(path: child, cacheDirectory: cache, isArgument: false))
                } else {
                    search(child, directory: info, ancestors: ancestors.union([id]), into: &files, expansion: &expansion)
                }
            default: expansion.skipped.append(.init(path: child, why: "not a regular file"))
            }
        }
    }

    /// The cache directory when `path` is a TileCache disk cache or its entries directory, nil otherwise. A disk cache
    /// is a directory holding an `entries` directory with a `.tce` file in it, or holding `index.sqlite` beside an
    /// `entries` directory or the run log (`runs.jsonl`): a cache before its first entry, or one just cleared.
    public static func diskCacheDirectory(at path: String) -> String? {
        func isCache(_ directory: String) -> Bool {
            let base = directory.hasSuffix("/") ? directory : directory + "/"
            let entries = isDirectory(base + "entries")
            if entries, holdsEntryFile(base + "entries") { return true }
            return isRegularFile(base + DiskCache.indexFileName) && (entries || isRegularFile(RunLog.path(cacheDirectory: directory)))
        }
        if isCache(path) { return path }
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard trimmed == "entries" || trimmed.hasSuffix("/entries") else { return nil }
        let parent = LocalDirectory.parent(of: path)
        let cache = parent.isEmpty ? "." : parent
        return isCache(cache) ? cache : nil
    }

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    private static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    /// Whether the directory holds a cache entry file (`*.tce`); reads names only until the first one.
    private static func holdsEntryFile(_ path: String) -> Bool {
        LocalDirectory.containsName(in: path) { $0.hasSuffix(".tce") }
    }

    /// `word` as one shell word: as it is when it holds only characters no shell treats specially, else in single
    /// quotes (a quote inside as `'\''`).
    static func shellWord(_ word: String) -> String {
        let plain = !word.isEmpty && word.unicodeScalars.allSatisfy {
            $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "/._-+=:,@%".unicodeScalars.contains($0))
        }
        return plain ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Validates every item, `concurrency` files at a time; results come back in the order given. An unreadable item
    /// is a failed result with its reason.
    public static func inspect(_ items: [Expansion.Item], inspector: ImageInspector, concurrency: Int = 4,
                               fullDecode: Bool = false, placeholders: Bool = false) async -> [FileInspectionResult] {
        // Reading and decoding block a thread: through the one home of blocking work.
        await BlockingWork.map(items, concurrency: concurrency) { item in
            switch item {
            case .file(let path):
                inspect(path, inspector: inspector, fullDecode: fullDecode, placeholder: placeholders)
            case .unreadable(let path, let reason, let message):
                FileInspectionResult(path: path, valid: false, reason: reason, message: message, warnings: [])
            }
        }
    }

    /// Validates one file; with `placeholder`, a valid image's placeholder is made as the service makes it (upright,
    /// in sRGB, fitted into 32 pixels), and a failure to make it fails the file.
    public static func inspect(_ path: String, inspector: ImageInspector, fullDecode: Bool = false,
                               placeholder: Bool = false) -> FileInspectionResult {
        var result = FileInspectionResult(path: path, valid: false, warnings: [])
        let bytes: [UInt8]
        do {
            bytes = try LocalFile.read(path)
        } catch {
            result.reason = error.reason.rawValue
            result.message = "cannot read the file: \(error.message)"
            return result
        }
        result.bytes = bytes.count
        result.format = ImageFormat.sniff(bytes)?.rawValue
        do {
            if placeholder, !fullDecode {
                // One decode, at the placeholder's DCT scale, is both the check and the placeholder's pixels.
                let source = try ImageProcessor.decode(bytes, for: .placeholder(of: .none), subject: path, inspector: inspector,
                                                       checking: true)
                result.describe(source.header)
                result.warnings = source.warnings
                result.placeholder = ImagePlaceholder(json: try ImageProcessor.process(source, .placeholder(of: .none), subject: path).bytes)
            } else {
                let checked = fullDecode
                    ? try inspector.validate(bytes, subject: path).asCheck
                    : try inspector.check(bytes, subject: path)
                result.describe(checked.header)
                result.warnings = checked.warnings
                if placeholder {
                    let made = try ImageProcessor.process(bytes, .placeholder(of: .none), subject: path, inspector: inspector)
                    result.placeholder = ImagePlaceholder(json: made.bytes)
                }
            }
            result.valid = true
        } catch {
            result.reason = error.reason.rawValue
            result.message = error.message
            if let header = try? inspector.inspectHeader(bytes, subject: path) { result.describe(header) }
        }
        return result
    }
}
