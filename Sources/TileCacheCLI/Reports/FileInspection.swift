import Foundation
import ImageCore

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
    /// The failure reason (an `ImageCoreError.Reason` raw value), nil when valid.
    public var reason: String?
    /// What is wrong, in words; nil when valid.
    public var message: String?
    /// Non-fatal findings.
    public var warnings: [String]

    enum CodingKeys: String, CodingKey { case path, valid, format, width, height, bytes, reason, message, warnings }

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
    }
}

/// Validates local files with the same rules as downloaded images.
public enum FileInspection {
    /// The files named by `arguments`: files as given, directories expanded recursively (hidden entries skipped),
    /// each directory's files sorted by path.
    ///
    /// - Throws: `InputError` naming an argument that does not exist.
    public static func expand(_ arguments: [String]) throws(InputError) -> [String] {
        var paths: [String] = []
        let manager = FileManager.default
        for argument in arguments {
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: argument, isDirectory: &isDirectory) else {
                throw InputError("\(argument): no such file or directory")
            }
            guard isDirectory.boolValue else {
                paths.append(argument)
                continue
            }
            guard let enumerator = manager.enumerator(atPath: argument) else {
                throw InputError("\(argument): cannot read the directory")
            }
            var found: [String] = []
            while let relative = enumerator.nextObject() as? String {
                let name = (relative as NSString).lastPathComponent
                if name.hasPrefix(".") {
                    if (enumerator.fileAttributes?[.type] as? FileAttributeType) == .typeDirectory { enumerator.skipDescendants() }
                    continue
                }
                if (enumerator.fileAttributes?[.type] as? FileAttributeType) == .typeRegular {
                    found.append(argument.hasSuffix("/") ? argument + relative : argument + "/" + relative)
                }
            }
            paths += found.sorted()
        }
        return paths
    }

    /// Validates every path, `concurrency` files at a time; results come back in the order given.
    public static func inspect(_ paths: [String], inspector: ImageInspector, concurrency: Int = 4,
                               fullDecode: Bool = false) async -> [FileInspectionResult] {
        var results = [FileInspectionResult?](repeating: nil, count: paths.count)
        await withTaskGroup(of: (Int, FileInspectionResult).self) { group in
            var next = 0
            func addNext() {
                guard next < paths.count else { return }
                let index = next
                next += 1
                group.addTask { (index, inspect(paths[index], inspector: inspector, fullDecode: fullDecode)) }
            }
            for _ in 0..<max(1, concurrency) { addNext() }
            for await (index, result) in group {
                results[index] = result
                addNext()
            }
        }
        return results.map { $0! }
    }

    /// Validates one file.
    public static func inspect(_ path: String, inspector: ImageInspector, fullDecode: Bool = false) -> FileInspectionResult {
        var result = FileInspectionResult(path: path, valid: false, warnings: [])
        guard let data = FileManager.default.contents(atPath: path) else {
            result.reason = ImageCoreError.Reason.io.rawValue
            result.message = "cannot read the file"
            return result
        }
        let bytes = [UInt8](data)
        result.bytes = bytes.count
        result.format = ImageFormat.sniff(bytes)?.rawValue
        do {
            let checked = fullDecode
                ? try inspector.validate(bytes, subject: path).asCheck
                : try inspector.check(bytes, subject: path)
            result.valid = true
            result.width = checked.header.width
            result.height = checked.header.height
            result.warnings = checked.warnings
        } catch {
            result.reason = error.reason.rawValue
            result.message = error.message
            if let header = try? inspector.inspectHeader(bytes, subject: path) {
                result.width = header.width
                result.height = header.height
            }
        }
        return result
    }
}
