import MirrorStore

extension ModelStoreBehavior {
    /// The element `changes` yields after its first, once `writes` ran after the first; `waiting`
    /// says what a timeout waited for.
    func secondElement<Model: Persistable & Sendable>(
        of changes: sending any AsyncSequence<QueryChange<Model>, any Error>, in check: BehaviorCheck, waitingFor waiting: String, after writes: () async throws -> Void
    ) async throws -> (modifications: [Int], models: [Model]) {
        let (started, start) = AsyncStream<Void>.makeStream()
        let observer = Task { () async throws -> (modifications: [Int], models: [Model]) in
            defer { start.finish() }
            var isFirst = true
            for try await change in changes {
                if isFirst {
                    isFirst = false
                    start.yield()
                    continue
                }
                return (Array(change.modifications), change.models)
            }
            return ([], [])
        }
        defer { observer.cancel() }
        let first = Task { () async throws in
            for await _ in started { break }
        }
        try await value(of: first, within: 10, waitingFor: "the observer's first element", in: check)
        try await writes()
        return try await value(of: observer, within: 10, waitingFor: waiting, in: check)
    }
}
