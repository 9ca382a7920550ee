import Foundation
import HTTPTypes
import ImageCore

/// Client hints, as imgproxy reads them (`IMGPROXY_ENABLE_CLIENT_HINTS`), for `serve --client-hints`: the device
/// pixel ratio (`Sec-CH-DPR`, else the older `DPR`), the image's width in device pixels (`Sec-CH-Width`, else `Width`)
/// and the viewport's in CSS pixels (`Sec-CH-Viewport-Width`, else `Viewport-Width`).
///
/// They fill in what an image URL leaves open, and nothing it gives: a URL without `w` or `h` gets the hinted width
/// (`Sec-CH-Width`, else the viewport's times the DPR); a URL with `w` and without `dpr` gets the hinted DPR. The result
/// stays within the service's bounds: with `--allowed-widths` the width is raised to the next listed one (the largest
/// at most), so hints never make a variant the list does not allow; a URL that names a preset, a service with
/// `--only-presets`, and an unsigned URL on a service that signs take no hints. Answers then vary by the hints
/// (`Vary`), and say which the service reads (`Accept-CH`).
struct ClientHints: Sendable, Hashable {
    /// Device pixels per CSS pixel, 0 < dpr <= 8 (imgproxy's bound); used within `dpr`'s own range, 1...3.
    var dpr: Double?
    /// The image's width on the page, in device pixels.
    var width: Int?
    /// The viewport's width, in CSS pixels.
    var viewportWidth: Int?

    /// What the service answers with `Accept-CH`.
    static let accepted = "Sec-CH-DPR, Sec-CH-Width, Sec-CH-Viewport-Width"
    /// The request headers an answer varies by when hints are read (the older names too, as imgproxy lists them).
    static let varyNames = ["Sec-CH-DPR", "Sec-CH-Width", "Sec-CH-Viewport-Width", "DPR", "Width", "Viewport-Width"]

    /// The hints `headers` carry; a malformed or out-of-range value is no hint.
    init(_ headers: HTTPFields) {
        func value(_ names: String...) -> String? {
            for name in names {
                if let field = HTTPField.Name(name), let text = headers[field]?.trimmingCharacters(in: .whitespaces), !text.isEmpty {
                    return text
                }
            }
            return nil
        }
        dpr = value("Sec-CH-DPR", "DPR").flatMap(Double.init).flatMap { $0.isFinite && $0 > 0 && $0 <= 8 ? $0 : nil }
        width = value("Sec-CH-Width", "Width").flatMap { Int($0) }.flatMap { (1...100_000).contains($0) ? $0 : nil }
        viewportWidth = value("Sec-CH-Viewport-Width", "Viewport-Width").flatMap { Int($0) }.flatMap { (1...100_000).contains($0) ? $0 : nil }
    }

    init(dpr: Double? = nil, width: Int? = nil, viewportWidth: Int? = nil) {
        (self.dpr, self.width, self.viewportWidth) = (dpr, width, viewportWidth)
    }

    /// Whether the request carries no hint.
    var isEmpty: Bool { dpr == nil && width == nil && viewportWidth == nil }

    /// Everything the hints change about a request's reading, for the fast path's hand-over (`ParsedImageRequests`).
    var key: String { "dpr=\(dpr.map { "\($0)" } ?? "-")&w=\(width.map(String.init) ?? "-")&vw=\(viewportWidth.map(String.init) ?? "-")" }

    /// `query` with the hints applied where it leaves the width or the DPR open (see the type's rule); `query` itself
    /// when no hint applies.
    func applied(to query: QueryItems, rules: VariantRules) -> QueryItems {
        guard !isEmpty, !rules.onlyPresets, !query.items.contains(where: { VariantRules.presetNames.contains($0.name) }) else { return query }
        let ratio = dpr.map { min(3, max(1, $0)) }
        var items = query.items
        var deviceWidth: Int?
        // The URL's own values only as `ImageOptions` accepts them (it refuses the rest after this): dpr 1...3, sides
        // up to the largest.
        let ownDPR = query["dpr"].flatMap(Double.init).flatMap { (1...3).contains($0) ? $0 : nil }
        let ownWidth = query["w"].flatMap { Int($0) }.flatMap { (1...ImageProcessing.maxSide).contains($0) ? $0 : nil }
        if query["w"] == nil, query["h"] == nil {
            if let width {
                deviceWidth = width
            } else if let viewportWidth {
                deviceWidth = Int((Double(min(viewportWidth, ImageProcessing.maxSide)) * (ownDPR ?? ratio ?? 1)).rounded())
            }
            guard let deviceWidth else { return query }
            // The width given in device pixels: the URL's own dpr (if any) would multiply it again.
            items.removeAll { $0.name == "dpr" }
            items.append(("w", String(snapped(deviceWidth, rules))))
        } else if query["dpr"] == nil, let ratio, ratio != 1 {
            let w = ownWidth
            if query["w"] != nil, w == nil { return query }  // a bad w: ImageOptions names it
            if rules.allowedWidths != nil, let w {
                // The hinted width raised to an allowed one: given as w alone.
                items.removeAll { $0.name == "w" }
                items.append(("w", String(snapped(Int((Double(w) * ratio).rounded()), rules))))
            } else {
                // Within the largest side: a hint never turns a valid URL into a refusal.
                let side = max(w ?? 0, query["h"].flatMap { Int($0) } ?? 0)
                let bounded = side > 0 ? min(ratio, Double(ImageProcessing.maxSide) / Double(side)) : ratio
                guard bounded > 1 else { return query }
                items.append(("dpr", String((bounded * 100).rounded(.down) / 100)))
            }
        } else {
            return query
        }
        return QueryItems(items: items)
    }

    /// An imgproxy URL's processing with the hints applied as imgproxy applies them: the hinted DPR where the URL gives
    /// none (1 to 8, imgproxy's bound, in hundredths, and within the largest side), and where it gives no width or height, the
    /// hinted width in CSS pixels (`Sec-CH-Width` divided by the DPR; no viewport: imgproxy reads none).
    func applied(to processing: ImageProcessing) -> ImageProcessing {
        var hinted = processing
        if hinted.dpr == 1, let dpr {
            // At least 1 and in hundredths: every DPR a hint may give is one of 700 variants, not one per value sent.
            let side = max(hinted.width ?? 0, hinted.height ?? 0)
            let bounded = min(dpr, 8, side > 0 ? Double(ImageProcessing.maxSide) / Double(side) : 8)
            hinted.dpr = max(1, (bounded * 100).rounded(.down) / 100)
        }
        if hinted.width == nil, hinted.height == nil, let width {
            hinted.width = max(1, Int((Double(min(width, ImageProcessing.maxSide)) / hinted.dpr).rounded()))
        }
        return hinted
    }

    /// `width` raised to the next allowed width (the largest, when it is above them all), within the largest side.
    private func snapped(_ width: Int, _ rules: VariantRules) -> Int {
        let bounded = min(width, ImageProcessing.maxSide)
        guard let allowed = rules.allowedWidths?.sorted(), let largest = allowed.last else { return bounded }
        return allowed.first { $0 >= bounded } ?? largest
    }
}
