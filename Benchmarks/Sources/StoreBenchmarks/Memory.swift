import BenchmarkSupport
import CMallocStatistics
import Foundation

/// The process's memory, as the kernel and the allocator see it.
enum Memory {
    static func resident() -> (current: Int, peak: Int) { ResidentSet.current() }

    @discardableResult
    static func resetPeak() -> Bool { ResidentSet.resetPeak() }

    /// Bytes allocated through malloc and not freed, in every arena (glibc's `mallinfo2`).
    static func allocatedBytes() -> Int {
        Int(malloc_statistics_allocated_bytes())
    }

    /// Drops a file's pages from the page cache (`POSIX_FADV_DONTNEED`; the pages are clean
    /// once the store has synced), so the next open reads it from the disk.
    static func evictFromPageCache(_ path: String) {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        _ = posix_fadvise(descriptor, 0, 0, Int32(POSIX_FADV_DONTNEED))
    }

    /// Reads a file to its end, so its pages are in the page cache.
    static func readThrough(_ path: String) {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while buffer.withUnsafeMutableBytes({ read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
    }
}

/// What one timed section used: the resident set before it and its peak during it.
struct MemoryWindow {
    var residentBefore: Int
    var peakResident: Int
    var growth: Int { max(0, peakResident - residentBefore) }
}

/// Runs `body` alone on the monotonic clock, with the peak resident set reset just before it.
/// Everything a cell times goes through here.
func timedSection<Result>(_ body: () throws -> Result) rethrows -> (result: Result, seconds: Double, memory: MemoryWindow) {
    Memory.resetPeak()
    let before = Memory.resident().current
    let clock = ContinuousClock()
    let start = clock.now
    let result = try measuredBody(body)
    let elapsed = start.duration(to: clock.now).components
    let peak = max(Memory.resident().peak, before)
    let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
    return (result, seconds, MemoryWindow(residentBefore: before, peakResident: peak))
}

/// The timed work alone, outside the resident-set reads around it: the callgrind script
/// collects inside this function only.
@inline(never)
func measuredBody<Result>(_ body: () throws -> Result) rethrows -> Result {
    try body()
}
