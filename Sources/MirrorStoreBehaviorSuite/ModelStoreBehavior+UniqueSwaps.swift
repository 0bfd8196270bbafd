import Foundation
import MirrorStore

extension ModelStoreBehavior {
    func checkUniqueSwaps() async throws {
        let check = BehaviorCheck.uniqueSwaps
        try await withStore(check) { store in
            try await store.write { transaction in
                try await transaction.add(BehaviorAccount(id: 1, email: "hulk@example.com"))
                try await transaction.add(BehaviorAccount(id: 2, email: "storm@example.com"))
            }
            // Each block's first write takes the email the other account still holds: only what
            // the block leaves is checked.
            try await store.write { transaction in
                try await transaction.update(BehaviorAccount.self, primaryKey: 1) { $0.email = "storm@example.com" }
                try await transaction.update(BehaviorAccount.self, primaryKey: 2) { $0.email = "hulk@example.com" }
            }
            try expect(try await store.fetch(ModelQuery(BehaviorAccount.self).sorted(using: SortDescriptor(\.id))).map(\.email),
                       ["storm@example.com", "hulk@example.com"], "the emails after the first account took the second's", in: check)
            try await store.write { transaction in
                try await transaction.add(BehaviorAccount(id: 2, email: "storm@example.com"))
                try await transaction.add(BehaviorAccount(id: 1, email: "hulk@example.com"))
            }
            try expect(try await store.fetch(ModelQuery(BehaviorAccount.self).sorted(using: SortDescriptor(\.id))).map(\.email),
                       ["hulk@example.com", "storm@example.com"], "the emails after the second account took the first's", in: check)
        }
    }
}
