import Foundation

/// The process's resident set as the kernel reports it, for the benchmarks' peak-memory columns.
public enum ResidentSet {
    /// Resident set size and its peak (`VmRSS`, `VmHWM` in /proc/self/status), in bytes.
    public static func current() -> (current: Int, peak: Int) {
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
    public static func resetPeak() -> Bool {
        let descriptor = open("/proc/self/clear_refs", O_WRONLY)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return write(descriptor, "5", 1) == 1
    }
}
