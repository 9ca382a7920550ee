import Foundation
import ImageCore

/// The files a `tilecache thumbnail` run reads: files as given, folders walked as `inspect` walks them
/// (`FileInspection.expand`: recursive, symbolic links followed, hidden entries, non-regular files and link cycles
/// skipped), each file read whole before the clock starts.
///
/// A file found in a folder becomes a thumbnail only when its first bytes are an image format's (`ImageFormat.sniff`,
/// the rule `inspect` reports formats by); other files there are skipped and listed. A file given by name is always
/// tried, so a non-image among them is reported as a failure. Reading blocks: call `gather` on the blocking-work threads.
struct ThumbnailInputs: Sendable {
    /// A file read, ready to process.
    struct Input: Sendable {
        /// The path, as given or found in a folder.
        var path: String
        /// The folder of `path` inside the folder argument it was found in; "" for a file given by name.
        var subfolder: String
        /// The whole file.
        var bytes: [UInt8]
    }

    /// The files read, in the order given; each folder's files sorted by path.
    var inputs: [Input] = []
    /// Paths that could not be read (missing, unreadable), as failed results.
    var failures: [ThumbnailResult] = []
    /// Entries of the folders that are not thumbnailed, and why.
    var skipped: [FileInspection.Expansion.Skipped] = []
    /// Every file read or tried: the files no output may replace.
    var tried: [String] = []

    /// Expands and reads `arguments`.
    static func gather(_ arguments: [String]) -> ThumbnailInputs {
        var gathered = ThumbnailInputs()
        for argument in arguments {
            // One argument at a time, so each file found is known to be inside `argument` (for its subfolder).
            let expansion = FileInspection.expand([argument])
            gathered.skipped += expansion.skipped
            let prefix = argument.hasSuffix("/") ? argument : argument + "/"
            for item in expansion.items {
                switch item {
                case .unreadable(let path, let reason, let message):
                    gathered.failures.append(ThumbnailResult(path: path, reason: reason, message: message))
                case .file(let path):
                    let found = path != argument && path.hasPrefix(prefix)
                    gathered.tried.append(path)
                    gathered.read(path, subfolder: found ? LocalDirectory.parent(of: String(path.dropFirst(prefix.count))) : "",
                                  onlyImages: found)
                }
            }
        }
        return gathered
    }

    /// Reads `path`; with `onlyImages`, a file whose first bytes are no image format is skipped instead.
    private mutating func read(_ path: String, subfolder: String, onlyImages: Bool) {
        do throws(ImageCoreError) {
            if onlyImages {
                guard let start = try LocalFile.read(path, upTo: 16) else { throw ImageCoreError(.io, subject: path, message: "no such file") }
                guard ImageFormat.sniff(start) != nil else {
                    skipped.append(.init(path: path, why: "not an image (its first bytes are no image format's)"))
                    return
                }
            }
            inputs.append(Input(path: path, subfolder: subfolder, bytes: try LocalFile.read(path)))
        } catch {
            failures.append(ThumbnailResult(path: path, reason: error.reason.rawValue, message: "cannot read the file: \(error.message)"))
        }
    }

    /// The name an input's thumbnail is written under: a file's path, or a URL's last path part (`…/Tiles/026/s7.JPG`
    /// → `s7.JPG`; no query, no fragment; `index` when the path is empty).
    static func outputName(_ input: String) -> String {
        guard RequestURL.isHTTP(input) else { return input }
        let path = URLComponents(string: input)?.path ?? ""
        let last = (path as NSString).lastPathComponent
        return last.isEmpty || last == "/" ? "index" : last
    }

    /// Fetches `urls` (at most 8 at once, retrying transient failures, the downloader's size limit while streaming),
    /// each becoming an input named by its URL when its body is an image, or a failed result with the reason.
    mutating func fetch(_ urls: [String]) async {
        guard !urls.isEmpty else { return }
        let downloader = Downloader()
        let fetched = await withTaskGroup(of: (Int, Result<[UInt8], ImageCoreError>).self) { group in
            for (index, url) in urls.enumerated() {
                group.addTask {
                    do throws(ImageCoreError) {
                        let response = try await downloader.fetch(url)
                        guard ImageFormat.sniff(response.body) != nil else {
                            throw ImageCoreError(.notAnImage, subject: url, message: "the body (\(response.contentType ?? "no Content-Type"), \(response.body.count) bytes) is not an image")
                        }
                        return (index, .success(response.body))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            return await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        for (index, url) in urls.enumerated() {
            switch fetched[index] {
            case .success(let bytes)?: inputs.append(Input(path: url, subfolder: "", bytes: bytes))
            case .failure(let error)?: failures.append(ThumbnailResult(path: url, reason: error.reason.rawValue, message: error.message))
            case nil: break
            }
        }
    }

    /// What stderr says about the skipped entries, as `inspect` says it; nil when none were skipped.
    var skippedNotice: String? { FileInspection.Expansion.Skipped.notice(skipped) }
}
