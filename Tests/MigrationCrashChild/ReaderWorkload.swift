#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MirrorStore
import TestSupport

/// Observation across processes (issue 28): the parent writes `Tick`s, a child reading beside it
/// observes them and says which it saw.
public enum ReaderWorkload {
    public struct Tick: Persistable, Equatable {
        public var identifier = 0
        public var count = 0
        public init() {}
        public init(identifier: Int, count: Int) {
            self.identifier = identifier
            self.count = count
        }
        public static var primaryKey: String? { "identifier" }
    }

    /// `observe <store>`: opens the store read-only, observes every `Tick`, and prints
    /// "seen <count>" with the highest count each time the observer wakes; "ready <pid>" once the
    /// first state is delivered. Ends when stdin closes.
    static func observe(path: String) async -> Int32 {
        do {
            var configuration = Store.Configuration()
            configuration.access = .readOnly
            configuration.refreshInterval = .milliseconds(5)
            let store = try Store(path: path, models: [Tick.self], configuration: configuration)
            let watcher = Task {
                var first = true
                for try await change in try store.objects(Tick.self).changes {
                    let highest = try change.results.all().map(\.count).max() ?? 0
                    say(first ? "ready \(getpid())" : "seen \(highest)")
                    first = false
                }
            }
            await Task.detached {
                while getchar() != EOF {}
            }.value
            watcher.cancel()
            try store.close()
            return 0
        } catch {
            say("error \(error)")
            return 1
        }
    }
}
