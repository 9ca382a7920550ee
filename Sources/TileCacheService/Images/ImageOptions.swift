import Foundation
import HTTPTypes
import ImageCore

/// The processing options of an image URL (`?w=256&h=256&fit=cover&dpr=2&q=75&format=webp&enlarge=1`), parsed into
/// the pipeline's `ImageProcessing`, with the output format negotiated from `Accept` when none is named.
///
/// Rules: every option at most once (a repeat is a 400, never a silent first-wins); cache-busters and tracking
/// parameters are accepted and ignored for the image and its key; any other name is a 400; each bad value is a 400
/// naming the parameter. The signature parameter (`sig`) belongs to `URLSigner`.
struct ImageOptions: Sendable, Hashable {
    /// The options a URL may carry.
    static let names: Set<String> = ["w", "h", "fit", "dpr", "q", "format", "enlarge"]
    /// Names accepted and ignored: cache-busters and tracking parameters.
    static let ignoredNames: Set<String> = ["v", "cb", "t", "_", "ts", "cachebuster", "fbclid", "gclid", "dclid", "msclkid", "mc_cid", "mc_eid"]
    /// Whether `name` is ignored (one of `ignoredNames`, or `utm_*`).
    static func isIgnored(_ name: String) -> Bool { ignoredNames.contains(name) || name.hasPrefix("utm_") }

    /// What to make of the image.
    var processing: ImageProcessing
    /// Whether the format was chosen from `Accept` (the response then carries `Vary: Accept`).
    var negotiated: Bool
    /// Whether client hints are read for this URL's route (`--client-hints`): the answer varies by them and says so.
    var variesByHints = false
    /// `format=blurhash`, `thumbhash` or `placeholder`: the image's placeholder (`processing` makes it) answered as
    /// that form instead of an image; nil for an image.
    var placeholder: PlaceholderForm?

    /// What a placeholder request answers: the BlurHash or the ThumbHash (base64) as text, or the whole placeholder
    /// as JSON.
    enum PlaceholderForm: String, Sendable, Hashable, CaseIterable {
        case blurhash, thumbhash, placeholder
    }

    /// Parses `query` (`allowed` names beside the options, such as `sig`, are left to their owner); `accept` is the
    /// request's Accept header, used as `negotiation` says when variant options are given without `format`.
    init(_ query: QueryItems, accept: String?, allowed: Set<String> = [],
         negotiation: FormatNegotiation = FormatNegotiation(avif: false, webp: true)) throws(ServiceError) {
        var seen: Set<String> = []
        for (name, _) in query.items where !Self.isIgnored(name) {
            guard Self.names.contains(name) || allowed.contains(name) else {
                throw ServiceError(.badRequest, reason: .unknownParameter, message: """
                    unknown query parameter '\(name.prefix(64))' (options: \(Self.names.sorted().joined(separator: ", ")); \
                    ignored: v, cb, t, utm_* and other cache-busters)
                    """)
            }
            guard seen.insert(name).inserted else {
                throw ServiceError(.badRequest, reason: .repeatedParameter, message: "'\(name.prefix(64))' is given more than once")
            }
        }
        func integer(_ name: String, _ range: ClosedRange<Int>, _ reason: ServiceError.Reason) throws(ServiceError) -> Int? {
            guard let text = query[name] else { return nil }
            guard let value = Int(text), range.contains(value) else {
                throw ServiceError(.badRequest, reason: reason, message: "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), got '\(text.prefix(64))'")
            }
            return value
        }
        func choice<T: RawRepresentable>(_ name: String, _ reason: ServiceError.Reason, _ values: [String: T],
                                         also: [String] = []) throws(ServiceError) -> T? where T.RawValue == String {
            guard let text = query[name] else { return nil }
            guard let value = values[text] else {
                let names = (values.keys.sorted() + also).joined(separator: ", ")
                throw ServiceError(.badRequest, reason: reason, message: "\(name) must be one of \(names), got '\(text.prefix(64))'")
            }
            return value
        }
        let side = 1...ImageProcessing.maxSide
        var width = try integer("w", side, .badWidth), height = try integer("h", side, .badHeight)
        if let text = query["dpr"] {
            guard let dpr = Double(text), dpr.isFinite, (1...3).contains(dpr) else {
                throw ServiceError(.badRequest, reason: .badDPR, message: "dpr must be a number from 1 to 3, got '\(text.prefix(64))'")
            }
            width = width.map { Int((Double($0) * dpr).rounded()) }
            height = height.map { Int((Double($0) * dpr).rounded()) }
            for (name, value) in [("w", width), ("h", height)] {
                if let value, value > ImageProcessing.maxSide {
                    throw ServiceError(.badRequest, reason: .outputTooLarge,
                                       message: "\(name) x dpr is \(value), above the limit of \(ImageProcessing.maxSide) pixels")
                }
            }
        }
        if let width, let height, width * height > ImageProcessing.maxPixels {
            throw ServiceError(.badRequest, reason: .outputTooLarge,
                               message: "\(width)x\(height) is above the limit of \(ImageProcessing.maxPixels) pixels")
        }
        let fit = try choice("fit", .badFit, Self.fits)
        let enlarge = try choice("enlarge", .badEnlarge, ["1": Flag.on, "true": .on, "0": .off, "false": .off])
        let quality = try integer("q", 1...100, .badQuality)
        let placeholder = query["format"].flatMap(PlaceholderForm.init(rawValue:))
        var format = placeholder == nil ? try choice("format", .badFormat, Self.formats, also: PlaceholderForm.allCases.map(\.rawValue)) : nil
        // `fit` matters only with both sides (imgproxy's force with one side would stretch it alone).
        var processing = ImageProcessing(width: width, height: height, fit: width == nil || height == nil ? .inside : fit ?? .inside, enlarge: enlarge == .on,
                                         quality: quality, format: format)
        negotiated = false
        self.placeholder = placeholder
        if placeholder != nil {
            processing = .placeholder(of: processing)
        } else if format == nil, !processing.isNone {
            negotiated = true
            format = negotiation.format(accept: accept)
            processing.format = format
        }
        self.processing = processing
    }

    /// Options read elsewhere (an imgproxy URL's path).
    init(processing: ImageProcessing, negotiated: Bool, placeholder: PlaceholderForm? = nil) {
        (self.processing, self.negotiated, self.placeholder) = (processing, negotiated, placeholder)
    }

    private enum Flag: String { case on, off }

    /// The values of `fit` and `format` (`jpg` too), built once rather than on every image request.
    private static let fits = Dictionary(uniqueKeysWithValues: ImageProcessing.Fit.allCases.map { ($0.rawValue, $0) })
    private static let formats = Dictionary(uniqueKeysWithValues: (ImageProcessing.OutputFormat.encodings.map(\.rawValue) + ["jpg"])
        .map { ($0, ImageProcessing.OutputFormat(name: $0)!) })
}
