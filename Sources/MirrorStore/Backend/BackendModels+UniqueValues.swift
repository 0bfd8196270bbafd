import Foundation
import MirrorStoreEngine

extension BackendModels {
    /// The value two objects share, as ``StoreError/Kind/uniqueViolation(typeName:property:value:)``
    /// spells it in every store: the value of a unique property, or the element of a unique array
    /// or set. Strings are Swift literals of their NFC form (`"Hulk"`), numbers their Swift
    /// spelling, a link its target's key.
    ///
    /// ```swift
    /// BackendModels.uniqueValueText(.string("Hulk"))     // "\"Hulk\""
    /// ```
    public static func uniqueValueText(_ value: RecordValue) -> String {
        (IndexKeys.key(for: QueryValue(value)) ?? .null).description
    }

    /// The values two objects share under a unique compound index, in the index's order, as
    /// ``StoreError/Kind/uniqueViolation(typeName:property:value:)`` spells them.
    ///
    /// ```swift
    /// BackendModels.uniqueValueText(compound: [.string("Avengers"), .int(7)])     // "(\"Avengers\", 7)"
    /// ```
    public static func uniqueValueText(compound values: [RecordValue]) -> String {
        IndexKey.tuple(IndexTuple(values.map { IndexKeys.key(for: QueryValue($0)) ?? .null })).description
    }
}
