import Foundation
@testable import MirrorStoreEngine
import Testing
import TestSupport
@testable import MirrorStore

/// Values a crafted file can smuggle into a record: the decoders accept only what the encoder
/// writes, and a record read by key must hold that key (probe item 7).
@Suite struct CraftedRecordTests {
    /// Nothing links to it and it links to nothing: read on its own, straight into the model.
    struct Receipt: Persistable, Equatable {
        var identifier = 0
        var amount = Decimal(0)
        var when = Date(timeIntervalSinceReferenceDate: 0)
        init() {}
        static var primaryKey: String? { "identifier" }
    }

    /// A `Receipt` record as bytes, written value by value so that any of them can be wrong.
    static func receipt(identifier: Int64, amount: String, when: Double) -> [UInt8] {
        var writer = ByteWriter()
        writer.varint(3)
        writer.byte(3)
        writer.varint(ByteWriter.zigzag(identifier))
        writer.byte(11)
        writer.lengthPrefixed(amount)
        writer.byte(9)
        writer.uint64(when.bitPattern)
        return writer.bytes
    }

    /// A store holding the receipts and publishers given, stored under the keys given, as only a
    /// crafted file would: written through the engine, under the schemas the models declare.
    static func craft(at path: String, receipts: [Int64: [UInt8]], publishers: [Int64: [UInt8]] = [:]) throws {
        try Store(path: path, models: [Receipt.self, Hero.self]).close()
        let engine = try StorageEngine(path: path)
        var batch = WriteBatch()
        for (key, bytes) in receipts { batch.put(type: "Receipt", key: .integer(key), value: bytes) }
        for (key, bytes) in publishers { batch.put(type: "Publisher", key: .integer(key), value: bytes) }
        try engine.commit(batch)
        try engine.close()
    }

    /// Every way a store reads a receipt by key: alone, and in bulk.
    static func readErrors(_ store: Store, key: Int) -> [StoreError?] {
        [
            #expect(throws: StoreError.self) { try store.object(Receipt.self, primaryKey: key) },
            #expect(throws: StoreError.self) { try store.objects(Receipt.self).all() },
        ]
    }

    struct Label: Persistable, Equatable {
        var name = ""
        var identifier = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        init() {}
        static var primaryKey: String? { "name" }
    }

    @Test func stringKeysCompareAsStringsAndMismatchesAreNamed() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/labels.store"
            let store = try Store(path: path, models: [Label.self])
            var label = Label()
            label.name = "caf\u{E9}"
            try store.write { try $0.add(label) }
            // Another spelling of the same string finds the same object, and passes the check.
            #expect(try store.object(Label.self, primaryKey: "cafe\u{301}") == label)
            try store.close()

