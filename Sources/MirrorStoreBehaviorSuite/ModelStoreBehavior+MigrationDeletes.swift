import Foundation
import MirrorStore

extension ModelStoreBehavior {
    /// A migration's `delete(_:)` follows the models' delete rules as a write transaction's
    /// delete does, on every store: once the enumerations have run, what they deleted goes at
    /// once, a `.cascade` taking the linked objects, a `.deny` from an object that stays
    /// refusing the migration (`StoreError.deleteDenied`, the store left as it was), links to
    /// deleted objects reading `nil`; objects the migration creates come after.
    func checkMigrationDeletes() async throws {
        let check = BehaviorCheck.migrations
        let place = "\(check)-deletes-\(UUID().uuidString)"
        let ann = BehaviorMember(id: 1, name: "Ann"), bob = BehaviorMember(id: 2, name: "Bob"), cid = BehaviorMember(id: 3, name: "Cid")
        let marvel = BehaviorPublisher(id: 1, name: "Marvel"), dc = BehaviorPublisher(id: 2, name: "DC")
        try await withStore(check, place: place, models: Self.teamModels, schemaVersion: 1) { store in
            try await store.write { transaction in
                try await transaction.add(BehaviorTeam(id: 1, name: "Red", members: [ann, bob], reserves: [cid], sponsors: [marvel]))
                try await transaction.add(BehaviorTeam(id: 2, name: "Blue", members: [bob], sponsors: [dc]))
            }
        }
        // The first sponsor cannot go while its team stays.
        try await expectError("a migration deleting a sponsor a team links to", in: check, matches: { error in
            (error as? StoreError)?.kind == .deleteDenied(
                typeName: "BehaviorPublisher", key: "1", linkedFrom: "BehaviorTeam", sourceKey: "1", property: "sponsors")
        }) {
            try await withStore(check, place: place, models: Self.teamModels, schemaVersion: 2,
                                migration: { migration, _ in try Self.delete("BehaviorPublisher", ids: [1], in: migration) },
                                startsEmpty: false) { _ in }
        }
        let counts = try await withStore(check, place: place, models: Self.teamModels, schemaVersion: 1, startsEmpty: false) { store in
            [try await store.fetchCount(ModelQuery(BehaviorTeam.self)), try await store.fetchCount(ModelQuery(BehaviorMember.self)),
             try await store.fetchCount(ModelQuery(BehaviorPublisher.self))]
        }
        try expect(counts, [2, 3, 2], "teams, members and sponsors after a denied migration", in: check)

        // With its team it can: the team's members go with it (`.cascade`), its reserve stays,
        // the other team's link to a deleted member reads as gone; a member created under a
        // key the cascade freed is stored.
        let migrated = try await withStore(check, place: place, models: Self.teamModels, schemaVersion: 2, migration: { migration, _ in
            try Self.delete("BehaviorTeam", ids: [1], in: migration)
            try Self.delete("BehaviorPublisher", ids: [1], in: migration)
            let again = try migration.create(ofType: "BehaviorMember")
            try again.setValue(1, forProperty: "id")
            try again.setValue("Ann again", forProperty: "name")
        }, startsEmpty: false) { store in
            (teams: try await store.fetch(ModelQuery(BehaviorTeam.self).sorted(using: SortDescriptor(\.id))),
             members: try await store.fetch(ModelQuery(BehaviorMember.self).sorted(using: SortDescriptor(\.id))),
             publishers: try await store.fetch(ModelQuery(BehaviorPublisher.self).sorted(using: SortDescriptor(\.id))))
        }
        try expect(migrated.teams.map(\.id), [2], "teams after the migration deleted one", in: check)
        try expect(migrated.teams.first?.members ?? [ann], [], "the other team's member the cascade deleted", in: check)
        try expect(migrated.members, [BehaviorMember(id: 1, name: "Ann again"), cid], "members after the cascade and the creation", in: check)
        try expect(migrated.publishers, [dc], "sponsors after the migration deleted one with its team", in: check)
    }

    /// Registers an enumeration of `typeName` deleting the objects whose `id` is in `ids`.
    private static func delete(_ typeName: String, ids: Set<Int>, in migration: any ModelMigration) throws {
        try migration.enumerateObjects(ofType: typeName) { old, new in
            if ids.contains(try old.value(forProperty: "id")) { try migration.delete(new) }
        }
    }
}
