import Foundation
import MirrorStore

extension ModelStoreBehavior {
    func checkUniqueViolations() async throws {
        let check = BehaviorCheck.uniqueViolations
        func isViolation(of email: String) -> (any Error) -> Bool {
            { error in
                guard let error = error as? StoreError,
                      case .uniqueViolation(let typeName, let property, let value) = error.kind else { return false }
                return typeName == "BehaviorAccount" && property == "email" && value.contains(email)
            }
        }
        try await withStore(check) { store in
            try await store.write { transaction in
                try await transaction.add(BehaviorAccount(id: 1, email: "hulk@example.com"))
            }
            // Against a committed object: the whole block is refused.
            try await expectError("a second account with a stored email", in: check, matches: isViolation(of: "hulk@example.com")) {
                try await store.write { transaction in
                    try await transaction.add(BehaviorAccount(id: 3, email: "storm@example.com"))
                    try await transaction.add(BehaviorAccount(id: 2, email: "hulk@example.com"))
                }
            }
            // Within one block.
            try await expectError("two accounts with one email in a block", in: check, matches: isViolation(of: "same@example.com")) {
                try await store.write { transaction in
                    try await transaction.add(BehaviorAccount(id: 4, email: "same@example.com"))
                    try await transaction.add(BehaviorAccount(id: 5, email: "same@example.com"))
                }
            }
            try expect(try await store.fetch(ModelQuery(BehaviorAccount.self)), [BehaviorAccount(id: 1, email: "hulk@example.com")],
                       "the accounts after the refused blocks", in: check)

            // Replacing the owner of a value, or freeing it first, is no violation.
            try await store.write { transaction in
                try await transaction.add(BehaviorAccount(id: 1, email: "hulk@example.com"))
                try await transaction.update(BehaviorAccount.self, primaryKey: 1) { $0.email = "banner@example.com" }
                try await transaction.add(BehaviorAccount(id: 2, email: "hulk@example.com"))
            }
            try expect(try await store.fetch(ModelQuery(BehaviorAccount.self).sorted(using: SortDescriptor(\.id))).map(\.email),
                       ["banner@example.com", "hulk@example.com"], "the emails after one moved", in: check)
        }
    }
}
