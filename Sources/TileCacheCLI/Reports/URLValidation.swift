import Foundation
import ImageCore

/// The check of one image URL.
public struct URLValidationResult: Sendable, Codable, Equatable {
    /// The URL (or the input line, for invalid input).
    public var url: String
    /// Whether a valid image came back.
    public var ok: Bool
    /// The final HTTP status, when a response arrived.
    public var status: Int?
    /// `ImageCoreError.Reason` raw value (or `invalid-input`), nil when ok.
    public var reason: String?
    /// What went wrong, nil when ok.
    public var message: String?
    /// Format sniffed from the bytes.
    public var format: String?
    /// Content-Type as served.
    public var contentType: String?
    /// Width in pixels.
    public var width: Int?
    /// Height in pixels.
    public var height: Int?
    /// Body size.
    public var bytes: Int?
    /// Time to fetch and validate, in milliseconds.
    public var timeMilliseconds: Double?
    /// Non-fatal findings (content-type mismatch, harmless decoder warnings).
    public var warnings: [String]
    /// Upstream is known to lack this image: listed apart from broken ones.
    public var expectedMissing: Bool
    /// For a catalogue photo the host has under another spelling only: the URL that served it (`caesium.jpg` for
    /// `cesium.jpg`). The result is then that URL's, and the image is not broken.
    public var servedBy: String?

    enum CodingKeys: String, CodingKey {
        case url, ok, status, reason, message, format, contentType, width, height, bytes, timeMilliseconds, warnings,
             expectedMissing, servedBy
    }

    /// Encodes absent values as `null`, so every result has every key.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(url, forKey: .url)
        try container.encode(ok, forKey: .ok)
        try container.encode(status, forKey: .status)
        try container.encode(reason, forKey: .reason)
        try container.encode(message, forKey: .message)
        try container.encode(format, forKey: .format)
        try container.encode(contentType, forKey: .contentType)
        try container.encode(width, forKey: .width)
        try container.encode(height, forKey: .height)
        try container.encode(bytes, forKey: .bytes)
        try container.encode(timeMilliseconds, forKey: .timeMilliseconds)
        try container.encode(warnings, forKey: .warnings)
        try container.encode(expectedMissing, forKey: .expectedMissing)
        try container.encode(servedBy, forKey: .servedBy)
    }
}

/// The report `tilecache validate` prints.
public struct URLValidationReport: Sendable, Codable, Equatable {
    /// Whether Ctrl-C or SIGTERM stopped the check before every URL was checked.
    public var interrupted: Bool
    /// URLs checked (invalid input lines included).
    public var checked: Int
    /// Valid images.
    public var ok: Int
    /// Broken URLs (invalid input lines included), expected-missing ones excluded.
    public var broken: Int
    /// Known-missing catalogue URLs that failed.
    public var expectedMissing: Int
    /// URLs not checked because the check was interrupted (cancelled in flight or never started).
    public var notChecked: Int
    /// One result per URL checked, in input order.
    public var results: [URLValidationResult]
}

/// Checks image URLs: fetch, validate, and optionally store; never stores a broken image.
public struct URLValidator: Sendable {
    let downloader: Downloader
    let inspector: ImageInspector
    let store: DiskCache?
    let concurrency: Int

    /// A validator fetching through `downloader`; `store` receives valid images when given.
    public init(downloader: Downloader, inspector: ImageInspector, store: DiskCache?, concurrency: Int) {
        self.downloader = downloader
        self.inspector = inspector
        self.store = store
        self.concurrency = max(1, concurrency)
    }

    /// Checks every image, `concurrency` at a time; results in input order. When the calling task is cancelled, no
    /// further URL is started, checks in flight are cancelled, and the report holds what was checked.
    public func validate(_ images: [TargetImage]) async -> URLValidationReport {
        var results = [URLValidationResult?](repeating: nil, count: images.count)
        await withTaskGroup(of: (Int, URLValidationResult).self) { group in
            var next = 0
            func addNext() {
                guard next < images.count, !Task.isCancelled else { return }
                let index = next
                next += 1
                group.addTask { (index, await check(images[index])) }
            }
            for _ in 0..<concurrency { addNext() }
            for await (index, result) in group {
                results[index] = result
                addNext()
            }
        }
        let interrupted = Task.isCancelled
        let all = results.compactMap { $0 }.filter { !(interrupted && $0.reason == ImageCoreError.Reason.cancelled.rawValue) }
        let expected = all.filter { !$0.ok && $0.expectedMissing }.count
        let ok = all.filter(\.ok).count
        return URLValidationReport(interrupted: interrupted, checked: all.count, ok: ok, broken: all.count - ok - expected,
                                   expectedMissing: expected, notChecked: images.count - all.count, results: all)
    }

    func check(_ image: TargetImage) async -> URLValidationResult {
        var result = URLValidationResult(url: image.url, ok: false, warnings: [], expectedMissing: image.isKnownMissing)
        if let problem = image.invalidInput {
            result.reason = "invalid-input"
            result.message = "\(image.origin ?? image.url): \(problem); not fetched"
            return result
        }
        let started = ContinuousClock.now
        await fetchAndValidate(image, into: &result)
        result.timeMilliseconds = (ContinuousClock.now - started).inSeconds * 1000
        return result
    }

    private func fetchAndValidate(_ image: TargetImage, into result: inout URLValidationResult) async {
        let response: HTTPResponse
        do {
            response = try await downloader.fetch(image.url)
        } catch {
            result.status = error.httpStatus
            result.reason = error.reason.rawValue
            result.message = error.message
            if error.isNotFound, !image.isKnownMissing, let found = await otherSpelling(of: image) { result = found }
            return
        }
        result.status = response.status
        result.contentType = response.contentType
        result.bytes = response.body.count
        result.format = ImageFormat.sniff(response.body)?.rawValue
        do {
            let validated = try inspector.check(response.body, subject: image.url, contentType: response.contentType)
            result.ok = true
            result.width = validated.header.width
            result.height = validated.header.height
            result.warnings = validated.warnings
            if let store {
                let metadata = DiskCacheMetadata(url: image.url, header: validated.header, bytes: response.body,
                                                 contentType: response.contentType, etag: response.etag,
                                                 lastModified: response.lastModified, cacheControl: response.cacheControl)
                do {
                    try store.store(response.body, metadata: metadata)
                } catch {
                    result.warnings.append("not stored: \(error.message)")
                }
            }
        } catch {
            result.reason = error.reason.rawValue
            result.message = error.message
            if let header = try? inspector.inspectHeader(response.body, subject: image.url) {
                result.width = header.width
                result.height = header.height
            }
        }
    }

    /// For a missing catalogue photo, the check of the first other spelling of the name that serves a valid image,
    /// under the URL asked for; remembered as an alias in the store when one is given.
    private func otherSpelling(of image: TargetImage) async -> URLValidationResult? {
        for alternative in image.alternativeURLs {
            var found = URLValidationResult(url: alternative, ok: false, warnings: [], expectedMissing: false)
            await fetchAndValidate(TargetImage(url: alternative), into: &found)
            guard found.ok else { continue }
            if let store {
                do {
                    try store.rememberAlias(alternative, for: image.url)
                } catch {
                    found.warnings.append("alias not remembered: \(error.message)")
                }
            }
            found.url = image.url
            found.servedBy = alternative
            return found
        }
        return nil
    }
}
