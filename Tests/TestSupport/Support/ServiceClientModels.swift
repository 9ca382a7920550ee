/// A client's model of the service's JSON answers, written from docs/service.md and docs/openapi.yaml, never from the
/// service's own types: a field the service renames or retypes fails to decode, so the tests that read it fail.
///
/// Each model holds the fields the docs promise (required ones non-optional); clients ignore other keys.
public enum ServiceJSON {
    /// Every error's body, `{"error": {"status", "reason", "message"}}` (openapi `Error`).
    public struct ErrorBody: Decodable, Sendable {
        public struct Detail: Decodable, Sendable {
            public let status: Int
            public let reason: String
            public let message: String
        }

        public let error: Detail
    }

    /// A stored favourite (openapi `Favorite`): the keys every record carries, whichever body it was posted with.
    public struct Favorite: Decodable, Sendable {
        public let id: String
        public let createdAt: String
        public let favoritedBy: String
        public let elementName: String
        public let elementSymbol: String
        public let name: String
        public let symbol: String
        public let number: Int
    }

    /// An element of `/api/v1/elements`, `/api/v1/elements_remaining` and `/api/v1/elements/{id}` as the seed apps'
    /// models read it (snake_case keys), with the service's image keys; the other element fields are checked by
    /// SeedContractTests. `strings` holds every string value of the object, for the mock API's search.
    public struct Element: Decodable, Sendable {
        public let id: String
        public let number: Int
        public let name: String
        public let symbol: String
        public let atomicMass: Double
        public let thumbnailURL: String
        public let imageURL: String
        public let hasImage: Bool
        public let strings: [String]

        enum CodingKeys: String, CodingKey {
            case id, number, name, symbol
            case atomicMass = "atomic_mass", thumbnailURL = "thumbnail_url", imageURL = "image_url", hasImage = "has_image"
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            number = try container.decode(Int.self, forKey: .number)
            name = try container.decode(String.self, forKey: .name)
            symbol = try container.decode(String.self, forKey: .symbol)
            atomicMass = try container.decode(Double.self, forKey: .atomicMass)
            thumbnailURL = try container.decode(String.self, forKey: .thumbnailURL)
            imageURL = try container.decode(String.self, forKey: .imageURL)
            hasImage = try container.decode(Bool.self, forKey: .hasImage)
            guard case .object(let fields) = try JSONValue(from: decoder) else { strings = []; return }
            strings = fields.values.compactMap { if case .string(let text) = $0 { text } else { nil } }
        }
    }

    /// `GET /api/v1/stats` (openapi `Stats`; the endpoint table of docs/service.md).
    public struct Stats: Decodable, Sendable {
        /// The one memory tier.
        public struct MemoryCache: Decodable, Sendable {
            public let count: Int
            public let hits: Int
            public let evictions: Int
        }

        public let requests: Int
        /// Cache answers over all requests.
        public let hitRate: Double
        /// By `memoryHit`, `diskHit`, `revalidated`, `networkFetch`.
        public let outcomes: [String: Int]
        /// By reason (`http-status`, `timeout`, ...).
        public let failures: [String: Int]
        /// `succeeded`, `failed`: requests answered by a load another request had started.
        public let sharedLoads: [String: Int]
        /// Variants made.
        public let resized: Int
        public let memoryCache: MemoryCache
        public let memoryContent: String
        /// The disk cache's entries; absent without a disk cache.
        public let diskEntries: Int?
        /// With `--shared-store` only.
        public let sharedStore: SharedStoreStatistics?
    }

    /// What the shared S3 tier did: `sharedStore` of `/api/v1/stats`, and `sharedStore.statistics` of a prefetch report.
    public struct SharedStoreStatistics: Decodable, Sendable {
        public let requests: Int
        public let hits: Int
        public let misses: Int
        public let corrupt: Int
        public let skipped: Int
        public let writes: Int
        public let writesFailed: Int
        public let writesDropped: Int
        public let queued: Int
        public let bytesRead: Int
        public let bytesWritten: Int
        public let circuitOpened: Int
        /// By reason (`connect`, `timeout`, `forbidden`, ...).
        public let errors: [String: Int]
    }

    /// `GET /healthz` (openapi `Health`).
    public struct Health: Decodable, Sendable {
        /// With `--shared-store`: the store's state.
        public struct SharedStore: Decodable, Sendable {
            /// `ok` or `degraded`.
            public let status: String
            public let store: String
            public let endpoint: String
            /// When degraded.
            public let reason: String?
            /// When degraded.
            public let since: String?
        }

        /// `ok`, `degraded` or `failing`.
        public let status: String
        /// Each check's state (`cache`, `codecs`, `database`, ...).
        public let checks: [String: String]
        public let sharedStore: SharedStore?
    }
}
