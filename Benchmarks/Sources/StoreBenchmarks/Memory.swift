import CMallocStatistics
import Foundation

/// The process's memory, as the kernel and the allocator see it.
enum Memory {
    /// Resident set size and its peak (`VmRSS`, `VmHWM` in /proc/self/status), in bytes.
    static func resident() -> (current: Int, peak: Int) {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else {
            var usage = rusage()
            getrusage(RUSAGE_SELF.rawValue, &usage)
            return (0, usage.ru_maxrss * 1024)
        }
        func kilobytes(_ field: String) -> Int {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else { return 0 }
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        return (kilobytes("VmRSS") * 1024, kilobytes("VmHWM") * 1024)
    }

    /// Resets the peak resident set size to the current one (Linux ≥ 4.0: `5` into
    /// /proc/self/clear_refs), so the peak read afterwards belongs to what runs in between.
    @discardableResult
    static func resetPeak() -> Bool {
        let descriptor = open("/proc/self/clear_refs", O_WRONLY)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return write(descriptor, "5", 1) == 1
    }

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
/// Everything a cell times goes through here (the callgrind script collects inside it only).
@inline(never)
func timedSection<Result>(_ body: () throws -> Result) rethrows -> (result: Result, seconds: Double, memory: MemoryWindow) {
    Memory.resetPeak()
    let before = Memory.resident().current
    let clock = ContinuousClock()
    let start = clock.now
    let result = try body()
    let elapsed = start.duration(to: clock.now).components
    let peak = max(Memory.resident().peak, before)
    let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
    return (result, seconds, MemoryWindow(residentBefore: before, peakResident: peak))
}
