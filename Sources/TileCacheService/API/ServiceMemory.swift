import CMalloc
import Foundation
import NIOCore

/// glibc's malloc set for a long-running service that handles images (`serve` calls it at start).
///
/// glibc's default threshold for giving a block its own mapping starts at 128 KiB and grows to the largest such block
/// freed (up to 32 MiB), so after the first few decoded photos every image buffer comes from the heap's arenas, where
/// freed buffers stay as fragments: under the soak's mix (`serve --memory-bytes 16MiB`, every image and variant at
/// random) the anonymous memory reached 50-56 MiB and the peak RSS 96-100 MiB. With the threshold fixed at 256 KiB,
/// each buffer that large is mapped and unmapped, and goes back to the system when freed: 30-32 MiB and a peak of
/// 79 MiB in the same run (docs/benchmarks.md, "Issue 35, continued"). The price is a fresh mapping, and its page
/// faults, per large buffer.
///
/// glibc also gives each new thread an arena of its own until there are 8 per core, and each arena keeps its own free
/// fragments. The service's threads (an event loop per core, the cooperative pool, the blocking pool, downloads) are
/// limited to one arena per core: the soak's peak 79 MiB in four 60-second runs against 81-83 MiB with glibc's limit,
/// and the same requests per second on a cached image (docs/benchmarks.md, "Issue 35, fifth session").
///
/// A setting the environment makes (`MALLOC_MMAP_THRESHOLD_`, `MALLOC_ARENA_MAX`: glibc reads them at start) is the
/// operator's and is left as it is.
public enum ServiceMemory {
    /// Blocks of this size and more get their own mapping.
    public static let mmapThreshold: Int32 = 256 * 1024

    /// At most this many arenas: one per core.
    public static var arenaLimit: Int32 { Int32(clamping: max(1, System.coreCount)) }

    /// Fixes glibc's mmap threshold at `mmapThreshold` and its arenas at `arenaLimit`, each unless the environment sets
    /// it; the `mallopt` settings glibc refused (none when both hold).
    public static func configure() -> [String] {
        let environment = ProcessInfo.processInfo.environment
        var refused: [String] = []
        if environment["MALLOC_MMAP_THRESHOLD_"] == nil, mallopt(M_MMAP_THRESHOLD, mmapThreshold) != 1 { refused.append("M_MMAP_THRESHOLD") }
        if environment["MALLOC_ARENA_MAX"] == nil, mallopt(M_ARENA_MAX, arenaLimit) != 1 { refused.append("M_ARENA_MAX") }
        return refused
    }
}
