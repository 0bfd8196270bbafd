import Foundation
import MirrorStore

extension ModelStoreBehavior {
    func checkUniqueViolations() async throws {
        let check = BehaviorCheck.uniqueViolations
        func violation(of email: String) -> StoreError.Kind {
            .uniqueViolation(typeName: "BehaviorAccount", property: "email", value: email.debugDescription)
        }
        try await withStore(check) { store in
            try await store.write { transaction in
                try await transaction.add(BehaviorAccount(id: 1, email: "hulk@example.com"))
            }
            // Against a committed object: the whole block is refused.
            try await expectStoreError("a second account with a stored email", in: check, violation(of: "hulk@example.com")) {
                try await store.write { transaction in
                    try await transaction.add(BehaviorAccount(id: 3, email: "storm@example.com"))
                    try await transaction.add(BehaviorAccount(id: 2, email: "hulk@example.com"))
                }
            }
            // Within one block.
            try await expectStoreError("two accounts with one email in a block", in: check, violation(of: "same@example.com")) {
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
        try await checkUniqueValueSpellings()
        try await checkSeveralUniqueClashes()
    }

    /// The value a violation names is spelled alike in every store, whatever its kind: a string
    /// as a Swift literal of its NFC form, numbers as Swift prints them (an unsigned one past
    /// `Int64.max` too), a link as its target's key, a compound index's values as a tuple.
    private func checkUniqueValueSpellings() async throws {
        let check = BehaviorCheck.uniqueViolations
        let (ann, bob) = (BehaviorLabel(id: "ann"), BehaviorLabel(id: "bob"))
        try await withStore(check, models: [BehaviorSeat.self]) { store in
            try await store.write { transaction in
                try await transaction.add(BehaviorSeat(id: 1, row: "K\u{F6}", number: 7, code: .max, price: 2.5, holder: ann))
                try await transaction.add(BehaviorSeat(id: 2, row: "L", number: 1, code: 5, price: -0.75))
            }
            func violation(_ property: String, _ value: String) -> StoreError.Kind {
                .uniqueViolation(typeName: "BehaviorSeat", property: property, value: value)
            }
            for (what, seat, kind) in [
                ("a stored code past Int64.max", BehaviorSeat(id: 3, row: "M", number: 1, code: .max, price: 1), violation("code", "18446744073709551615")),
                ("a stored price", BehaviorSeat(id: 3, row: "M", number: 1, code: 6, price: 2.5), violation("price", "2.5")),
                ("a stored holder", BehaviorSeat(id: 3, row: "M", number: 1, code: 6, price: 1, holder: ann), violation("holder", "\"ann\"")),
                ("a stored row and number, the row canonically equivalent",
                 BehaviorSeat(id: 3, row: "Ko\u{308}", number: 7, code: 6, price: 1), violation("row+number", "(\"K\u{F6}\", 7)")),
            ] {
                try await expectStoreError(what, in: check, kind) {
                    try await store.write { try await $0.add(seat) }
                }
            }
            try await expectStoreError("two new seats with one price in a block", in: check, violation("price", "-0.75")) {
                try await store.write { transaction in
                    try await transaction.add(BehaviorSeat(id: 4, row: "N", number: 1, code: 8, price: 9, holder: bob))
                    try await transaction.update(BehaviorSeat.self, primaryKey: 4) { $0.price = -0.75 }
                }
            }
            try expect(try await store.fetch(ModelQuery(BehaviorSeat.self).sorted(using: SortDescriptor(\.id))).map(\.id), [1, 2],
                       "the seats after the refused blocks", in: check)
        }
    }

    /// A block that breaks uniqueness in several places, against stored objects and within
    /// itself, is refused naming the same clash in every store, whatever order it wrote them in:
    /// the type first by name, then the property first by name, then the smallest value.
    private func checkSeveralUniqueClashes() async throws {
        let check = BehaviorCheck.uniqueViolations
        let ann = BehaviorLabel(id: "ann")
        func violation(_ typeName: String, _ property: String, _ value: String) -> StoreError.Kind {
            .uniqueViolation(typeName: typeName, property: property, value: value)
        }
        try await withStore(check, models: [BehaviorAccount.self, BehaviorSeat.self, BehaviorBadge.self]) { store in
            try await store.write { transaction in
                try await transaction.add(BehaviorAccount(id: 1, email: "b@example.com"))
                try await transaction.add(BehaviorSeat(id: 1, row: "K", number: 7, code: 50, price: 2.5, holder: ann))
                try await transaction.add(BehaviorSeat(id: 2, row: "L", number: 1, code: 5, price: -0.75))
                try await transaction.add(BehaviorBadge(id: 1, codes: [9, 4], names: ["x"]))
            }
            // Written first: a holder and a row and number stored, then a stored price, then a
            // code twice within the block (30), and last the smallest code clash (5, stored).
            func addSeats(_ transaction: Store.Transaction) async throws {
                try await transaction.add(BehaviorSeat(id: 3, row: "K", number: 7, code: 60, price: 1, holder: ann))
                try await transaction.add(BehaviorSeat(id: 4, row: "M", number: 1, code: 30, price: -0.75))
                try await transaction.add(BehaviorSeat(id: 5, row: "N", number: 1, code: 30, price: 3))
                try await transaction.add(BehaviorSeat(id: 6, row: "P", number: 1, code: 5, price: 4))
            }
            try await expectStoreError("seats breaking code, holder, price and row+number", in: check, violation("BehaviorSeat", "code", "5")) {
                try await store.write { try await addSeats($0) }
            }
            try await expectStoreError("badges sharing names and codes, a stored one and each other's", in: check,
                                       violation("BehaviorBadge", "codes", "4")) {
                try await store.write { transaction in
                    try await transaction.add(BehaviorBadge(id: 2, codes: [12], names: ["x", "y"]))
                    try await transaction.add(BehaviorBadge(id: 3, codes: [12, 9], names: ["y"]))
                    try await transaction.add(BehaviorBadge(id: 4, codes: [4]))
                }
            }
            try await expectStoreError("seats, badges and an account breaking uniqueness", in: check,
                                       violation("BehaviorAccount", "email", "\"b@example.com\"")) {
                try await store.write { transaction in
                    try await addSeats(transaction)
                    try await transaction.add(BehaviorBadge(id: 2, codes: [4]))
                    try await transaction.add(BehaviorAccount(id: 2, email: "b@example.com"))
                }
            }
            try expect(try await store.fetch(ModelQuery(BehaviorSeat.self)).count, 2, "the seats after the refused blocks", in: check)
            try expect(try await store.fetch(ModelQuery(BehaviorBadge.self)).count, 1, "the badges after the refused blocks", in: check)
        }
    }
}