            var crafted = ByteWriter()
            crafted.varint(2)
            crafted.byte(7)
            crafted.lengthPrefixed("a label stored under another name")
            crafted.byte(10)
            crafted.bytes += [UInt8](repeating: 0, count: 16)
            let engine = try StorageEngine(path: path)
            var batch = WriteBatch()
            batch.put(type: "Label", key: .string("tea"), value: crafted.bytes)
            try engine.commit(batch)
            try engine.close()
            let reopened = try Store(path: path, models: [Label.self])
            defer { try? reopened.close() }
            #expect(throws: StoreError(.corruptedRecord(
                typeName: "Label", key: "\"tea\"",
                reason: "its primary key name holds \"a label stored under another name\", not the key it is stored under"))) {
                try reopened.object(Label.self, primaryKey: "tea")
            }
        }
    }

    /// A store whose last commit took the highest sequence number opens, and its first commit
    /// (here the schema of a model the file does not have yet) is refused, not a trap.
    @Test func aStoreAtTheLastSequenceRefusesItsNextCommit() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/last.store"
            var types = TypeTable()
            let (payload, _) = OperationCodec.encode([.setMetadata(key: "crafted", value: [1])], types: &types, fileOffset: 0, packing: .current)
            try Data(LogHeader(flags: 0).encoded() + LogFrame.encode(sequence: LogFrame.maximumSequence, payload: payload))
                .write(to: URL(fileURLWithPath: path))
            #expect(throws: StorageError(.sequenceExhausted(path: path, last: LogFrame.maximumSequence))) {
                try Store(path: path, models: [Receipt.self])
            }
        }
    }

    @Test func aDecimalWithTrailingTextIsDamageNotTwelve() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/receipts.store"
            try Self.craft(at: path, receipts: [5: Self.receipt(identifier: 5, amount: "12abc%%", when: 0)])
            let store = try Store(path: path, models: [Receipt.self, Hero.self])
            defer { try? store.close() }
            for error in Self.readErrors(store, key: 5) {
                #expect(error?.description == "The stored Receipt with key 5 cannot be read: byte 3 of the record: \"12abc%%\" is not a decimal number as a store writes one.")
            }
            // Text the encoder would not write, though it spells a decimal, is refused too.
            for text in ["12.50", " 12", "+12", "1e5", ".5"] {
                #expect(StoredValues.decimal(text) == nil, "\(text)")
            }
            for value in [Decimal(12), Decimal(string: "-0.001")!, Decimal.greatestFiniteMagnitude, Decimal(1) / 3] {
                #expect(StoredValues.decimal(value.description) == value, "\(value)")
            }
        }
    }

    @Test func aNaNDateIsDamageAndCannotBeWritten() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/receipts.store"
            try Self.craft(at: path, receipts: [
                6: Self.receipt(identifier: 6, amount: "1", when: .nan),
                8: Self.receipt(identifier: 8, amount: "1", when: .infinity),
            ])
            let store = try Store(path: path, models: [Receipt.self, Hero.self])
            defer { try? store.close() }
            #expect(throws: StoreError(.corruptedRecord(
                typeName: "Receipt", key: "6", reason: "byte 6 of the record: a date that is not a number (NaN), which no store writes"))) {
                try store.object(Receipt.self, primaryKey: 6)
            }
            #expect(throws: StoreError.self) { try store.objects(Receipt.self).all() }
            // An infinite date is what the encoder writes for one, and reads back.
            #expect(try store.object(Receipt.self, primaryKey: 8)?.when == Date(timeIntervalSinceReferenceDate: .infinity))

            var nan = Receipt()
            nan.identifier = 9
            nan.when = Date(timeIntervalSinceReferenceDate: .nan)
            let refused = StoreError(.unstorableValue(typeName: "Receipt", property: "when", reason: "a date that is not a number (NaN)"))
            #expect(throws: refused) { try store.write { try $0.add(nan) } }
            #expect(refused.description == "Receipt.when holds a date that is not a number (NaN), which a store cannot keep; nothing was written.")
            #expect(try store.object(Receipt.self, primaryKey: 9) == nil)
        }
    }

    @Test func aRecordHoldingAnotherKeyThanItIsStoredUnderIsDamage() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/receipts.store"
            var publisher = ByteWriter()
            publisher.varint(2)
            publisher.byte(3)
            publisher.varint(ByteWriter.zigzag(6))
            publisher.byte(7)
            publisher.lengthPrefixed("Marvel")
            try Self.craft(
                at: path, receipts: [5: Self.receipt(identifier: 6, amount: "1", when: 0), 7: Self.receipt(identifier: 7, amount: "1", when: 0)],
                publishers: [5: publisher.bytes])
            let store = try Store(path: path, models: [Receipt.self, Hero.self])
            defer { try? store.close() }
            let mismatch = StoreError(.corruptedRecord(
                typeName: "Receipt", key: "5", reason: "its primary key identifier holds 6, not the key it is stored under"))
            for error in Self.readErrors(store, key: 5) { #expect(error == mismatch) }
            #expect(mismatch.description == "The stored Receipt with key 5 cannot be read: its primary key identifier holds 6, not the key it is stored under.")
            #expect(try store.object(Receipt.self, primaryKey: 7)?.identifier == 7)
            // A type other records link to is read through its record: the same check.
            #expect(throws: StoreError(.corruptedRecord(
                typeName: "Publisher", key: "5", reason: "its primary key identifier holds 6, not the key it is stored under"))) {
                try store.object(Publisher.self, primaryKey: 5)
            }
        }
    }
}
