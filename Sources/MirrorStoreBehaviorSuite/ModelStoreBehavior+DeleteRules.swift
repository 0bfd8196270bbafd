import Foundation
import MirrorStore

extension ModelStoreBehavior {
    func checkDeleteRules() async throws {
        let check = BehaviorCheck.deleteRules
        let ann = BehaviorMember(id: 1, name: "Ann"), bob = BehaviorMember(id: 2, name: "Bob"), cid = BehaviorMember(id: 3, name: "Cid")
        let marvel = BehaviorPublisher(id: 1, name: "Marvel"), dc = BehaviorPublisher(id: 2, name: "DC")
        try await withStore(check, models: Self.teamModels) { store in
            try await store.write { transaction in
                try await transaction.add(BehaviorTeam(id: 1, name: "Red", members: [ann, bob], reserves: [cid], sponsors: [marvel]))
                try await transaction.add(BehaviorTeam(id: 2, name: "Blue", members: [bob], sponsors: [dc]))
            }
            func isDenied(_ error: any Error) -> Bool {
                guard let error = error as? StoreError,
                      case .deleteDenied(let typeName, _, let linkedFrom, _, let property) = error.kind else { return false }
                return typeName == "BehaviorPublisher" && linkedFrom == "BehaviorTeam" && property == "sponsors"
            }
            try await expectError("deleting a sponsor a team links to", in: check, matches: isDenied) {
                try await store.write { transaction in _ = try await transaction.delete(BehaviorPublisher.self, primaryKey: 1) }
            }
            try await expectError("deleting every sponsor", in: check, matches: isDenied) {
                try await store.write { transaction in try await transaction.deleteAll(BehaviorPublisher.self) }
            }
            try expect(try await store.fetchCount(ModelQuery(BehaviorPublisher.self)), 2, "sponsors after refused deletes", in: check)

            // Deleting a team deletes its members (`.cascade`), not its reserves (no rule).
            let deleted = try await store.write { transaction in try await transaction.delete(BehaviorTeam.self, primaryKey: 1) }
            try expect(deleted, true, "deleting a team", in: check)
            try expect(try await store.fetch(ModelQuery(BehaviorMember.self).sorted(using: SortDescriptor(\.id))).map(\.id), [3],
                       "members after their team was deleted", in: check)
            try expect(try await store.object(BehaviorTeam.self, primaryKey: 2)?.members, [], "another team's member the cascade deleted",
                       in: check)

            // Nothing links to the first sponsor any more; the second goes with its team in one block.
            let sponsorsDeleted = try await store.write { transaction in
                let first = try await transaction.delete(BehaviorPublisher.self, primaryKey: 1)
                _ = try await transaction.delete(BehaviorTeam.self, primaryKey: 2)
                let second = try await transaction.delete(BehaviorPublisher.self, primaryKey: 2)
                return [first, second]
            }
            try expect(sponsorsDeleted, [true, true], "deleting sponsors no team links to", in: check)
            try expect(try await store.fetchCount(ModelQuery(BehaviorPublisher.self)), 0, "sponsors after they were deleted", in: check)

            // Several denied at once: every store names the first by type, key, then the first
            // source by type, property, key (`StoreError.deleteDenied`'s documented order).
            let sponsors = [13, 11, 12].map { BehaviorPublisher(id: $0, name: "Sponsor \($0)") }
            try await store.write { transaction in
                try await transaction.add(BehaviorTeam(id: 9, name: "Nine", sponsors: [sponsors[2]]))
                try await transaction.add(BehaviorTeam(id: 7, name: "Seven", sponsors: [sponsors[1], sponsors[0]]))
                try await transaction.add(BehaviorTeam(id: 5, name: "Five", sponsors: [sponsors[0], sponsors[1]]))
                try await transaction.add(BehaviorTeam(id: 3, name: "Three", sponsors: [sponsors[0]]))
            }
            func named(_ key: String, _ sourceKey: String) -> (any Error) -> Bool {
                { error in
                    (error as? StoreError)?.kind == .deleteDenied(
                        typeName: "BehaviorPublisher", key: key, linkedFrom: "BehaviorTeam", sourceKey: sourceKey, property: "sponsors")
                }
            }
            try await expectError("deleting every sponsor of four teams", in: check, matches: named("11", "5")) {
                try await store.write { transaction in try await transaction.deleteAll(BehaviorPublisher.self) }
            }
            try await expectError("deleting a team and every sponsor", in: check, matches: named("11", "5")) {
                try await store.write { transaction in
                    _ = try await transaction.delete(BehaviorTeam.self, primaryKey: 9)
                    try await transaction.deleteAll(BehaviorPublisher.self)
                }
            }
            try await expectError("deleting sponsors once the team linking the first by key is gone", in: check, matches: named("11", "7")) {
                try await store.write { transaction in
                    _ = try await transaction.delete(BehaviorTeam.self, primaryKey: 5)
                    try await transaction.deleteAll(BehaviorPublisher.self)
                }
            }
            try await expectError("deleting the sponsors the third team links to", in: check, matches: named("12", "9")) {
                try await store.write { transaction in
                    _ = try await transaction.delete(BehaviorTeam.self, primaryKey: 5)
                    _ = try await transaction.delete(BehaviorTeam.self, primaryKey: 7)
                    try await transaction.deleteAll(BehaviorPublisher.self)
                }
            }
        }
        try await checkDeniedKeyText()
    }

