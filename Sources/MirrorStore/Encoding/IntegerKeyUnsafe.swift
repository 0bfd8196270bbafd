import MirrorStoreEngine

extension PrimaryKey {
    /// The key of `value` when it is an `Int` or an `Int64`, found by comparing its type with
    /// theirs and read as the bits it is; nil for any other type. The key ``storageKey(for:)``
    /// makes of such a value's `recordValue`, without that `RecordValue` made, switched over and
    /// destroyed: a read by key runs unspecialised, where that cost most of turning its key into
    /// a storage key.
    @inline(__always)
    static func integerKey<Value: RecordPrimitive>(_ value: Value) -> StorageKey? {
        // Sound: the sizes agree, since the types are the same.
        if Value.self == Int.self { return .integer(Int64(unsafeBitCast(value, to: Int.self))) }
        if Value.self == Int64.self { return .integer(unsafeBitCast(value, to: Int64.self)) }
        return nil
    }
}
