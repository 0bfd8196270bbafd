import Foundation
import Synchronization

/// The peak of the anonymous part of the resident set (`RssAnon` in /proc/self/status: the heap,
/// stacks and other private memory, not the pages of a mapped file, which the kernel may drop and
/// read again), sampled every `interval` on a thread of its own, since the kernel keeps a peak of
/// the whole resident set only (`VmHWM`).
public final class AnonymousPeak: Sendable {
    private let peak = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)

    /// Starts sampling at once.
    public init(interval: Duration = .milliseconds(5)) {
        peak.store(Self.current(), ordering: .relaxed)
        let thread = Thread { [self] in
            let nanoseconds = interval.components.seconds * 1_000_000_000 + interval.components.attoseconds / 1_000_000_000
            while !stopped.load(ordering: .acquiring) {
                record()
                var pause = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
                nanosleep(&pause, nil)
            }
            finished.store(true, ordering: .releasing)
        }
        thread.start()
    }

    /// Stops sampling and returns the highest `RssAnon` seen, in bytes (one last sample included).
    public func stop() -> Int {
        stopped.store(true, ordering: .releasing)
        while !finished.load(ordering: .acquiring) { usleep(1_000) }
        record()
        return peak.load(ordering: .relaxed)
    }

    private func record() {
        let now = Self.current()
        var seen = peak.load(ordering: .relaxed)
        while now > seen {
            let (exchanged, original) = peak.compareExchange(expected: seen, desired: now, ordering: .relaxed)
            if exchanged { break }
            seen = original
        }
    }

    /// `RssAnon` now, in bytes; 0 where /proc is missing.
    public static func current() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }) else { return 0 }
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }
}
