import Catalogue
import DocumentLinks
import Foundation
import ImageCore
import SharedStore
import TileCacheService

/// A command whose options `config --show` reports with the values the command will run with, computed by the same
/// code its `run` uses (a pipeline's or service's configuration), not read off the parser's declared defaults, which
/// are empty for every default the command works out itself.
protocol ResolvedOptions {
    /// Each option's value as the command would use it, by long name (no dashes); secrets masked. An option left out
    /// shows the parser's default.
    ///
    /// - Throws: what the command's own configuration throws for a value it cannot use.
    func resolvedValues() throws -> [String: String]
}

extension ResolvedOptions {
    /// What `--db` and the like show for a value that is not set at all.
    static var none: String { "none" }
}

extension PipelineOptions {
    /// The values a pipeline configuration runs with, by option.
    static func resolvedValues(_ configuration: ImagePipeline.Configuration) -> [String: String] {
        let downloader = configuration.downloader
        return [
            "cache-dir": configuration.diskDirectory ?? "none (no disk cache)",
            "no-disk-cache": String(configuration.diskDirectory == nil),
            "memory-content": configuration.memoryContent.rawValue,
            "memory-policy": configuration.memoryPolicy.rawValue,
            "memory-count": "\(configuration.memoryCountLimit)",
            "memory-bytes": ByteSize.format(configuration.memoryCostLimit),
            "disk-bytes": ByteSize.format(configuration.diskSizeLimit),
            "concurrency": "\(downloader.maxConcurrentTransfers)",
            "timeout": String(describing: downloader.transferOptions.totalTimeout.inSeconds),
            "retries": "\(downloader.retryPolicy.maxAttempts - 1)",
            "negative-ttl": "\(configuration.negativeLifetime.components.seconds)",
            "max-bytes": ByteSize.format(downloader.transferOptions.maxBodyBytes),
            "max-pixels": "\(configuration.inspector.maxPixels)",
            "shared-store": configuration.sharedStore?.storeURL ?? "none",
            "s3-endpoint": configuration.sharedStore?.endpoint ?? "none",
        ]
    }
}

extension HostOptions {
    /// The two image hosts' bases the builder uses.
    var resolvedValues: [String: String] { ["tiles-base": builder.tilesBase, "images-base": builder.imagesBase] }
}

extension SourceOptions {
    /// The hosts, and which images: the elements and kinds (or the URL list).
    var resolvedValues: [String: String] {
        var values = hosts.resolvedValues
        values["elements"] = elements == nil ? "all \(ElementCatalogue.standard.elements.count)" : elements!.elements.map { "\($0.number)" }.joined(separator: ",")
        values["kind"] = (kind ?? .all).rawValue
        values["urls"] = urls ?? "none (the catalogue)"
        return values
    }
}

extension ExtractOptions {
    /// The documents and how they are read.
    var resolvedValues: [String: String] {
        [
            "extract": documents.isEmpty ? "none (the catalogue or --urls)" : documents.joined(separator: ","),
            "json-path": jsonPath ?? "none (every http(s) string of a JSON document)",
            "base": base ?? "none (a local document's relative references are file: URLs)",
            "document-kind": documentKind?.rawValue ?? "by extension, else Content-Type, else the first bytes",
        ]
    }
}

extension TileCacheCommand.Prefetch: ResolvedOptions {
    func resolvedValues() throws -> [String: String] {
        var values = PipelineOptions.resolvedValues(try pipeline.configuration()).merging(source.resolvedValues) { first, _ in first }
            .merging(extract.resolvedValues) { first, _ in first }
        let variants = try variantProcessing()
        values["sizes"] = variants.widths.isEmpty ? "none (no variants)" : variants.widths.map(String.init).joined(separator: ",")
        values["size-formats"] = sizeFormats
        return values
    }
}

