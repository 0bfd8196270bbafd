import Foundation
import MirrorStore

extension ModelStoreBehavior {
    func checkWrites() async throws {
        let check = BehaviorCheck.writes
        try await withStore(check) { store in
            let marvel = BehaviorPublisher(id: 1, name: "Marvel")
            let returned = try await store.write { transaction in
                try await transaction.add(BehaviorHero(id: 1, name: "Hulk", age: 49, publisher: marvel))
                try await transaction.add(BehaviorHero(id: 2, name: "Storm", age: 31, tags: ["weather", "x"]))
                // The block reads its own writes.
                return try await transaction.object(BehaviorHero.self, primaryKey: 2)?.name
            }
            try expect(returned, "Storm", "a read in the block of an object it added", in: check)
            try expect(try await store.object(BehaviorPublisher.self, primaryKey: 1), marvel, "the linked publisher, saved with its hero", in: check)

            // Adding under a stored key replaces the object.
            try await store.write { transaction in
                try await transaction.add(BehaviorHero(id: 2, name: "Ororo", age: 32))
            }
            try expect(try await store.object(BehaviorHero.self, primaryKey: 2), BehaviorHero(id: 2, name: "Ororo", age: 32),
                       "the object added again under its key", in: check)
            try expect(try await store.fetchCount(ModelQuery(BehaviorHero.self)), 2, "the count after a replace", in: check)

            let (updated, missing) = try await store.write { transaction in
                let updated = try await transaction.update(BehaviorHero.self, primaryKey: 1) { $0.age += 1 }
                let missing = try await transaction.update(BehaviorHero.self, primaryKey: 99) { $0.age += 1 }
                return (updated, missing)
            }
            try expect(updated?.age, 50, "the model update returns", in: check)
            try expect(missing, nil, "an update of a missing key", in: check)
            try expect(try await store.object(BehaviorHero.self, primaryKey: 1)?.age, 50, "the updated age, read back", in: check)
            try expect(try await store.object(BehaviorHero.self, primaryKey: 1)?.publisher, marvel, "the link after an update", in: check)

            // One property set by key path, the record written as stored: links and the rest kept.
            let (renamed, renamedMissing) = try await store.write { transaction in
                let renamed = try await transaction.update(BehaviorHero.self, primaryKey: 1, set: \.nickname, to: "Green")
                let missing = try await transaction.update(BehaviorHero.self, primaryKey: 99, set: \.nickname, to: "None")
                return (renamed, missing)
            }
            try expect(renamed?.nickname, "Green", "the model an update by key path returns", in: check)
            try expect(renamedMissing, nil, "an update by key path of a missing key", in: check)
            let afterSet = try await store.object(BehaviorHero.self, primaryKey: 1)
            try expect(afterSet?.nickname, "Green", "the property set by key path, read back", in: check)
            try expect(afterSet?.age, 50, "the other properties after an update by key path", in: check)
            try expect(afterSet?.publisher, marvel, "the link after an update by key path", in: check)
            try await store.write { transaction in
                try await transaction.update(BehaviorHero.self, primaryKey: 1, set: \.nickname, to: nil)
            }
            try expect(try await store.object(BehaviorHero.self, primaryKey: 1)?.nickname, nil, "a property set to nil by key path", in: check)

            let (deleted, deletedAgain) = try await store.write { transaction in
                let deleted = try await transaction.delete(BehaviorHero.self, primaryKey: 2)
                let deletedAgain = try await transaction.delete(BehaviorHero.self, primaryKey: 2)
                return (deleted, deletedAgain)
            }
            try expect(deleted, true, "deleting a stored key", in: check)
            try expect(deletedAgain, false, "deleting a key the block deleted", in: check)
            try expect(try await store.object(BehaviorHero.self, primaryKey: 2), nil, "a deleted object", in: check)

            try await store.write { transaction in
                try await transaction.add(BehaviorHero(id: 3, name: "Thor", age: 1500))
                try await transaction.deleteAll(BehaviorHero.self)
                try await transaction.add(BehaviorHero(id: 4, name: "Loki", age: 1050))
            }
            try expect(try await store.fetch(ModelQuery(BehaviorHero.self)).map(\.id), [4], "the heroes after deleteAll and an add", in: check)
            try expect(try await store.fetchCount(ModelQuery(BehaviorPublisher.self)), 1, "publishers, which deleteAll of heroes keeps",
                       in: check)
        }
    }
}
