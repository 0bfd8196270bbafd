import Foundation
import MirrorStore

/// What an observer watching key paths saw in its element after the first.
private struct WatchedElement: Sendable, Equatable {
    var modifications: [Int]
    var age: Int?
    var publisherName: String?
    var publisherCountry: String?
}

extension WatchedElement {
    /// What an element of watched heroes says of its first hero.
    init(_ element: (modifications: [Int], models: [BehaviorHero])) {
        let hulk = element.models.first
        self.init(modifications: element.modifications, age: hulk?.age, publisherName: hulk?.publisher?.name,
                  publisherCountry: hulk?.publisher?.country)
    }
}

extension ModelStoreBehavior {
    func checkWatchedObservation() async throws {
        let check = BehaviorCheck.watchedObservation
        try await withStore(check) { store in
            try await store.write { transaction in
                try await transaction.add(BehaviorHero(id: 1, name: "Hulk", age: 49, publisher: BehaviorPublisher(id: 1, name: "Marvel", country: "US")))
                try await transaction.add(BehaviorHero(id: 2, name: "Batman", age: 45, publisher: BehaviorPublisher(id: 2, name: "DC", country: "US")))
            }
            let query = ModelQuery(BehaviorHero.self).sorted(using: SortDescriptor(\.id))
            let changes = try store.changes(query, keyPaths: [\.name, \.publisher?.name])
            // Not watched: the hero's age, the publisher's country. Then watched, through the link: its name.
            let seen = WatchedElement(try await secondElement(of: changes, in: check, waitingFor: "the watched change to reach the observer") {
                try await store.write { transaction in
                    try await transaction.update(BehaviorHero.self, primaryKey: 1) { $0.age = 50 }
                }
                try await store.write { transaction in
                    try await transaction.update(BehaviorPublisher.self, primaryKey: 1) { $0.country = "USA" }
                }
                try await store.write { transaction in
                    try await transaction.update(BehaviorPublisher.self, primaryKey: 1) { $0.name = "Marvel Comics" }
                }
            })
            // Had an unwatched commit made an element, it would hold the old name.
            try expect(seen, WatchedElement(modifications: [0], age: 50, publisherName: "Marvel Comics", publisherCountry: "USA"),
                       "the element after the publisher's name changed", in: check)
            try await expectError("watching a path through a property that is no link", in: check, matches: { $0 is QueryError }) {
                _ = try store.changes(query, keyPaths: [\.name.count])
            }
        }
        try await checkWatchedLink()
        try await checkWatchedDeletedTargets()
    }

    /// A key path that ends at a link watches the link, the object it points to, not what that
    /// object holds: a change of the linked publisher is no modification, linking another is.
    private func checkWatchedLink() async throws {
        let check = BehaviorCheck.watchedObservation
        try await withStore(check) { store in
            try await store.write { transaction in
                try await transaction.add(BehaviorHero(id: 1, name: "Hulk", age: 49, publisher: BehaviorPublisher(id: 1, name: "Marvel", country: "US")))
                try await transaction.add(BehaviorPublisher(id: 2, name: "DC", country: "US"))
            }
            let changes = try store.changes(ModelQuery(BehaviorHero.self).sorted(using: SortDescriptor(\.id)), keyPaths: [\.publisher])
            // Not watched: the linked publisher's values, the hero's age. Then watched: the link.
            let seen = WatchedElement(try await secondElement(of: changes, in: check, waitingFor: "the changed link to reach the observer") {
                try await store.write { transaction in
                    try await transaction.update(BehaviorPublisher.self, primaryKey: 1) { $0.name = "Marvel Comics" }
                }
                try await store.write { transaction in
                    try await transaction.update(BehaviorHero.self, primaryKey: 1) { $0.age = 50 }
                }
                try await store.write { transaction in
                    try await transaction.update(BehaviorHero.self, primaryKey: 1) { $0.publisher = BehaviorPublisher(id: 2, name: "DC", country: "US") }
                }
            })
            // Had a change of the linked publisher made an element, it would name Marvel.
            try expect(seen, WatchedElement(modifications: [0], age: 50, publisherName: "DC", publisherCountry: "US"),
                       "the element after the hero's link changed", in: check)
        }
    }
}
