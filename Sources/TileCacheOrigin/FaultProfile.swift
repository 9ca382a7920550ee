/// Named mixes of faults for `tilecache origin --faults NAME`.
public enum FaultProfile {
    /// The profile names, in the order `--help` lists them.
    public static let names = ["none", "flaky", "hostile", "matrix"]

    /// The rules of a named profile, or nil for an unknown name.
    ///
    /// - `none`: no faults.
    /// - `flaky`: transient trouble a retrying client gets through: the first request for thumbnails 001-009 gets a
    ///   503, for 010-019 a 429 with Retry-After 1.
    /// - `hostile`: permanent trouble a validating client must report: thumbnail 003 is an HTML page served as
    ///   image/jpeg, 004 is cut off mid-body, 005 resets the connection, 006 claims 65500x65500 pixels, 007 is a 500,
    ///   008 redirects to itself; lithium's photo is a real JPEG served as text/plain (a warning, not a failure).
    /// - `matrix`: the whole hardening fault matrix, case N on thumbnail N (`FaultMatrix`, docs/reliability.md).
    public static func rules(named name: String) -> [FaultRule]? {
        switch name {
        case "none": return []
        case "flaky":
            return [FaultRule(pathContains: "/Tiles/00", fault: .failFirst(count: 1, status: 503)),
                    FaultRule(pathContains: "/Tiles/01", fault: .tooManyRequests(count: 1, retryAfterSeconds: 1))]
        case "hostile":
            return [FaultRule(pathContains: "/Tiles/003/", fault: .htmlPage),
                    FaultRule(pathContains: "/Tiles/004/", fault: .truncatedBody(fraction: 0.5)),
                    FaultRule(pathContains: "/Tiles/005/", fault: .resetMidBody),
                    FaultRule(pathContains: "/Tiles/006/", fault: .hugeDimensions),
                    FaultRule(pathContains: "/Tiles/007/", fault: .status(500)),
                    FaultRule(pathContains: "/Tiles/008/", fault: .redirect(to: "/periodictable/Tiles/008/s7.JPG")),
                    FaultRule(pathContains: "/lithium.jpg", fault: .contentType("text/plain"))]
        case "matrix": return FaultMatrix.rules
        default: return nil
        }
    }
}
