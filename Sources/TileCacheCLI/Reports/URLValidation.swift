import Foundation
public import ImageCore

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
    /// For an image found in documents (`--extract`): each document and line that uses it. Absent otherwise, so a
    /// check of a URL list or the catalogue prints what it always printed.
    public var usedIn: [ImageUse]?

    enum CodingKeys: String, CodingKey {
        case url, ok, status, reason, message, format, contentType, width, height, bytes, timeMilliseconds, warnings,
             expectedMissing, servedBy, usedIn
    }

    /// Encodes absent values as `null`, so every result has every key (`usedIn` only for images found in documents).
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
        try container.encodeIfPresent(usedIn, forKey: .usedIn)
    }
}

/// The report `tilecache validate` prints. Its counts are the check's pipeline statistics (`PipelineReport`'s one
/// definition of failed, expected missing and not completed), with invalid input lines added to `broken`:
/// `checked == ok + broken + expectedMissing`.
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

/// Checks image URLs through the pipeline: every URL fetched and fully validated, whatever the caches hold; valid
/// images stored on disk only when asked (the pipeline never stores a broken one).
public struct URLValidator: Sendable {
    let pipeline: ImagePipeline
    let storing: Bool
    let concurrency: Int

    /// A validator over `pipeline`; valid images go to its disk cache when `storing` (and the pipeline has one).
    public init(pipeline: ImagePipeline, storing: Bool, concurrency: Int) {
        self.pipeline = pipeline
        self.storing = storing
        self.concurrency = max(1, concurrency)
    }

    /// Checks every image, `concurrency` at a time; results in input order. When the calling task is cancelled, no
    /// further URL is started, checks in flight are cancelled, and the report holds what was checked.
    ///
    /// - Parameter progress: called after each URL is checked, with the counts the report will have (a known-missing
    ///   image that fails is expected missing there, not failed).
    public func validate(_ images: [TargetImage], progress: (@Sendable (PrefetchProgress) -> Void)? = nil) async -> URLValidationReport {
        // A check reads no cache: memory and disk may hold an image the host no longer serves.
        let options: ImageRequest.Options = storing ? [.reloadIgnoringCachedData, .disableMemoryCacheWrites] : .noStore
        // An image a local document names by a file: URL is read from disk and validated the same way.
        let local = images.filter { $0.invalidInput == nil && LocalImageCheck.isFileURL($0.url) }
        let fetched = images.filter { $0.invalidInput == nil && !LocalImageCheck.isFileURL($0.url) }
        var localResults: [String: URLValidationResult] = [:]
        for image in local where localResults[image.url] == nil && !Task.isCancelled {
            localResults[image.url] = await LocalImageCheck.check(image)
        }
        let requests = fetched.map {
            ImageRequest(url: $0.url, alternatives: $0.isKnownMissing ? [] : $0.alternativeURLs, options: options)
        }
        let run = await pipeline.prefetch(requests, concurrency: concurrency, expectedMissing: ImageList.knownMissing(of: fetched),
                                          progress: progress)
        let interrupted = Task.isCancelled
        // Results are in the order given but loads may start in another (see `ImagePipeline.prefetch`), so an interrupted
        // run's missing results can be anywhere: each image takes the next result for its URL.
        var checked = Dictionary(grouping: run.results, by: \.url).mapValues { $0[...] }
        var all: [URLValidationResult] = []
        var invalid = 0
        for image in images {
            if let problem = image.invalidInput {
                all.append(URLValidationResult(url: image.url, ok: false, reason: "invalid-input",
                                               message: "\(image.origin ?? image.url): \(problem); not fetched",
                                               warnings: [], expectedMissing: image.isKnownMissing,
                                               usedIn: image.usedIn.isEmpty ? nil : image.usedIn))
                invalid += 1
                continue
            }
            if LocalImageCheck.isFileURL(image.url) {
                if let result = localResults[image.url] { all.append(result) }
                continue
            }
            guard let result = checked[image.url]?.popFirst(), result.end != .notCompleted else { continue }
            all.append(Self.result(of: result, for: image))
        }
        let counts = run.report
        let localOK = localResults.values.filter(\.ok).count
        let localBroken = localResults.count - localOK
        return URLValidationReport(interrupted: interrupted, checked: all.count, ok: counts.succeeded + localOK,
                                   broken: counts.failed + invalid + localBroken, expectedMissing: counts.expectedMissing,
                                   notChecked: run.notCompleted + local.count - localResults.count, results: all)
    }

    /// The report line of one check.
    static func result(of checked: PrefetchResult, for image: TargetImage) -> URLValidationResult {
        var result = URLValidationResult(url: image.url, ok: checked.error == nil, warnings: checked.warnings,
                                         expectedMissing: image.isKnownMissing, servedBy: checked.servedBy,
                                         usedIn: image.usedIn.isEmpty ? nil : image.usedIn)
        result.timeMilliseconds = checked.latency.inSeconds * 1000
        if let error = checked.error {
            result.reason = error.reason.rawValue
            result.message = error.message
            result.status = error.httpStatus ?? error.received?.status
            result.contentType = error.received?.contentType
            result.bytes = error.received?.byteCount
            result.format = error.received?.format?.rawValue
            result.width = error.received?.header?.width
            result.height = error.received?.header?.height
        } else if let header = checked.header {
            result.status = checked.httpStatus
            result.contentType = checked.originContentType
            result.bytes = header.byteCount
            result.format = header.format.rawValue
            result.width = header.width
            result.height = header.height
        }
        return result
    }
}
