/// The version reported in the User-Agent and by the tools.
public enum TileCacheVersion {
    /// Semantic version of this build.
    public static let string = "0.1.0"
}
