import Foundation
import ImageCore

/// The check of an image a local document references by a `file:` URL: the file is read and validated by the same
/// `ImageInspector` as a fetched image, so a missing or corrupt local image is broken and a valid one is ok.
enum LocalImageCheck {
    /// The largest local image read: the downloader's limit on a fetched one (`TransferOptions.maxBodyBytes`).
    static let maxBytes = TransferOptions().maxBodyBytes

    /// Whether `url` is a `file:` URL.
    static func isFileURL(_ url: String) -> Bool {
        url.lowercased().hasPrefix("file:")
    }

    /// The local path of a `file:` URL (percent-decoded), nil when it names another host.
    static func path(of url: String) -> String? {
        guard let parsed = URL(string: url), parsed.scheme?.lowercased() == "file",
              parsed.host.map({ $0.isEmpty || $0 == "localhost" }) ?? true else { return nil }
        return parsed.path(percentEncoded: false)
    }

    /// Reads and validates the image at `image.url` on the blocking pool; the result carries `image.usedIn`.
    static func check(_ image: TargetImage) async -> URLValidationResult {
        let started = ContinuousClock.now
        var result = URLValidationResult(url: image.url, ok: false, warnings: [], expectedMissing: false,
                                         usedIn: image.usedIn.isEmpty ? nil : image.usedIn)
        guard let path = path(of: image.url) else {
            result.reason = "invalid-input"
            result.message = "\(image.origin ?? image.url): a file: URL on another host; not checked"
            return result
        }
        let outcome = await BlockingWork.run { () -> Result<(ImageCheck, Int), ImageCoreError> in
            do throws(ImageCoreError) {
                let bytes = try LocalFile.readRegular(path, atMost: maxBytes)
                return .success((try ImageInspector().check(bytes, subject: path), bytes.count))
            } catch {
                return .failure(error)
            }
        }
        result.timeMilliseconds = (ContinuousClock.now - started).inSeconds * 1000
        switch outcome {
        case .success(let (check, byteCount)):
            result.ok = true
            result.format = check.header.format.rawValue
            result.width = check.header.width
            result.height = check.header.height
            result.bytes = byteCount
            result.warnings = check.warnings
        case .failure(let error):
            result.reason = error.reason.rawValue
            result.message = error.message
        }
        return result
    }
}
