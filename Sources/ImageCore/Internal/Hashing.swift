internal import CLibCrypto

/// SHA-256 and the HMACs of signed URLs, by OpenSSL's libcrypto (Debian's libssl-dev; libcurl loads the same library).
///
/// One-shot calls: libcrypto fails them only when it cannot allocate or its digest is missing, neither of which a
/// caller can handle, so a failure stops the process with the function's name rather than answer with a wrong digest.
public enum Hashing {
    /// SHA-256 of `bytes` (32 bytes).
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        let done = bytes.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { output in SHA256(input.baseAddress, input.count, output.baseAddress) != nil }
        }
        precondition(done, "libcrypto's SHA256 failed")
        return digest
    }

    /// HMAC-SHA256 of `message` with `key` (32 bytes).
    public static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        hmac(EVP_sha256(), "HMAC-SHA256", key: key, message: message)
    }

    /// HMAC-SHA1 of `message` with `key` (20 bytes): thumbor's URL signatures.
    public static func hmacSHA1(key: [UInt8], message: [UInt8]) -> [UInt8] {
        hmac(EVP_sha1(), "HMAC-SHA1", key: key, message: message)
    }

    private static func hmac(_ digest: OpaquePointer?, _ name: String, key: [UInt8], message: [UInt8]) -> [UInt8] {
        var code = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let done = key.withUnsafeBufferPointer { key in
            message.withUnsafeBufferPointer { message in
                code.withUnsafeMutableBufferPointer { output in
                    // HMAC reads no key byte when the length is 0, but wants a pointer: an empty array may have none.
                    withUnsafePointer(to: 0 as UInt8) { empty in
                        HMAC(digest, UnsafeRawPointer(key.baseAddress) ?? UnsafeRawPointer(empty), Int32(key.count),
                             message.baseAddress ?? empty, message.count, output.baseAddress, &length) != nil
                    }
                }
            }
        }
        precondition(done && length > 0, "libcrypto's \(name) failed")
        return Array(code.prefix(Int(length)))
    }
}
