import CMalloc

/// glibc's malloc set for a long-running service that handles images (`serve` calls it at start).
///
/// glibc's default threshold for giving a block its own mapping starts at 128 KiB and grows to the largest such block
/// freed (up to 32 MiB), so after the first few decoded photos every image buffer comes from the heap's arenas, where
/// freed buffers stay as fragments: under the soak's mix (`serve --memory-bytes 16MiB`, every image and variant at
/// random) the anonymous memory reached 50-56 MiB and the peak RSS 96-100 MiB. With the threshold fixed at 256 KiB,
/// each buffer that large is mapped and unmapped, and goes back to the system when freed: 30-32 MiB and a peak of
/// 79 MiB in the same run (docs/benchmarks.md, "Issue 35, continued"). The price is a fresh mapping, and its page
/// faults, per large buffer.
public enum ServiceMemory {
    /// Blocks of this size and more get their own mapping.
    public static let mmapThreshold: Int32 = 256 * 1024

    /// Fixes glibc's mmap threshold at `mmapThreshold`; false when glibc refused it.
    public static func returnLargeBlocksToTheSystem() -> Bool {
        mallopt(M_MMAP_THRESHOLD, mmapThreshold) == 1
    }
}
