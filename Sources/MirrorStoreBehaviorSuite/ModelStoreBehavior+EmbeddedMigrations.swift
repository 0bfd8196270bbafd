import Foundation
import MirrorStore

extension ModelStoreBehavior {
    /// An embedded model's own properties change while its parent's do not: a property renamed
    /// (a rename on the embedded type), one added (its `init()` value), one removed, one
    /// narrowed (every value checked to fit: one that does not refuses the migration and leaves
    /// the store as it was), one no longer optional (`nil` takes the `init()` value), in an
    /// embedded model, an array, an optional and a dictionary of them. Without a raised version
    /// the change is `StoreError.schemaChanged`.
    func checkEmbeddedMigrations() async throws {
        let check = BehaviorCheck.migrations
        let place = "\(check)-embedded-\(UUID().uuidString)"
        let shipments = [
            BehaviorShipmentOne(id: 1, main: BehaviorParcelOne(label: "a", weight: 5, note: "n", size: 3),
                                extra: [BehaviorParcelOne(label: "b", weight: 100)], byName: ["x": BehaviorParcelOne(label: "c", weight: -7, size: 2)]),
            BehaviorShipmentOne(id: 2, main: BehaviorParcelOne(label: "d", weight: 9), spare: BehaviorParcelOne(label: "e", weight: 1, size: 4)),
        ]
        let heavy = BehaviorShipmentOne(id: 3, main: BehaviorParcelOne(label: "f", weight: 1), extra: [BehaviorParcelOne(label: "g", weight: 300)])
        try await withStore(check, place: place, models: [BehaviorShipmentOne.self], schemaVersion: 1) { store in
            try await store.write { transaction in
                for shipment in shipments + [heavy] { try await transaction.add(shipment) }
            }
        }
        try await expectError("opening a changed embedded model without a raised version", in: check, matches: { error in
            if let error = error as? StoreError, case .schemaChanged = error.kind { return true }
            return false
        }) {
            try await withStore(check, place: place, models: [BehaviorShipmentTwo.self], schemaVersion: 1, startsEmpty: false) { _ in }
        }
        let block: StoreOpening.MigrationBlock = { migration, oldSchemaVersion in
            if oldSchemaVersion < 2 { try migration.renameProperty(onType: "BehaviorParcel", from: "label", to: "title") }
        }
        // 300 does not fit the new Int8: each store refuses with its own typed error.
        try await expectError("a migration with an embedded value that does not fit", in: check, matches: { !($0 is BehaviorMismatch) }) {
            try await withStore(check, place: place, models: [BehaviorShipmentTwo.self], schemaVersion: 2, migration: block, startsEmpty: false) { _ in }
        }
        try await withStore(check, place: place, models: [BehaviorShipmentOne.self], schemaVersion: 1, startsEmpty: false) { store in
            let stored = try await store.fetch(ModelQuery(BehaviorShipmentOne.self).sorted(using: SortDescriptor(\.id)))
            try expect(stored, shipments + [heavy], "the shipments after a refused migration", in: check)
            try await store.write { transaction in _ = try await transaction.delete(BehaviorShipmentOne.self, primaryKey: 3) }
        }
        let migrated = try await withStore(check, place: place, models: [BehaviorShipmentTwo.self], schemaVersion: 2, migration: block,
                                           startsEmpty: false) { store in
            try await store.fetch(ModelQuery(BehaviorShipmentTwo.self).sorted(using: SortDescriptor(\.id)))
        }
        try expect(migrated, [
            BehaviorShipmentTwo(id: 1, main: BehaviorParcelTwo(title: "a", weight: 5, size: 3),
                                extra: [BehaviorParcelTwo(title: "b", weight: 100)], byName: ["x": BehaviorParcelTwo(title: "c", weight: -7, size: 2)]),
            BehaviorShipmentTwo(id: 2, main: BehaviorParcelTwo(title: "d", weight: 9), spare: BehaviorParcelTwo(title: "e", weight: 1, size: 4)),
        ], "the shipments after their parcels' properties changed", in: check)
        // Opened again at the same version, nothing is different.
        let again = try await withStore(check, place: place, models: [BehaviorShipmentTwo.self], schemaVersion: 2, startsEmpty: false) { store in
            try await store.fetchCount(ModelQuery(BehaviorShipmentTwo.self))
        }
        try expect(again, 2, "the shipments opened again at version 2", in: check)
    }
}
