// `--profile MODE --operations N`: one kind of operation alone, N times after a warm-up, for an
// instruction count per operation under callgrind (run twice with different N and divide the
// difference: every thread's work is counted, the event loop's decoding too).
import Foundation
import MirrorStore
import MirrorStorePostgres
import PostgresNIO

/// The operations `--profile` runs.
enum ProfileMode: String, CaseIterable {
    case storeQuery = "store-query"
    case handQuery = "hand-query"
    case storeLookup = "store-lookup"
    case handLookup = "hand-lookup"
    /// The two queries alternating, one operation each per step.
    case bothQueries = "both-queries"
    /// Only the warm-up: what the other modes' counts start from.
    case none
}

/// Runs ``profile(_:operations:store:client:items:lookupKeys:queryCategories:)`` on a store and a
/// client of its own, then exits. The main thread waits here, before the program's first
/// suspension: valgrind 3.19 crashes once an async main parks the main thread in `dispatch_main`.
func runProfile(
    _ mode: ProfileMode, operations: Int, settings: PostgresSettings, items: [BenchItem], lookupKeys: [Int], queryCategories: [Int]
) -> Never {
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do {
            let store = try await PostgresStore.open(settings, models: [BenchItem.self])
            let client = makeClient(settings)
            let runner = Task { await client.run() }
            try await profile(mode, operations: operations, store: store, client: client, items: items,
                              lookupKeys: lookupKeys, queryCategories: queryCategories)
            runner.cancel()
            await store.close()
        } catch {
            FileHandle.standardError.write(Data("mirrorstore-postgres-benchmarks: \(error)\n".utf8))
            exit(1)
        }
        done.signal()
    }
    done.wait()
    exit(0)
}

/// Fills the table when it is not already full, warms both sides up, then runs `operations`
/// operations of `mode`, checking each answer.
func profile(
    _ mode: ProfileMode, operations: Int, store: PostgresStore, client: PostgresClient, items: [BenchItem],
    lookupKeys: [Int], queryCategories: [Int]
) async throws {
    let count = try await store.objects(BenchItem.self).count()
    if count != items.count {
        try await Hand.truncate(client)
        try await client.withTransaction(logger: Hand.logger) { connection in
            for item in items { try await Hand.upsert(item, on: connection) }
        }
    }
    let expected = Dictionary(grouping: items, by: \.category)
    func storeQuery(_ number: Int) async throws {
        let category = queryCategories[number % queryCategories.count]
        let answer = try await store.objects(BenchItem.self).filter(#Predicate { $0.category == category }).all()
        try check(answer == expected[category, default: []], "MirrorStore's query of \(category) differs")
    }
    func handQuery(_ number: Int) async throws {
        let category = queryCategories[number % queryCategories.count]
        let answer = try await Hand.query(client, category)
        try check(answer == expected[category, default: []], "the hand-written query of \(category) differs")
    }
    for number in 0..<50 {
        try await storeQuery(number)
        try await handQuery(number)
        let key = lookupKeys[number % lookupKeys.count]
        _ = try await store.object(BenchItem.self, primaryKey: key)
        _ = try await Hand.lookup(client, key)
    }
    for number in 0..<operations {
        let key = lookupKeys[number % lookupKeys.count]
        switch mode {
        case .storeQuery: try await storeQuery(number)
        case .handQuery: try await handQuery(number)
        case .storeLookup: try check(try await store.object(BenchItem.self, primaryKey: key) == items[key], "MirrorStore's lookup of \(key) differs")
        case .handLookup: try check(try await Hand.lookup(client, key) == items[key], "the hand-written lookup of \(key) differs")
        case .bothQueries:
            try await storeQuery(number)
            try await handQuery(number)
        case .none: return
        }
    }
}
