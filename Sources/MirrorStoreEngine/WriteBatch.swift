/// The operations of one all-or-nothing commit, applied in order.
///
/// ```swift
/// var batch = WriteBatch()
/// batch.put(type: "Hero", key: .integer(1455), value: encodedHero)
/// batch.delete(type: "Hero", key: .integer(7))
/// try engine.commit(batch)
/// ```
public struct WriteBatch: Sendable {
    enum Operation: Sendable, Equatable {
        case put(type: String, key: StorageKey, value: [UInt8])
        case delete(type: String, key: StorageKey)
        case deleteAll(type: String)
        case setSchema(type: String, schema: [UInt8])
        case setMetadata(key: String, value: [UInt8])
        /// Written only by compaction: how many keys of each kind `type` is about to receive, so
        /// recovery can size the type's dictionaries once instead of growing them step by step.
        case reserveCapacity(type: String, integers: Int, strings: Int, byteStrings: Int)
    }

    private(set) var operations: [Operation] = []

    /// An empty batch.
    public init() {}

    /// Inserts or replaces the object `key` of `type`.
    public mutating func put(type: String, key: StorageKey, value: [UInt8]) {
        operations.append(.put(type: type, key: key, value: value))
    }

    /// Removes the object `key` of `type`, if present.
    public mutating func delete(type: String, key: StorageKey) {
        operations.append(.delete(type: type, key: key))
    }

    /// Removes every object of `type`; its schema stays.
    public mutating func deleteAll(type: String) {
        operations.append(.deleteAll(type: type))
    }

    /// Stores opaque schema bytes for `type`; the latest wins and compaction keeps it.
    public mutating func setSchema(type: String, schema: [UInt8]) {
        operations.append(.setSchema(type: type, schema: schema))
    }

    /// Stores opaque store-wide metadata, such as the app's schema version; the latest wins.
    public mutating func setMetadata(key: String, value: [UInt8]) {
        operations.append(.setMetadata(key: key, value: value))
    }

    /// The types whose objects the batch writes or deletes.
    public var writtenTypes: Set<String> {
        var types = Set<String>()
        for operation in operations {
            switch operation {
            case .put(let type, _, _), .delete(let type, _), .deleteAll(let type): types.insert(type)
            case .setSchema, .setMetadata, .reserveCapacity: continue
            }
        }
        return types
    }

    /// Whether the batch holds no operations; committing it writes nothing.
    public var isEmpty: Bool { operations.isEmpty }
}