extension TileCacheCommand.Validate: ResolvedOptions {
    func resolvedValues() throws -> [String: String] {
        var configuration = try pipeline.configuration()
        if !store { configuration.diskDirectory = nil }
        var values = PipelineOptions.resolvedValues(configuration).merging(source.resolvedValues) { first, _ in first }
            .merging(extract.resolvedValues) { first, _ in first }
        if !store { values["cache-dir"] = "none (validate stores nothing without --store)" }
        return values
    }
}

extension TileCacheCommand.Serve: ResolvedOptions {
    func resolvedValues() throws -> [String: String] {
        let configuration = try serviceConfiguration()
        var values = PipelineOptions.resolvedValues(configuration.pipeline).merging(hosts.resolvedValues) { first, _ in first }
        values["host"] = configuration.host
        values["port"] = "\(configuration.port)"
        values["max-age"] = "\(configuration.maxAgeSeconds)"
        values["encoded-bytes"] = ByteSize.format(configuration.pipeline.memoryCostLimit)
        values["request-timeout"] = configuration.pipeline.requestTimeout.map { String(describing: $0.inSeconds) } ?? Self.none
        values["db"] = configuration.database.description
        values["prefetch"] = String(configuration.prefetchAtStart)
        values["record-trace"] = configuration.traceFile ?? Self.none
        values["signing-key"] = configuration.signer == nil ? "none (image URLs are not signed)" : "***"
        values["signing-salt"] = configuration.signer == nil ? Self.none : (signingSalt ?? ProcessInfo.processInfo.environment[URLSigner.saltVariable]).map { _ in "***" } ?? "empty"
        values["allowed-widths"] = configuration.allowedWidths.map { $0.sorted().map(String.init).joined(separator: ",") } ?? "any"
        values["allowed-qualities"] = configuration.allowedQualities.isEmpty
            ? (configuration.allowedWidths == nil ? "any" : "the default only") : configuration.allowedQualities.sorted().map(String.init).joined(separator: ",")
        values["presets"] = configuration.presets.isEmpty ? Self.none : configuration.presets.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
        values["only-presets"] = String(configuration.onlyPresets)
        values["allowed-sources"] = configuration.allowedSources.isEmpty ? "none (open sources are off)" : configuration.allowedSources.patterns.joined(separator: ",")
        values["allow-private-sources"] = String(configuration.allowsPrivateSources)
        values["auto-webp"] = String(configuration.autoWebP)
        values["auto-avif"] = String(configuration.autoAVIF)
        values["thumbor-key"] = configuration.thumborKey == nil ? "none (signed thumbor URLs are refused)" : "***"
        values["allow-unsafe-url"] = String(configuration.allowsUnsafeThumborURLs)
        values["signature-size"] = configuration.signer.map { "\($0.pathSignatureSize)" } ?? Self.none
        values["resize-concurrency"] = "\(configuration.pipeline.maxConcurrentProcessing)"
        values["resize-queue"] = configuration.pipeline.maxQueuedProcessing.map(String.init) ?? "unbounded"
        values["write-token"] = configuration.writeToken == nil ? "none (writes are open)" : "***"
        values["cors-origin"] = configuration.cors.description
        values["public-url"] = configuration.publicURL ?? "none (the JSON's image URLs are paths)"
        values["trusted-proxies"] = configuration.trustedProxies.description
        values["tls-cert"] = configuration.tls?.certificateChain ?? "none (plain HTTP)"
        values["tls-key"] = configuration.tls?.privateKey ?? Self.none
        values["log-format"] = logFormat.rawValue
        values["verbose"] = String(verbose)
        values["fast-path"] = String(configuration.fastPath)
        values["body-timeout"] = String(describing: configuration.connectionLimits.bodyTimeout.inSeconds)
        values["send-timeout"] = String(describing: configuration.connectionLimits.sendTimeout.inSeconds)
        values["max-connections"] = configuration.connectionLimits.maxConnections.map(String.init)
            ?? "\(ConnectionLimits.defaultMaximum()) (the descriptor limit less \(ConnectionLimits.descriptorReserve))"
        return values
    }
}
