import CFuzzerDriver
import ImageCore

/// The program's entry: SwiftPM links an executable with `main` aliased to `ImageFuzzer_main`, which would shadow
/// libFuzzer's own `main`, so this one hands over to libFuzzer's driver.
@_cdecl("ImageFuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, count in fuzz(data!, count) }
}

/// The input before this one. libFuzzer calls `fuzz` on one thread, one input at a time, so nothing else ever
/// touches it.
nonisolated(unsafe) var previousInput: [UInt8] = []

/// A verdict in words: valid with its header and warnings, or the reason and message.
func verdict(of bytes: [UInt8], _ inspector: ImageInspector) -> String {
    do {
        let checked = try inspector.check(bytes, subject: "fuzz")
        return "valid \(checked.header) \(checked.warnings)"
    } catch {
        return "\(error.reason.rawValue): \(error.message)"
    }
}

/// libFuzzer's entry point: every input goes through what TileCache does with downloaded bytes. Sniffing, header
/// inspection, the validation check (scaled decode), the full strict and lenient decodes, and, for an image that
/// decodes, a resize. Any outcome is fine except a crash, a sanitizer report, a hang, a verdict that disagrees
/// between the check and the full decode, or a verdict that changes once another input was judged in between (a
/// verdict is a function of the bytes alone: each input is checked twice, after a different previous input).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    // A small pixel limit keeps each input fast; the limit itself is part of what is fuzzed.
    let inspector = ImageInspector(maxPixels: 4_000_000)
    let first = verdict(of: bytes, inspector)
    _ = verdict(of: previousInput, inspector)
    let again = verdict(of: bytes, inspector)
    if again != first { fatalError("the verdict changed after another input was judged: \(first) then \(again)") }
    previousInput = bytes
    _ = ImageFormat.sniff(bytes)
    _ = try? inspector.inspectHeader(bytes, subject: "fuzz")
    let checked = Result { () throws(ImageCoreError) in try inspector.check(bytes, subject: "fuzz") }
    let validated = Result { () throws(ImageCoreError) in try inspector.validate(bytes, subject: "fuzz") }
    let lenient = ImageInspector(maxPixels: inspector.maxPixels, strictness: .lenient)
    _ = try? lenient.validate(bytes, subject: "fuzz")
    // The service's variant path (DCT-scaled decode, orientation, colour, smart crop, resample, encode) on anything the
    // lenient decoder accepts.
    _ = try? ImageProcessor.process(bytes, ImageProcessing(width: 32, height: 24, fit: .cover, format: .jpeg, gravity: .init(.smart)),
                                    subject: "fuzz", inspector: lenient)
    switch (checked, validated) {
    case (.success, .success):
        break
    case (.failure, .failure):
        break
    case (.success, .failure(let error)), (.failure(let error), .success):
        fatalError("check and validate disagree on this input: \(error)")
    }
    return 0
}
