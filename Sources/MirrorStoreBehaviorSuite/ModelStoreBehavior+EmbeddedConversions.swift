import Foundation
import MirrorStore

extension ModelStoreBehavior {
    /// A kind change inside an embedded model that no automatic rule makes (`String` to `Int`):
    /// refused without a block; with the embedded type enumerated (it has no objects of its own,
    /// so its property takes the model's `init()` value) and its parent enumerated to convert
    /// from `old`, every value is read back converted.
    func checkEmbeddedConversions() async throws {
        let check = BehaviorCheck.migrations
        let place = "\(check)-embedded-conversions-\(UUID().uuidString)"
        let meters = [BehaviorMeterOne(id: 1, reading: "12"), BehaviorMeterOne(id: 2, reading: "x")]
        try await withStore(check, place: place, models: [BehaviorMeterOne.self], schemaVersion: 1) { store in
            try await store.write { transaction in
                for meter in meters { try await transaction.add(meter) }
            }
        }
        try await expectError("an embedded kind change without a block", in: check, matches: { !($0 is BehaviorMismatch) }) {
            try await withStore(check, place: place, models: [BehaviorMeterTwo.self], schemaVersion: 2, migration: { _, _ in }, startsEmpty: false) { _ in }
        }
        let converted = try await withStore(check, place: place, models: [BehaviorMeterTwo.self], schemaVersion: 2, migration: { migration, _ in
            try migration.enumerateObjects(ofType: "BehaviorGauge") { _, _ in }
            try migration.enumerateObjects(ofType: "BehaviorMeter") { old, new in
                guard case .object(let before) = old["gauge"], case .object(let after) = new["gauge"] else { return }
                let gauge = ManagedObject(objectSchema: after.objectSchema)
                try gauge.setValue(Int(try before.value(forProperty: "reading", as: String.self)) ?? -1, forProperty: "reading")
                try new.setValue(.object(gauge), forProperty: "gauge")
            }
        }, startsEmpty: false) { store in
            try await store.fetch(ModelQuery(BehaviorMeterTwo.self).sorted(using: SortDescriptor(\.id)))
        }
        try expect(converted, [BehaviorMeterTwo(id: 1, reading: 12), BehaviorMeterTwo(id: 2, reading: -1)], "the meters after their gauges' readings were converted", in: check)
    }
}
