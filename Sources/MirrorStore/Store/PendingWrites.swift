import MirrorStoreEngine

/// What a write transaction has done so far, so that reads inside it see its own writes, over
/// the writes of earlier transactions that are submitted but not yet durable.
///
/// A transaction whose records pass `Streaming.threshold` bytes writes them to the log as a
/// streamed commit (`WriteStream`) instead of holding them: it then keeps, per key, only where the
/// record lies in the log, and reads it back from there when asked. The stream becomes visible
/// with the transaction's commit, or never.
final class PendingWrites {
    enum State {
        case written([UInt8])
        case deleted
    }

    /// When to stream the transaction's records, and to which engine.
    struct Streaming {
        let engine: StorageEngine
        /// Bytes of held records past which they are written to the log.
        let threshold: Int
    }

    private enum Change {
        /// New bytes, held here and not yet written.
        case held([UInt8])
        /// A deletion not yet written.
        case deleted
    }

    /// The keys of one type whose latest change is written to the stream: where the record lies
    /// (offset in the high 40 bits, length in the low 24), or 0 for a deletion (offset 0 is the
    /// log's header, never a record). Integer keys take about 16 bytes each in sorted arrays
    /// (``IntegerKeyMap``): a transaction of a million records keeps about 16 MiB here, and none
    /// of the records.
    private struct StreamedKeys {
        var integers = IntegerKeyMap()
        var others: [StorageKey: UInt64] = [:]
        /// Records too long for 24 bits of length, rare enough to keep whole locations.
        var long: [StorageKey: WriteStream.Location] = [:]

        static let lengthLimit = (1 << 24) - 1

        /// Whether the key holds a record (its location) or was deleted (nil), or nil when the
        /// stream did not touch it.
        func entry(_ key: StorageKey) -> WriteStream.Location?? {
            if let location = long[key] { return .some(location) }
            let packed: UInt64? = if case .integer(let value) = key { integers[value] } else { others[key] }
            guard let packed else { return nil }
            if packed == 0 { return .some(nil) }
            return .some(WriteStream.Location(offset: packed >> 24, length: Int(packed & UInt64(Self.lengthLimit))))
        }

        mutating func set(_ key: StorageKey, _ location: WriteStream.Location?) {
            var packed: UInt64 = 0
            if let location, location.length < Self.lengthLimit {
                packed = location.offset << 24 | UInt64(location.length)
                long[key] = nil
            } else {
                long[key] = location
            }
            if case .integer(let value) = key { integers[value] = packed } else { others[key] = packed }
        }

        /// Every key, with whether it holds a record.
        func forEach(_ body: (StorageKey, Bool) -> Void) {
            for (key, packed) in integers { body(.integer(key), packed != 0 || long[.integer(key)] != nil) }
            for (key, packed) in others { body(key, packed != 0 || long[key] != nil) }
        }
    }

    /// Per type, per key: the key's latest change, when it is not written yet.
    private var changes: [String: [StorageKey: Change]] = [:]
    /// Per type: the keys whose latest change is written to the stream.
    private var streamed: [String: StreamedKeys] = [:]
    /// Types whose stored objects were all deleted; later writes to them are in `changes`.
    private var clearedTypes = Set<String>()
    /// Cleared types whose clearing is not yet written to the stream.
    private var unwrittenClears = Set<String>()
    /// Keys with a change not yet written, in the order first changed since the last write, so the
    /// batch, and the file, keep the transaction's order: records added in key order are read back
    /// without sorting or jumping around the file.
    private var order: [(type: String, key: StorageKey)] = []
    /// Bytes of the records held in `changes`.
    private var heldBytes = 0
    private var streaming: Streaming?
    /// The streamed commit the records went to, once they passed the threshold.
    private(set) var stream: WriteStream?
    /// The types whose objects the stream put or deleted.
    private(set) var streamedTypes = Set<String>()
    /// The writes of earlier transactions still being committed, oldest first: the snapshot this
    /// transaction reads does not have them yet. They are never changed again.
    private let beneath: [PendingWrites]

    init(beneath: [PendingWrites] = [], streaming: Streaming? = nil) {
        self.beneath = beneath
        self.streaming = streaming
    }

    func state(type: String, key: StorageKey) throws -> State? {
        if let state = try ownState(type: type, key: key) { return state }
        for layer in beneath.reversed() {
            if let state = try layer.ownState(type: type, key: key) { return state }
        }
        return nil
    }

    /// Whether the key holds an object (true) or was deleted (false) as this transaction and
    /// those beneath it left it, nil when none of them touched it; reads no record.
    func isWritten(type: String, key: StorageKey) -> Bool? {
        for layer in [self] + beneath.reversed() {
            switch layer.changes[type]?[key] {
            case .held: return true
            case .deleted: return false
            case nil: break
            }
            switch layer.streamed[type]?.entry(key) {
            case .some(let location): return location != nil
            case nil: if layer.clearedTypes.contains(type) { return false }
            }
        }
        return nil
    }

    /// The key's state as this transaction alone left it.
    private func ownState(type: String, key: StorageKey) throws -> State? {
        switch changes[type]?[key] {
        case .held(let bytes): return .written(bytes)
        case .deleted: return .deleted
        case nil: break
        }
        switch streamed[type]?.entry(key) {
        case .some(.some(let location)): return .written(try readBack(location))
        case .some(nil): return .deleted
        case nil: return clearedTypes.contains(type) ? .deleted : nil
        }
    }

