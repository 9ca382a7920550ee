public import ImageCore

extension ImagePipeline.Configuration {
    /// The shared tier of a fleet (an S3 bucket), between the local disk and the origin; nil: none (default). Setting
    /// it puts the tier among `extraTiers` (replacing one set before).
    public var sharedStore: SharedStoreConfiguration? {
        get { extraTiers.lazy.compactMap { $0.settings as? SharedStoreConfiguration }.first }
        set {
            extraTiers.removeAll { $0.settings is SharedStoreConfiguration }
            guard let store = newValue else { return }
            extraTiers.append(DataTierFactory(settings: store) { engine, logger in
                SharedTier(configuration: store, engine: engine, logger: logger)
            })
        }
    }
}

extension ImagePipeline {
    /// The shared tier of a fleet, when `Configuration.sharedStore` set one.
    public var sharedTier: SharedTier? { tiers.lazy.compactMap { $0 as? SharedTier }.first }
}
