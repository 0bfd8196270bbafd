import Foundation
import MirrorStoreEngine

extension StoreInspector {
    /// Calls `body` with every stored record of `typeName` that satisfies `condition`, in key
    /// order, as ``forEachRecord(of:_:)`` does for all of them.
    ///
    /// ```swift
    /// try inspector.forEachRecord(of: "Hero", where: #"age >= 30 && publisher.name == "Marvel""#) { record in
    ///     print(record)
    /// }
    /// ```
    ///
    /// The condition compares stored properties with values: `==`, `!=`, `<`, `<=`, `>`, `>=`,
    /// combined with `&&`, `||`, `!` and parentheses. Values are quoted strings (with `\"`, `\\`,
    /// `\n`, `\t`, `\r` and `\u{…}` escapes), integers, doubles, `true`, `false` and `nil`; a
    /// string stands for a date (ISO 8601), a UUID or a URL where the property holds one.
    /// `publisher.name` reads a property of a linked or embedded model, `nil` when the link is.
    /// A property alone, `isActive`, tests a `Bool` for `true`. A condition is decided on the
    /// stored values as Swift would decide the same predicate on the models; a comparison it
    /// cannot decide from them (a link to an object that is gone, say) does not match.
    ///
    /// - Throws: ``QueryError`` for a condition that does not parse, names a property the type
    ///   does not store, or compares it with a value of another kind; ``StoreError`` when the type
    ///   is unknown or a record does not decode; what `body` throws.
    public func forEachRecord(of typeName: String, where condition: String, _ body: (ManagedObject) throws -> Void) throws {
        guard let schema = schemas.schema(named: typeName) else { throw StoreError(.unknownModel(typeName: typeName)) }
        let root = PredicateExpressions.Variable<Int>().key
        let node = try ConditionParser.parse(condition, schema: schema, schemas: schemas, root: root)
        let snapshot = engine.snapshot()
        let onRecords = RecordConditions(schema: schema, conditions: [(node, root)], snapshot: snapshot, schemas: schemas)
        let reader = RecordReader(snapshot: snapshot, schemas: schemas)
        try snapshot.forEachEntryInKeyOrder(type: typeName) { key, bytes in
            if try onRecords.isTrue(0, for: onRecords.record(bytes, key: key), key: key) == true {
                try body(try reader.record(type: typeName, key: key, bytes: bytes))
            }
        }
    }
}