    private func readBack(_ location: WriteStream.Location) throws -> [UInt8] {
        // A location is only ever made by this transaction's stream.
        guard let stream else { throw StorageError(.closed) }
        return try stream.value(at: location)
    }

    /// The keys of `type` written (by this transaction or those beneath it) and not deleted since.
    func writtenKeys(type: String) -> [StorageKey] {
        changedKeys(type: type).keys.compactMap { key, written in written ? key : nil }
    }

    /// Whether every stored object of `type` was deleted (by this transaction or those beneath
    /// it), and the keys of `type` written (true) or deleted (false) since.
    func changedKeys(type: String) -> (cleared: Bool, keys: [StorageKey: Bool]) {
        var keys: [StorageKey: Bool] = [:]
        var cleared = false
        for layer in [self] + beneath.reversed() {
            var layerKeys: [StorageKey: Bool] = [:]
            layer.streamed[type]?.forEach { key, written in layerKeys[key] = written }
            for (key, change) in layer.changes[type] ?? [:] {
                switch change {
                case .held: layerKeys[key] = true
                case .deleted: layerKeys[key] = false
                }
            }
            keys.merge(layerKeys) { newer, _ in newer }
            if layer.clearedTypes.contains(type) {
                // What lies below the newest layer that deleted the whole type no longer counts.
                cleared = true
                break
            }
        }
        return (cleared, keys)
    }

    /// Whether every stored object of `type` was deleted (by this transaction or those beneath
    /// it), and the keys of `type` written (new bytes) or deleted (`nil`) since.
    func changes(type: String) throws -> (cleared: Bool, keys: [StorageKey: [UInt8]?]) {
        let changed = changedKeys(type: type)
        var keys: [StorageKey: [UInt8]?] = [:]
        for (key, written) in changed.keys {
            if written, case .written(let bytes)? = try state(type: type, key: key) { keys[key] = .some(bytes) } else { keys[key] = .some(nil) }
        }
        return (changed.cleared, keys)
    }

    func put(type: String, key: StorageKey, value: [UInt8]) throws {
        remember(type: type, key: key)
        changes[type, default: [:]][key] = .held(value)
        heldBytes += value.count
        if let streaming, heldBytes >= streaming.threshold { try writeHeld(streaming) }
    }

    func delete(type: String, key: StorageKey) {
        remember(type: type, key: key)
        changes[type, default: [:]][key] = .deleted
    }

    func deleteAll(type: String) {
        for case .held(let bytes) in changes[type]?.values ?? [:].values { heldBytes -= bytes.count }
        changes[type] = nil
        streamed[type] = nil
        order.removeAll { $0.type == type }
        clearedTypes.insert(type)
        unwrittenClears.insert(type)
    }

    /// Notes the key as changed since the last write, unless it already is; forgets the held
    /// bytes its new change replaces.
    private func remember(type: String, key: StorageKey) {
        switch changes[type]?[key] {
        case nil: order.append((type, key))
        case .held(let bytes): heldBytes -= bytes.count
        case .deleted: break
        }
    }

    /// The changes not yet written, in order: clearing a type comes before that type's later writes.
    private func unwrittenBatch() -> WriteBatch {
        var batch = WriteBatch()
        for type in unwrittenClears.sorted() {
            batch.deleteAll(type: type)
        }
        for entry in order {
            switch changes[entry.type]?[entry.key] {
            case .held(let value): batch.put(type: entry.type, key: entry.key, value: value)
            case .deleted: batch.delete(type: entry.type, key: entry.key)
            case nil: continue
            }
        }
        return batch
    }

    /// Writes the held changes to the stream (begun now if need be) and keeps only where each
    /// record went. A log that cannot hold a stream (format 1) keeps holding them.
    private func writeHeld(_ streaming: Streaming) throws {
        if stream == nil {
            guard let begun = try streaming.engine.beginStream() else {
                self.streaming = nil
                return
            }
            stream = begun
        }
        guard let stream else { return }
        let locations = try stream.write(unwrittenBatch())
        var next = locations.makeIterator()
        streamedTypes.formUnion(unwrittenClears)
        for entry in order {
            switch changes[entry.type]?[entry.key] {
            case .held:
                // The batch listed the puts in this order, and the stream returns one location per put.
                guard let location = next.next() else { throw StorageError(.closed) }
                streamed[entry.type, default: StreamedKeys()].set(entry.key, location)
            case .deleted:
                streamed[entry.type, default: StreamedKeys()].set(entry.key, nil)
            case nil:
                continue
            }
            streamedTypes.insert(entry.type)
        }
        // Every change is now in `streamed`: what is held is only what comes next.
        changes.removeAll()
        order.removeAll()
        unwrittenClears.removeAll()
        heldBytes = 0
    }

    /// Gives up the stream, if any: a transaction that throws leaves nothing of it visible.
    func abandon() {
        stream?.abandon()
    }

    /// The engine batch for the changes not yet written, built once at commit from their latest
    /// state, in the order first changed. With a ``stream``, the commit makes the stream and then
    /// this batch visible together.
    func makeBatch() -> WriteBatch {
        unwrittenBatch()
    }
}