    /// Every store spells keys alike in its errors: a string as a Swift literal, a UUID as its
    /// standard string, an unsigned integer past `Int64.max` as its value.
    private func checkDeniedKeyText() async throws {
        let check = BehaviorCheck.deleteRules
        let label = BehaviorLabel(id: "l5")
        let device = BehaviorDevice(id: UUID(uuid: (0xE6, 0x21, 0xE1, 0xF8, 0xC3, 0x6C, 0x49, 0x5A, 0x93, 0xFC, 0x0C, 0x24, 0x7A, 0x3E, 0x6E, 0x5F)))
        try await withStore(check, models: [BehaviorPin.self, BehaviorLabel.self, BehaviorDevice.self]) { store in
            try await store.write { transaction in
                try await transaction.add(BehaviorPin(id: "p1", label: label, device: device))
            }
            func reads(_ text: String) -> (any Error) -> Bool {
                { error in error is StoreError && "\(error)" == text }
            }
            let labelText = "The BehaviorLabel with key \"l5\" cannot be deleted: the BehaviorPin with key \"p1\" still links to it "
                + "through label, whose delete rule is .deny; nothing was deleted. Remove the link first, or delete that BehaviorPin in the "
                + "same transaction."
            try await expectError("deleting a label keyed by a string", in: check, matches: reads(labelText)) {
                try await store.write { transaction in _ = try await transaction.delete(BehaviorLabel.self, primaryKey: "l5") }
            }
            let deviceText = "The BehaviorDevice with key E621E1F8-C36C-495A-93FC-0C247A3E6E5F cannot be deleted: the BehaviorPin with key "
                + "\"p1\" still links to it through device, whose delete rule is .deny; nothing was deleted. Remove the link first, or "
                + "delete that BehaviorPin in the same transaction."
            try await expectError("deleting a device keyed by a UUID", in: check, matches: reads(deviceText)) {
                try await store.write { transaction in _ = try await transaction.delete(BehaviorDevice.self, primaryKey: device.id) }
            }
        }
        try await withStore(check, models: [BehaviorLease.self, BehaviorLocker.self]) { store in
            try await store.write { transaction in
                try await transaction.add(BehaviorLease(id: .max - 1, locker: BehaviorLocker(id: .max)))
            }
            try await expectStoreError("deleting a locker keyed by an unsigned integer past Int64.max", in: check, .deleteDenied(
                typeName: "BehaviorLocker", key: "18446744073709551615", linkedFrom: "BehaviorLease", sourceKey: "18446744073709551614",
                property: "locker")) {
                try await store.write { transaction in _ = try await transaction.delete(BehaviorLocker.self, primaryKey: UInt64.max) }
            }
        }
    }
}
