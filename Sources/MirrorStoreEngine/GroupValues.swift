/// The values a group commit's earlier units (and a streamed commit's earlier pieces) wrote, so
/// a later one replaces the right index keys before any of it reaches the published state.
///
/// A streamed piece's value is not kept: it stays where the piece put it in the log, and only
/// its location is recorded (8 bytes a key), so a commit of a million objects does not hold a
/// million values to answer the rare key written twice.
struct GroupValues {
    private var types: [String: WrittenValues] = [:]
    private var emptiedTypes: Set<String> = []
    /// The log streamed values are read back from; without one they are kept.
    private let log: (any LogStorage)?

    init(log: (any LogStorage)? = nil) {
        self.log = log
    }

    mutating func record(_ operations: [WriteBatch.Operation]) {
        for operation in operations { record(operation) }
    }

    mutating func record(_ operation: WriteBatch.Operation) {
        switch operation {
        case .put(let type, let key, let value): types[type, default: WrittenValues()].keep(value, for: key)
        case .delete(let type, let key): types[type, default: WrittenValues()].keep(nil, for: key)
        case .deleteAll(let type):
            types[type] = nil
            emptiedTypes.insert(type)
        case .setSchema, .setMetadata, .reserveCapacity: break
        }
    }

    /// A streamed put of `value`, which the log holds at `offset`.
    mutating func recordStreamed(type: String, key: StorageKey, value: [UInt8], offset: UInt64) {
        if log != nil, let location = WrittenValues.location(offset: offset, length: value.count) {
            types[type, default: WrittenValues()].set(location, for: key)
        } else {
            types[type, default: WrittenValues()].keep(value, for: key)
        }
    }

    /// What the recorded operations left under `key`: `.some(nil)` when they deleted it, `nil`
    /// when they did not touch it.
    func written(type: String, key: StorageKey) throws -> [UInt8]?? {
        if let values = types[type], let written = try values.value(for: key, log: log) { return written }
        if emptiedTypes.contains(type) { return .some(nil) }
        return nil
    }

    /// The value under `key` as the group has left it, else as the published state has it.
    func value(type: String, key: StorageKey, base: KeyIndex, log: any LogStorage) throws -> [UInt8]? {
        if let written = try written(type: type, key: key) { return written }
        return try Self.stored(type: type, key: key, base: base, log: log)
    }

    /// The value under `key` as the published state has it.
    static func stored(type: String, key: StorageKey, base: KeyIndex, log: any LogStorage) throws -> [UInt8]? {
        guard let (offset, length) = try base.location(type: type, key: key) else { return nil }
        try base.verify(offset: offset, length: length, in: log)
        return try log.read(at: offset, count: length)
    }
}

/// One type's written keys: each key's last write, packed in 64 bits. With the top bit set the
/// rest is a position in `kept` (a value held, or `nil` for a deletion); without it, a value's
/// place in the log: its offset (below 2^40) above 23 bits of length.
private struct WrittenValues {
    private var integers = IntegerKeyMap()
    private var others: [StorageKey: UInt64] = [:]
    private var kept: [[UInt8]?] = []

    private static let keptFlag: UInt64 = 1 << 63
    private static let lengthBits: UInt64 = 23

    /// The packed location of a value in the log, when its length fits.
    static func location(offset: UInt64, length: Int) -> UInt64? {
        guard offset < ValueLocation.offsetLimit, UInt64(length) < 1 << lengthBits else { return nil }
        return offset << lengthBits | UInt64(length)
    }

    mutating func keep(_ value: [UInt8]?, for key: StorageKey) {
        kept.append(value)
        set(Self.keptFlag | UInt64(kept.count - 1), for: key)
    }

    mutating func set(_ packed: UInt64, for key: StorageKey) {
        if case .integer(let integer) = key {
            integers.updateValue(packed, forKey: integer)
        } else {
            others[key] = packed
        }
    }

    /// The last write of `key`: `.some(nil)` for a deletion, nil when it has none.
    func value(for key: StorageKey, log: (any LogStorage)?) throws -> [UInt8]?? {
        let found: UInt64? = if case .integer(let integer) = key { integers[integer] } else { others[key] }
        guard let packed = found else { return nil }
        if packed & Self.keptFlag != 0 { return .some(kept[Int(packed & ~Self.keptFlag)]) }
        guard let log else { return nil }
        return .some(try log.read(at: packed >> Self.lengthBits, count: Int(packed & (1 << Self.lengthBits - 1))))
    }
}
