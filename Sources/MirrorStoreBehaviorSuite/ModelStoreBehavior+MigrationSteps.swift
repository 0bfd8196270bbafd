import Foundation
import MirrorStore

extension ModelStoreBehavior {
    /// One migration block, written against `ModelMigration`, run on every store: a type
    /// renamed, two old properties joined into a new one by an enumeration that also deletes,
    /// an object created; and the same block failing halfway leaves the store as it was.
    func checkMigrationSteps() async throws {
        let check = BehaviorCheck.migrations
        let place = "\(check)-steps-\(UUID().uuidString)"
        let contacts = [
            BehaviorContactOne(id: 1, firstName: "Ada", lastName: "Lovelace", note: ""),
            BehaviorContactOne(id: 2, firstName: "Grace", lastName: "Hopper", note: "gone"),
            BehaviorContactOne(id: 3, firstName: "Hedy", lastName: "Lamarr", note: ""),
        ]
        try await withStore(check, place: place, models: [BehaviorContactOne.self], schemaVersion: 1, alsoEmptied: [BehaviorFriend.self]) { store in
            try await store.write { transaction in
                for contact in contacts { try await transaction.add(contact) }
            }
        }

        // Throws from the enumeration of the last contact, after the others were migrated.
        try await expectError("a migration whose enumeration throws halfway", in: check, matches: { $0 is MigrationRefused }) {
            try await withStore(check, place: place, models: [BehaviorFriend.self], schemaVersion: 2, migration: { migration, oldSchemaVersion in
                try Self.migrateContacts(migration, oldSchemaVersion: oldSchemaVersion, check: check, refusing: 3)
            }, startsEmpty: false) { _ in }
        }
        let unchanged = try await withStore(check, place: place, models: [BehaviorContactOne.self], schemaVersion: 1, startsEmpty: false) { store in
            try await store.fetch(ModelQuery(BehaviorContactOne.self).sorted(using: SortDescriptor(\.id)))
        }
        try expect(unchanged, contacts, "the contacts after a migration that threw", in: check)

        let friends = try await withStore(check, place: place, models: [BehaviorFriend.self], schemaVersion: 2, migration: { migration, oldSchemaVersion in
            try Self.migrateContacts(migration, oldSchemaVersion: oldSchemaVersion, check: check, refusing: nil)
        }, startsEmpty: false) { store in
            try await store.fetch(ModelQuery(BehaviorFriend.self).sorted(using: SortDescriptor(\.id)))
        }
        try expect(friends, [
            BehaviorFriend(id: 1, fullName: "Ada Lovelace", visits: 1),
            BehaviorFriend(id: 3, fullName: "Hedy Lamarr", visits: 1),
            BehaviorFriend(id: 4, fullName: "Katherine Johnson", visits: 7),
        ], "the friends after renaming the type, joining the names, deleting one and creating one", in: check)
    }

    /// The block every store runs: `BehaviorContact` becomes `BehaviorFriend`, whose
    /// `fullName` joins the old first and last names; contacts noted "gone" are deleted, and
    /// one friend is created. With `refusing`, the enumeration throws at that contact.
    private static func migrateContacts(_ migration: any ModelMigration, oldSchemaVersion: Int, check: BehaviorCheck, refusing: Int?) throws {
        guard oldSchemaVersion < 2 else { return }
        try migration.renameType(from: "BehaviorContact", to: "BehaviorFriend")
        // After the rename, the old schema is found by the new name.
        guard migration.oldSchema(ofType: "BehaviorFriend")?.property(named: "firstName") != nil,
              migration.newSchema(ofType: "BehaviorFriend")?.property(named: "fullName") != nil else {
            throw BehaviorMismatch(check: check, detail: "the old and new schemas of BehaviorFriend: got \(String(describing: migration.oldSchema(ofType: "BehaviorFriend"))) and \(String(describing: migration.newSchema(ofType: "BehaviorFriend")))")
        }
        try migration.enumerateObjects(ofType: "BehaviorFriend") { old, new in
            let id: Int = try old.value(forProperty: "id")
            if id == refusing { throw MigrationRefused() }
            if try old.value(forProperty: "note", as: String.self) == "gone" {
                try migration.delete(new)
                return
            }
            let first: String = try old.value(forProperty: "firstName")
            let last: String = try old.value(forProperty: "lastName")
            try new.setValue("\(first) \(last)", forProperty: "fullName")
        }
        let created = try migration.create(ofType: "BehaviorFriend")
        try created.setValue(4, forProperty: "id")
        try created.setValue("Katherine Johnson", forProperty: "fullName")
        try created.setValue(7, forProperty: "visits")
    }
}
