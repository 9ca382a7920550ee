import Foundation
import ImageCore

extension ThumborPath {
    /// thumbor's `meta/` answer for a source of `sourceWidth` x `sourceHeight` (upright): the JSON thumbor 7's
    /// JSONEngine writes, key by key and number by number. Its operations are replayed as thumbor's transformer does
    /// them (manual crop, then `fit_in_resize`, or `auto_crop` and `resize`, then the flips); its numbers keep
    /// thumbor's types (a size from the URL is a float, `300.0`; one thumbor rounds is an int); `source` holds the
    /// size the operations end with, as thumbor's does, and `url` the source as written, percent-encoded by Python's
    /// `quote`. The focal point is the alignment's (thumbor's, without detectors).
    /// scripts/open_sources_check.py compares these answers with thumbor's own, byte for byte.
    func metaJSON(sourceWidth: Int, sourceHeight: Int) -> String {
        var operations: [String] = []
        var (engineWidth, engineHeight) = (sourceWidth, sourceHeight)
        var target: (width: MetaNumber, height: MetaNumber)?
        func crop(_ left: Int, _ top: Int, _ right: Int, _ bottom: Int) {
            operations.append(#"{"type": "crop", "left": \#(left), "top": \#(top), "right": \#(right), "bottom": \#(bottom)}"#)
            (engineWidth, engineHeight) = (right - left, bottom - top)
            target = (.int(right - left), .int(bottom - top))
        }
        func resize(_ width: MetaNumber, _ height: MetaNumber) {
            operations.append(#"{"type": "resize", "width": \#(width.text), "height": \#(height.text)}"#)
            (engineWidth, engineHeight) = (width.integer, height.integer)
            target = (width, height)
        }
        if let manual = processing.sourceCrop {
            let left = min(max(manual.left, 0), engineWidth), right = min(max(manual.right, 0), engineWidth)
            let top = min(max(manual.top, 0), engineHeight), bottom = min(max(manual.bottom, 0), engineHeight)
            if left < right, top < bottom { crop(left, top, right, bottom) }
        }
        let sw = Double(engineWidth), sh = Double(engineHeight)
        let percentages = ["left": 0.0, "center": 0.5, "right": 1.0, "top": 0.0, "middle": 0.5, "bottom": 1.0]
        let focalX = Int(sw * (percentages[alignment.horizontal] ?? 0.5)), focalY = Int(sh * (percentages[alignment.vertical] ?? 0.5))
        var width = processing.width ?? 0, height = processing.height ?? 0
        if processing.boxCappedToSource { (width, height) = (min(width, sourceWidth), min(height, sourceHeight)) }
        let (tw, th) = ProcessingGeometry.thumborTarget(width: width, height: height, sourceWidth: engineWidth, sourceHeight: engineHeight)
        if processing.fit == .inside {
            if let fit = ProcessingGeometry.thumborFitInResize(processing, sourceWidth: engineWidth, sourceHeight: engineHeight).resize {
                resize(fit.widthFromTarget ? .float(fit.width) : .int(Int(fit.width)), fit.widthFromTarget ? .int(Int(fit.height)) : .float(fit.height))
            }
        } else {
            if let box = ProcessingGeometry.thumborAutoCrop(sourceWidth: engineWidth, sourceHeight: engineHeight, targetWidth: tw,
                                                            targetHeight: th, focalX: Double(focalX), focalY: Double(focalY)) {
                crop(box.left, box.top, box.right, box.bottom)
            }
            if tw != Double(engineWidth) || th != Double(engineHeight) { resize(.float(tw), .float(th)) }
        }
        if processing.flipHorizontal { operations.append(#"{"type": "flip_horizontally"}"#) }
        if processing.flipVertical { operations.append(#"{"type": "flip_vertically"}"#) }
        let (targetWidth, targetHeight) = target ?? (.int(engineWidth), .int(engineHeight))
        let url = Self.pythonQuote(rawSource)
        return #"{"thumbor": {"source": {"url": "\#(url)", "width": \#(engineWidth), "height": \#(engineHeight), "frameCount": 1}, "#
            + #""operations": [\#(operations.joined(separator: ", "))], "target": {"width": \#(targetWidth.text), "height": \#(targetHeight.text)}, "#
            + #""focal_points": [{"x": \#(focalX), "y": \#(focalY), "z": 1.0, "height": 1, "width": 1, "origin": "alignment"}]}}"#
    }

    /// A number as Python's `json.dumps` writes it: an int, or a float (`300.0`).
    enum MetaNumber {
        case int(Int), float(Double)

        var text: String {
            switch self {
            case .int(let value): String(value)
            case .float(let value): value == value.rounded() && abs(value) < 1e16 ? "\(Int(value)).0" : "\(value)"
            }
        }

        /// What thumbor's engine keeps as the size (Pillow truncates a float size).
        var integer: Int {
            switch self {
            case .int(let value): value
            case .float(let value): Int(value)
            }
        }
    }

    /// Python's `urllib.parse.quote` with its default `safe="/"`: every byte but letters, digits, `_.-~` and `/`
    /// percent-encoded, upper-case hex; JSON's own specials cannot survive it.
    static func pythonQuote(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.append(Character(UnicodeScalar(byte)))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }
}
