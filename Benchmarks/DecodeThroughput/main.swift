// Full-decode throughput of one JPEG in memory through ImageInspector.validate (sniff, header, strict full decode
// to RGB), like `tjbench FILE -rgb`: decodes for about SECONDS seconds after a warm-up and prints megapixels per second.
// Usage: DecodeThroughput FILE [SECONDS]
import Foundation
import ImageCore

let arguments = CommandLine.arguments
guard arguments.count >= 2, let data = FileManager.default.contents(atPath: arguments[1]) else {
    FileHandle.standardError.write(Data("usage: DecodeThroughput FILE [SECONDS]\n".utf8))
    exit(1)
}
let seconds = arguments.count > 2 ? Double(arguments[2]) ?? 2 : 2
let bytes = [UInt8](data)
let inspector = ImageInspector()
let header = try inspector.inspectHeader(bytes, subject: arguments[1])
for _ in 0..<10 { _ = try inspector.validate(bytes, subject: arguments[1]) }  // warm-up
var decodes = 0
let started = DispatchTime.now().uptimeNanoseconds
var elapsed = 0.0
while elapsed < seconds {
    _ = try inspector.validate(bytes, subject: arguments[1])
    decodes += 1
    elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
}
print(String(format: "%.2f", Double(decodes * header.width * header.height) / 1e6 / elapsed))
