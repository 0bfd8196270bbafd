import Foundation
import MirrorStore

extension ModelStoreBehavior {
    /// Embedded models whose type is renamed (`renameType(from:to:)`), in a property, an array,
    /// an optional and a dictionary, one embedded in the other: a rename alone, then a rename
    /// with a change of the renamed model's properties (one renamed, one added), read back
    /// value for value; both in one migration; a rename from a type the store does not hold is
    /// refused and leaves the store as it was.
    func checkEmbeddedRenames() async throws {
        let check = BehaviorCheck.migrations
        let place = "\(check)-embedded-renames-\(UUID().uuidString)"
        let deliveries = [
            BehaviorDeliveryOne(id: 1, main: BehaviorBoxOne(label: "a", weight: 5, lid: "red"),
                                extra: [BehaviorBoxOne(label: "b", weight: 6), BehaviorBoxOne(label: "c", weight: 7, lid: "blue")],
                                byName: ["x": BehaviorBoxOne(label: "d", weight: 8, lid: "green")]),
            BehaviorDeliveryOne(id: 2, main: BehaviorBoxOne(label: "e", weight: 9), spare: BehaviorBoxOne(label: "f", weight: 10, lid: "black")),
        ]
        let ordered = { (store: Store) in try await store.fetch(ModelQuery(BehaviorDeliveryOne.self).sorted(using: SortDescriptor(\.id))) }
        // A server's places may be one database: each place is written and migrated in turn.
        let writeDeliveries = { (target: String) in
            try await withStore(check, place: target, models: [BehaviorDeliveryOne.self], schemaVersion: 1) { store in
                try await store.write { transaction in
                    for delivery in deliveries { try await transaction.add(delivery) }
                }
            }
        }
        let cartons = [
            BehaviorDeliveryThree(id: 1, main: BehaviorCartonThree(title: "a", weight: 5, lid: "red"),
                                  extra: [BehaviorCartonThree(title: "b", weight: 6), BehaviorCartonThree(title: "c", weight: 7, lid: "blue")],
                                  byName: ["x": BehaviorCartonThree(title: "d", weight: 8, lid: "green")]),
            BehaviorDeliveryThree(id: 2, main: BehaviorCartonThree(title: "e", weight: 9), spare: BehaviorCartonThree(title: "f", weight: 10, lid: "black")),
        ]
        try await writeDeliveries(place + "-at-once")
        let atOnce = try await withStore(check, place: place + "-at-once", models: [BehaviorDeliveryThree.self], schemaVersion: 3, migration: { migration, _ in
            try migration.renameType(from: "BehaviorBox", to: "BehaviorCarton")
            try migration.renameProperty(onType: "BehaviorCarton", from: "label", to: "title")
            try migration.renameType(from: "BehaviorLid", to: "BehaviorCap")
        }, startsEmpty: false) { store in
            try await store.fetch(ModelQuery(BehaviorDeliveryThree.self).sorted(using: SortDescriptor(\.id)))
        }
        try expect(atOnce, cartons, "the deliveries after their boxes became cartons in one migration", in: check)

        try await writeDeliveries(place)
        try await expectError("renaming an embedded type the store does not hold", in: check, matches: { !($0 is BehaviorMismatch) }) {
            try await withStore(check, place: place, models: [BehaviorDeliveryTwo.self], schemaVersion: 2, migration: { migration, _ in
                try migration.renameType(from: "BehaviorNoSuchBox", to: "BehaviorCrate")
            }, startsEmpty: false) { _ in }
        }
        let refused = try await withStore(check, place: place, models: [BehaviorDeliveryOne.self], schemaVersion: 1, startsEmpty: false, ordered)
        try expect(refused, deliveries, "the deliveries after a refused rename", in: check)

        let crates = try await withStore(check, place: place, models: [BehaviorDeliveryTwo.self], schemaVersion: 2, migration: { migration, oldSchemaVersion in
            if oldSchemaVersion < 2 {
                try migration.renameType(from: "BehaviorBox", to: "BehaviorCrate")
                try migration.renameType(from: "BehaviorLid", to: "BehaviorCap")
            }
        }, startsEmpty: false) { store in
            try await store.fetch(ModelQuery(BehaviorDeliveryTwo.self).sorted(using: SortDescriptor(\.id)))
        }
        try expect(crates, [
            BehaviorDeliveryTwo(id: 1, main: BehaviorCrateTwo(label: "a", weight: 5, lid: "red"),
                                extra: [BehaviorCrateTwo(label: "b", weight: 6), BehaviorCrateTwo(label: "c", weight: 7, lid: "blue")],
                                byName: ["x": BehaviorCrateTwo(label: "d", weight: 8, lid: "green")]),
            BehaviorDeliveryTwo(id: 2, main: BehaviorCrateTwo(label: "e", weight: 9), spare: BehaviorCrateTwo(label: "f", weight: 10, lid: "black")),
        ], "the deliveries after their boxes became crates", in: check)
        // Opened again at the same version, the renamed types are known by their new names.
        let again = try await withStore(check, place: place, models: [BehaviorDeliveryTwo.self], schemaVersion: 2, startsEmpty: false) { store in
            try await store.fetchCount(ModelQuery(BehaviorDeliveryTwo.self))
        }
        try expect(again, 2, "the deliveries opened again at version 2", in: check)

        let fromCrates = try await withStore(check, place: place, models: [BehaviorDeliveryThree.self], schemaVersion: 3, migration: { migration, oldSchemaVersion in
            if oldSchemaVersion < 3 {
                try migration.renameType(from: "BehaviorCrate", to: "BehaviorCarton")
                try migration.renameProperty(onType: "BehaviorCarton", from: "label", to: "title")
            }
        }, startsEmpty: false) { store in
            try await store.fetch(ModelQuery(BehaviorDeliveryThree.self).sorted(using: SortDescriptor(\.id)))
        }
        try expect(fromCrates, cartons, "the deliveries after their crates became cartons with a renamed and an added property", in: check)
    }
}
