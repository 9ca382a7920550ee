extension ConfigurationSources {
    /// imgproxy's and thumbor's variables for the `serve` options that mean the same, read after `TILECACHE_<OPTION>`
    /// (so an operator who migrates keeps their environment), each with how its value becomes the option's
    /// (docs/sources.md has the table).
    static let peerVariables: [String: (variable: String, value: @Sendable (String) throws -> String)] = [
        "allowed-sources": ("IMGPROXY_ALLOWED_SOURCES", { $0 }),
        "signing-key": ("IMGPROXY_KEY", { $0 }),
        "signing-salt": ("IMGPROXY_SALT", { $0 }),
        "signature-size": ("IMGPROXY_SIGNATURE_SIZE", { $0 }),
        "auto-webp": ("IMGPROXY_AUTO_WEBP", { $0 }),
        "auto-avif": ("IMGPROXY_AUTO_AVIF", { $0 }),
        "client-hints": ("IMGPROXY_ENABLE_CLIENT_HINTS", { $0 }),
        "only-presets": ("IMGPROXY_ONLY_PRESETS", { $0 }),
        "max-age": ("IMGPROXY_TTL", { $0 }),
        "max-bytes": ("IMGPROXY_MAX_SRC_FILE_SIZE", { $0 }),
        // Megapixels (imgproxy's unit), as pixels.
        "max-pixels": ("IMGPROXY_MAX_SRC_RESOLUTION", { text in
            guard let megapixels = Double(text), megapixels > 0, megapixels < 1_000_000 else {
                throw InputError("environment variable IMGPROXY_MAX_SRC_RESOLUTION: '\(text)' is not a number of megapixels (such as 16.8)")
            }
            return String(Int((megapixels * 1_000_000).rounded()))
        }),
        "thumbor-key": ("SECURITY_KEY", { $0 }),
        "allow-unsafe-url": ("ALLOW_UNSAFE_URL", { $0 }),
    ]
}
