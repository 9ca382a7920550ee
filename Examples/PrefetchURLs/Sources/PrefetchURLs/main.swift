// Prefetches a list of image URLs twice through one TileCache pipeline and prints the hit rates: the first pass goes
// to the network (or the disk cache a previous run left), the second is answered from memory.
//
//     swift run PrefetchURLs urls.txt [CACHE_DIRECTORY]
//
// `urls.txt` holds one http(s) URL a line (blank lines and `#` comments are skipped). Exit code 0 when every image
// loaded, 2 when some are broken, 1 on a usage error.
import Foundation
import ImageCore

let arguments = CommandLine.arguments.dropFirst()
guard let listPath = arguments.first else {
    FileHandle.standardError.write(Data("usage: PrefetchURLs URL_LIST [CACHE_DIRECTORY]\n".utf8))
    exit(1)
}
let urls: [String]
do {
    urls = try String(contentsOfFile: listPath, encoding: .utf8).split(whereSeparator: \.isNewline)
        .map { $0.trimmingCharacters(in: .whitespaces) }
        .filter { !$0.isEmpty && !$0.hasPrefix("#") }
} catch {
    FileHandle.standardError.write(Data("PrefetchURLs: cannot read \(listPath): \(error.localizedDescription)\n".utf8))
    exit(1)
}

var configuration = ImagePipeline.Configuration()
configuration.diskDirectory = arguments.dropFirst().first  // nil: memory only
let pipeline = ImagePipeline(configuration: configuration)

var last: PrefetchRun?
for pass in ["first", "second"] {
    let run = await pipeline.prefetch(urls)
    let report = run.report
    let hitRate = report.requests == 0 ? 0 : Double(report.hits) / Double(report.requests)
    print("\(pass) pass: \(report.requests) images, \(report.memoryHits) from memory, \(report.diskHits) from disk, "
          + "\(report.networkFetches) downloaded, \(report.failed) failed; hit rate \(String(format: "%.0f", hitRate * 100))%")
    last = run
}
let broken = last?.results.filter { $0.error != nil } ?? []
for result in broken {
    print("broken: \(result.url): \(result.error!.reason.rawValue): \(result.error!.message)")
}
exit(broken.isEmpty ? 0 : 2)
