import Foundation
import MirrorStore
import MirrorStoreEngine

/// An error a migration block throws, which opening must rethrow as it was thrown.
struct MigrationRefused: Error, Equatable {}

extension ModelStoreBehavior {
    func checkMigrations() async throws {
        let check = BehaviorCheck.migrations
        let place = "\(check)-\(UUID().uuidString)"
        let people = [BehaviorPersonOne(id: 1, name: "Ada Lovelace", note: "first"), BehaviorPersonOne(id: 2, name: "Grace Hopper", note: "")]
        try await withStore(check, place: place, models: [BehaviorPersonOne.self], schemaVersion: 1) { store in
            try await store.write { transaction in
                for person in people { try await transaction.add(person) }
            }
        }

        // A changed model needs a raised version.
        try await expectError("opening a changed model without a raised version", in: check, matches: { error in
            if let error = error as? StoreError, case .schemaChanged = error.kind { return true }
            return false
        }) {
            try await withStore(check, place: place, models: [BehaviorPersonTwo.self], schemaVersion: 1, startsEmpty: false) { _ in }
        }

        // A migration that throws changes nothing, and its error comes back as it was thrown.
        try await expectError("a migration block that throws", in: check, matches: { $0 is MigrationRefused }) {
            try await withStore(check, place: place, models: [BehaviorPersonTwo.self], schemaVersion: 2, migration: { _, _ in
                throw MigrationRefused()
            }, startsEmpty: false) { _ in }
        }

        let versions = VersionsSeen()
        let migrated = try await withStore(check, place: place, models: [BehaviorPersonTwo.self], schemaVersion: 2, migration: { migration, oldSchemaVersion in
            versions.record(old: oldSchemaVersion, new: migration.newSchemaVersion)
            if oldSchemaVersion < 2 { try migration.renameProperty(onType: "BehaviorPerson", from: "name", to: "fullName") }
        }, startsEmpty: false) { store in
            try await store.fetch(ModelQuery(BehaviorPersonTwo.self).sorted(using: SortDescriptor(\.id)))
        }
        try expect(versions.seen, [[1, 2]], "the versions the migration block saw", in: check)
        try expect(migrated, [BehaviorPersonTwo(id: 1, fullName: "Ada Lovelace", age: 42), BehaviorPersonTwo(id: 2, fullName: "Grace Hopper", age: 42)],
                   "the people after renaming name, adding age and removing note", in: check)

        // Opened again at the same version, nothing migrates; a lower version is refused.
        let again = try await withStore(check, place: place, models: [BehaviorPersonTwo.self], schemaVersion: 2, migration: { _, _ in
            throw MigrationRefused()
        }, startsEmpty: false) { store in
            try await store.fetchCount(ModelQuery(BehaviorPersonTwo.self))
        }
        try expect(again, 2, "the people opened again at version 2", in: check)
        try await expectError("opening with a lower version", in: check, matches: { error in
            if let error = error as? StoreError, case .newerSchemaVersion = error.kind { return true }
            return false
        }) {
            try await withStore(check, place: place, models: [BehaviorPersonTwo.self], schemaVersion: 1, startsEmpty: false) { _ in }
        }

        try await checkMigrationSteps()
        try await checkMigrationDeletes()
        try await checkEmbeddedMigrations()
        try await checkEmbeddedRenames()
        try await checkEmbeddedConversions()
    }
}

/// The versions a migration block was called with, from whatever thread the store runs it on.
private final class VersionsSeen: Sendable {
    private let versions = Lock<[[Int]]>([])
    var seen: [[Int]] { versions.withLock { $0 } }
    func record(old: Int, new: Int) { versions.withLock { $0.append([old, new]) } }
}
