import Foundation
import MirrorStore
import TestSupport
import Testing

/// The two read defects of issue 24, as a new user met them.
@Suite struct ReadDefectTests {
    final class Street: Persistable {
        var street = ""
        init() {}
    }

    final class Label: Persistable {
        var id = 0
        var name = ""
        init() {}
        static var primaryKey: String? { "id" }
    }

    /// An embedded class declared before a link of another type.
    final class Box: Persistable {
        var id = 0
        var a: Street?
        var tag: Label?
        init() {}
        static var primaryKey: String? { "id" }
    }

    /// Two embedded values of one type.
    final class Parcel: Persistable {
        var id = 0
        var billing: Street?
        var shipping: Street?
        init() {}
        static var primaryKey: String? { "id" }
    }

    @Test("an embedded class next to a link reads back", arguments: [false, true])
    func embeddedBeforeLink(inMemory: Bool) throws {
        try withStore(models: [Box.self], inMemory: inMemory) { store in
            let box = Box()
            box.id = 1
            box.a = Street()
            box.a?.street = "1 Main St"
            box.tag = Label()
            box.tag?.id = 7
            box.tag?.name = "seven"
            try store.write { try $0.add(box) }
            let read = try #require(try store.object(Box.self, primaryKey: 1))
            #expect(read.a?.street == "1 Main St")
            #expect(read.tag?.id == 7)
            #expect(read.tag?.name == "seven")
            let all = try store.objects(Box.self).all()
            #expect(all.map { $0.a?.street } == ["1 Main St"])
            #expect(all.map { $0.tag?.name } == ["seven"])
        }
    }

    @Test("two embedded values of one type read back as themselves", arguments: [false, true])
    func twoEmbeddedOfOneType(inMemory: Bool) throws {
        try withStore(models: [Parcel.self], inMemory: inMemory) { store in
            try store.write { transaction in
                for id in 1...3 {
                    let parcel = Parcel()
                    parcel.id = id
                    parcel.billing = Street()
                    parcel.billing?.street = "\(id) Bill St"
                    parcel.shipping = Street()
                    parcel.shipping?.street = "\(id) Ship Rd"
                    try transaction.add(parcel)
                }
            }
            let one = try #require(try store.object(Parcel.self, primaryKey: 2))
            #expect(one.billing?.street == "2 Bill St")
            #expect(one.shipping?.street == "2 Ship Rd")
            let all = try store.objects(Parcel.self).all()
            #expect(all.map { $0.shipping?.street } == ["1 Ship Rd", "2 Ship Rd", "3 Ship Rd"])
            #expect(all.map { $0.billing?.street } == ["1 Bill St", "2 Bill St", "3 Bill St"])
        }
    }

    private func withStore(models: [any Persistable.Type], inMemory: Bool, _ body: (Store) throws -> Void) throws {
        if inMemory {
            try body(try Store.inMemory(models: models))
            return
        }
        let directory = TemporaryDirectory()
        let store = try Store(path: directory.file("read.store"), models: models)
        defer { try? store.close() }
        try body(store)
    }
}
