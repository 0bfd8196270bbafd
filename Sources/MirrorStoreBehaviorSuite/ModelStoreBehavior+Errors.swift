import Foundation
import MirrorStore

/// An error a write block throws, which the write must rethrow as it was thrown.
struct BlockRefused: Error, Equatable {}

extension ModelStoreBehavior {
    func checkErrors() async throws {
        let check = BehaviorCheck.errors
        try await withStore(check) { store in
            try await expectError("reading a type the store was not opened with", in: check, matches: { error in
                guard let error = error as? StoreError, case .unknownModel(let typeName) = error.kind else { return false }
                return typeName == "BehaviorUnregistered"
            }) {
                _ = try await store.object(BehaviorUnregistered.self, primaryKey: 1)
            }
            try await expectError("fetching a type the store was not opened with", in: check, matches: { error in
                guard let error = error as? StoreError, case .unknownModel = error.kind else { return false }
                return true
            }) {
                _ = try await store.fetch(ModelQuery(BehaviorUnregistered.self))
            }
            try await expectError("a key of the wrong type", in: check, matches: { error in
                guard let error = error as? StoreError, case .primaryKeyMismatch(let typeName, _, _) = error.kind else { return false }
                return typeName == "BehaviorHero"
            }) {
                _ = try await store.object(BehaviorHero.self, primaryKey: "one")
            }

            // A block that throws writes nothing, and its error comes back as it was thrown.
            try await store.write { transaction in
                try await transaction.add(BehaviorHero(id: 1, name: "Hulk", age: 49))
            }
            try await expectError("a block that throws", in: check, matches: { $0 is BlockRefused }) {
                try await store.write { transaction in
                    try await transaction.add(BehaviorHero(id: 2, name: "Storm", age: 31))
                    try await transaction.update(BehaviorHero.self, primaryKey: 1) { $0.age = 50 }
                    try await transaction.deleteAll(BehaviorPublisher.self)
                    throw BlockRefused()
                }
            }
            try expect(try await store.fetch(ModelQuery(BehaviorHero.self)), [BehaviorHero(id: 1, name: "Hulk", age: 49)],
                       "the heroes after a block that threw", in: check)
            // The store is still usable.
            try await store.write { transaction in
                try await transaction.add(BehaviorHero(id: 2, name: "Storm", age: 31))
            }
            try expect(try await store.fetchCount(ModelQuery(BehaviorHero.self)), 2, "the heroes after the next block", in: check)
        }

        // A closed store refuses reads and writes with an error (of the store's own type), and
        // runs no block.
        let closed = try await open(StoreOpening(place: "\(check)-\(UUID().uuidString)", models: Self.models, schemaVersion: 0,
                                                 migration: nil, startsEmpty: true))
        try await closed.close()
        try await expectError("reading a closed store", in: check, matches: { _ in true }) {
            _ = try await closed.object(BehaviorHero.self, primaryKey: 1)
        }
        try await expectError("fetching from a closed store", in: check, matches: { _ in true }) {
            _ = try await closed.fetch(ModelQuery(BehaviorHero.self))
        }
        let blockRan = try await {
            var ran = false
            try await expectError("writing to a closed store", in: check, matches: { _ in true }) {
                try await closed.write { _ in ran = true }
            }
            return ran
        }()
        try expect(blockRan, false, "whether a write block ran on a closed store", in: check)
    }
}
