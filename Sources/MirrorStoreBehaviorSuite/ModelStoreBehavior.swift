import Foundation
import MirrorStore

/// The behaviour every ``MirrorStore/ModelStore`` shares, as checks any package can run against
/// its store: the file and in-memory stores in MirrorStore's tests, PostgreSQL in the backend's.
///
/// ```swift
/// @Test(arguments: BehaviorCheck.cases(reopens: true))
/// func fileStore(_ check: BehaviorCheck) async throws {
///     let directory = TemporaryDirectory()
///     let path = directory.path
///     try await ModelStoreBehavior(reopens: true) { opening in
///         var configuration = Store.Configuration()
///         configuration.schemaVersion = opening.schemaVersion
///         if let migration = opening.migration { configuration.migration = { try migration($0, $1) } }
///         return try Store(path: path + "/" + opening.place, models: opening.models, configuration: configuration)
///     }.run(check)
/// }
/// ```
///
/// A check throws a ``BehaviorMismatch`` naming what differed, or the error the store threw
/// where it should not have; it needs no test framework, so any test target can call it.
public struct ModelStoreBehavior<Store: ModelStore>: Sendable {
    /// Whether opening a place again finds what was written there: `false` for a store in
    /// memory, which ``BehaviorCheck/migrations`` then does not apply to.
    public let reopens: Bool
    let open: @Sendable (StoreOpening) async throws -> Store

    /// The suite for the stores `open` makes.
    public init(reopens: Bool, open: @escaping @Sendable (StoreOpening) async throws -> Store) {
        self.reopens = reopens
        self.open = open
    }


    /// Runs `check` on stores the factory opens, and closes them.
    ///
    /// - Throws: ``BehaviorMismatch`` when the store behaves otherwise; an error the store threw
    ///   where the check expects none.
    public func run(_ check: BehaviorCheck) async throws {
        guard BehaviorCheck.cases(reopens: reopens).contains(check) else {
            throw BehaviorMismatch(check: check, detail: "it does not apply to stores that do not reopen what they wrote")
        }
        switch check {
        case .writes: try await checkWrites()
        case .reads: try await checkReads()
        case .queries: try await checkQueries()
        case .modelBasedQueries: try await checkModelBasedQueries()
        case .migrations: try await checkMigrations()
        case .observation: try await checkObservation()
        case .watchedObservation: try await checkWatchedObservation()
        case .uniqueViolations: try await checkUniqueViolations()
        case .uniqueSwaps: try await checkUniqueSwaps()
        case .toManyLinks: try await checkToManyLinks()
        case .embeddedLinks: try await checkEmbeddedLinks()
        case .uniqueArrays: try await checkUniqueArrays()
        case .deleteRules: try await checkDeleteRules()
        case .inverses: try await checkInverses()
        case .aggregates: try await checkAggregates()
        case .errors: try await checkErrors()
        }
    }

    /// The models most checks open a store with.
    static var models: [any Persistable.Type] { [BehaviorHero.self, BehaviorPublisher.self, BehaviorAccount.self] }

    /// Runs `body` on a store the factory opens with these arguments (at a new place unless
    /// `place` is given), closing it afterwards whether `body` throws or not.
    func withStore<T>(
        _ check: BehaviorCheck, place: String? = nil, models: [any Persistable.Type] = Self.models, schemaVersion: Int = 0,
        migration: StoreOpening.MigrationBlock? = nil, startsEmpty: Bool = true, alsoEmptied: [any Persistable.Type] = [],
        _ body: (Store) async throws -> T
    ) async throws -> T {
        let opening = StoreOpening(place: place ?? "\(check)-\(UUID().uuidString)", models: models, schemaVersion: schemaVersion,
                                   migration: migration, startsEmpty: startsEmpty, alsoEmptied: alsoEmptied)
        let store = try await open(opening)
        let result: T
        do {
            result = try await body(store)
        } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
        return result
    }

    /// Throws a ``BehaviorMismatch`` unless `actual == expected`.
    func expect<T: Equatable>(_ actual: T, _ expected: T, _ what: String, in check: BehaviorCheck) throws {
        guard actual == expected else {
            throw BehaviorMismatch(check: check, detail: "\(what): expected \(expected), got \(actual)")
        }
    }

    /// Throws a ``BehaviorMismatch`` unless `body` throws an error `matches` accepts.
    func expectError(
        _ what: String, in check: BehaviorCheck, matches: (any Error) -> Bool, _ body: () async throws -> Void
    ) async throws {
        do {
            try await body()
        } catch {
            guard matches(error) else { throw BehaviorMismatch(check: check, detail: "\(what): threw \(type(of: error)) \(error)") }
            return
        }
        throw BehaviorMismatch(check: check, detail: "\(what): threw nothing")
    }

    /// Runs `body`, expecting it to throw exactly the `StoreError` of `kind`, as every store
    /// spells it.
    func expectStoreError(_ what: String, in check: BehaviorCheck, _ kind: StoreError.Kind, _ body: () async throws -> Void) async throws {
        try await expectError(what + ", expected \(StoreError(kind))", in: check, matches: { ($0 as? StoreError)?.kind == kind }, body)
    }
}
