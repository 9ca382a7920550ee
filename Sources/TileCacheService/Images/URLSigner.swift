import Foundation
import HTTPTypes
import ImageCore

/// imgproxy's defence against variant floods: with a key, every image URL with processing options carries
/// `sig`, the URL-safe base64 (no padding) of HMAC-SHA256(key, salt + path + "?" + the options sorted by name as
/// `name=value` joined by `&`). Ignored parameters (cache-busters, `utm_*`) are not signed, so a tracker may add them.
///
/// Example: path `/api/v1/elements/79/image`, query `w=256&format=webp` → message
/// `<salt>/api/v1/elements/79/image?format=webp&w=256`. docs/service.md shows a front end's code in Swift and JavaScript.
/// Thread-safety: immutable.
public struct URLSigner: Sendable {
    /// The query parameter holding the signature.
    public static let parameter = "sig"
    /// The environment variables `--signing-key` and `--signing-salt` fall back to.
    public static let keyVariable = "TILECACHE_SIGNING_KEY", saltVariable = "TILECACHE_SIGNING_SALT"

    private let key: [UInt8]
    private let salt: [UInt8]
    /// Bytes of the HMAC an imgproxy path signature keeps (imgproxy's `IMGPROXY_SIGNATURE_SIZE`, 1...32; default 32).
    public var pathSignatureSize = 32

    /// A signer from hex key and salt (imgproxy's form); the key must not be empty.
    public init(keyHex: String, saltHex: String) throws(URLSignerError) {
        guard let key = Self.bytes(hex: keyHex), !key.isEmpty else {
            throw URLSignerError("the signing key must be a non-empty even number of hex digits")
        }
        guard let salt = Self.bytes(hex: saltHex) else { throw URLSignerError("the signing salt must be an even number of hex digits") }
        self.key = key
        self.salt = salt
    }

    /// The message signed for `path` and the processing options `options` (name, value).
    static func message(path: String, options: [(name: String, value: String)]) -> [UInt8] {
        let query = options.sorted { $0.name < $1.name }.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        return Array((path + "?" + query).utf8)
    }

    /// The signature of `path` with `options`, as a front end computes it.
    public func signature(path: String, options: [(name: String, value: String)]) -> String {
        Self.base64URL(Hashing.hmacSHA256(key: key, message: salt + Self.message(path: path, options: options)))
    }

    /// Checks the `sig` of a request for a variant (constant-time comparison): 403 when it is missing or wrong.
    func verify(path: String, query: QueryItems) throws(ServiceError) {
        guard let text = query[Self.parameter], !text.isEmpty else {
            throw ServiceError(.forbidden, reason: .missingSignature,
                               message: "this service requires signed image URLs: add sig (HMAC-SHA256 of the path and options, see docs/service.md)")
        }
        // A preset's name is signed like an option: it chooses the variant as they do.
        let options = query.items.filter { ImageOptions.names.contains($0.name) || VariantRules.presetNames.contains($0.name) }
        guard let signature = Self.base64URLDecoded(text),
              ConstantTime.equal(signature, Hashing.hmacSHA256(key: key, message: salt + Self.message(path: path, options: options)))
        else {
            throw ServiceError(.forbidden, reason: .badSignature, message: "the signature does not match the path and options")
        }
    }

    /// imgproxy's path signature of `signedPath` (from its `/`, after the signature segment): URL-safe base64, no
    /// padding, of HMAC-SHA256(key, salt + path), its first `pathSignatureSize` bytes.
    public func pathSignature(_ signedPath: String) -> String {
        Self.base64URL(Hashing.hmacSHA256(key: key, message: salt + Array(signedPath.utf8)).prefix(pathSignatureSize))
    }

    /// Checks an imgproxy URL's signature segment (constant-time comparison): 403 "Invalid signature" as imgproxy answers.
    func verify(pathSignature signature: Substring, signedPath: String) throws(ServiceError) {
        let expected = Hashing.hmacSHA256(key: key, message: salt + Array(signedPath.utf8)).prefix(pathSignatureSize)
        guard let given = Self.base64URLDecoded(String(signature)), ConstantTime.equal(given, expected) else {
            throw ServiceError(.forbidden, reason: .badSignature, message: "Invalid signature")
        }
    }

    /// `bytes` in URL-safe base64 (`-` and `_`), without its `=` padding unless `padded` (thumbor keeps it).
    static func base64URL(_ bytes: some Sequence<UInt8>, padded: Bool = false) -> String {
        let text = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        return padded ? text : text.replacingOccurrences(of: "=", with: "")
    }

    /// URL-safe base64, with or without its padding, decoded; nil when it is not base64.
    static func base64URLDecoded(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.hasSuffix("=") { base64.removeLast() }
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }

    private static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}

/// A signing key or salt that cannot be used.
public struct URLSignerError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
