import MirrorStoreEngine

/// What a write transaction has done so far, so that reads inside it see its own writes, over
/// the writes of earlier transactions that are submitted but not yet durable.
///
/// A transaction whose records pass `Streaming.threshold` bytes writes them to the log as a
/// streamed commit (`WriteStream`) instead of holding them: it then keeps, per key, only where the
/// record lies in the log (past `Streaming.keysInMemory` keys of a type, in a scratch file's key
/// runs), and reads it back from there when asked. The stream becomes visible with the
/// transaction's commit, or never.
final class PendingWrites {
    enum State {
        case written([UInt8])
        case deleted
    }

    /// When to stream the transaction's records, and to which engine.
    struct Streaming {
        let engine: StorageEngine
        /// Bytes the held records take in memory (``PendingWrites/heldWeight(of:)``) past which
        /// they are written to the log.
        let threshold: Int
        /// Keys of a type whose records are in the log held in memory before they go to a scratch file.
        let keysInMemory: Int
        /// Whether that scratch file is sealed (an encrypted store's: `StorageEngine.sealsScratchFiles`).
        var sealsScratch = false
    }

    private enum Change {
        /// New bytes, held here and not yet written.
        case held([UInt8])
        /// A deletion not yet written.
        case deleted
    }

    /// The keys of one type whose latest change is written to the stream: where the record lies
    /// (offset in the high 40 bits, length in the low 24), or `deleted`. At most `keysInMemory`
    /// keys are in memory, about 16 bytes each for integer keys; past that they go to a scratch
    /// file as sorted runs (`StreamKeyTable`), so a transaction of a million records holds
    /// neither its records nor a key per record.
    private struct StreamedKeys {
        var table: StreamKeyTable
        /// Records too long for 24 bits of length, rare enough to keep whole locations.
        var long: [StorageKey: WriteStream.Location] = [:]

        static let lengthLimit = (1 << 24) - 1
        /// A deletion's value: offset 0 is the log's header, never a record's.
        static let deleted: UInt64 = 1

        init(keysInMemory: Int, sealed: Bool) {
            table = StreamKeyTable(keysInMemory: keysInMemory, sealed: sealed)
        }

        /// Whether the key holds a record (its location) or was deleted (nil), or nil when the
        /// stream did not touch it.
        func entry(_ key: StorageKey) throws -> WriteStream.Location?? {
            // `long` is nearly always empty: not hashing the key for it is most of a lookup.
            if !long.isEmpty, let location = long[key] { return .some(location) }
            guard let packed = try table.value(for: key) else { return nil }
            if packed == Self.deleted { return .some(nil) }
            return .some(WriteStream.Location(offset: packed >> 24, length: Int(packed & UInt64(Self.lengthLimit))))
        }

        mutating func set(_ key: StorageKey, _ location: WriteStream.Location?) {
            var packed = Self.deleted
            if let location, location.length < Self.lengthLimit {
                packed = location.offset << 24 | UInt64(location.length)
                if !long.isEmpty { long[key] = nil }
            } else {
                long[key] = location
            }
            table.set(key, packed)
        }

        /// Every key, with whether it holds a record.
        func forEach(_ body: (StorageKey, Bool) -> Void) throws {
            try table.forEach { key, packed in body(key, packed != Self.deleted || (!long.isEmpty && long[key] != nil)) }
        }
    }

    /// A change not yet written. `change` is nil once the whole type was deleted after it.
    private struct Entry {
        let slot: Int
        let key: StorageKey
        var change: Change?
    }

    /// Where each unwritten change of one type lies in `entries`. Integer keys added in ascending
    /// order append to sorted arrays without hashing; strings and byte strings lie in one byte
    /// buffer each (`ByteKeyMap`), not a dictionary entry of their own.
    private struct Positions {
        var integers = IntegerKeyMap()
        var strings = ByteKeyMap()
        var byteStrings = ByteKeyMap()

        subscript(key: StorageKey) -> Int? {
            switch key {
            case .integer(let value): integers[value].map { Int($0) }
            case .string(let value): strings.value(forString: value).map { Int($0) }
            case .bytes(let value): byteStrings.value(forBytes: value).map { Int($0) }
            }
        }

        /// The key's place, or nil after giving it `next`.
        mutating func place(of key: StorageKey, orGive next: Int) -> Int? {
            let old: UInt64? = switch key {
            case .integer(let value): integers[value] ?? integers.updateValue(UInt64(next), forKey: value)
            case .string(let value): strings.valueOrInsert(UInt64(next), forString: value)
            case .bytes(let value): byteStrings.valueOrInsert(UInt64(next), forBytes: value)
            }
            return old.map { Int($0) }
        }
    }

    /// What the transaction did to one type.
    private struct TypeChanges {
        let name: String
        /// The keys whose latest change is not written yet.
        var unwritten = Positions()
        /// The keys whose latest change is written to the stream.
        var streamed: StreamedKeys
        /// Whether every stored object of the type was deleted; later writes are above.
        var cleared = false
        /// Whether that clearing is not yet written to the stream.
        var clearUnwritten = false
    }

    /// Per type touched, in the order first touched; `slots` finds a type's place by name.
    private var types: [TypeChanges] = []
    private var slots: [String: Int] = [:]
    /// The place of the type last written: a transaction writes long runs of one type, whose
    /// name is then compared instead of hashed.
    private var lastSlot = 0
    /// The changes not yet written, in the order first changed since the last write, so the
    /// batch, and the file, keep the transaction's order: records added in key order are read back
    /// without sorting or jumping around the file.
    private var entries: [Entry] = []
    /// Bytes the records held in `entries` take in memory, each weighed by `heldWeight(of:)`.
    private(set) var heldBytes = 0
    /// The most `heldBytes` reached since the transaction began, for the tests of the bound.
    private(set) var mostHeldBytes = 0
    private var streaming: Streaming?
    private var keysInMemory: Int { streaming?.keysInMemory ?? Int.max }
    private var sealsScratch: Bool { streaming?.sealsScratch ?? false }
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

    /// The place of `type`, nil when the transaction never touched it. Reads only: layers beneath
    /// are read by later transactions.
    private func slot(of type: String) -> Int? {
        if lastSlot < types.count, types[lastSlot].name == type { return lastSlot }
        return slots[type]
    }

    /// The place of `type`, made if need be.
    private func touch(_ type: String) -> Int {
        if let slot = slot(of: type) {
            lastSlot = slot
            return slot
        }
        let slot = types.count
        types.append(TypeChanges(name: type, streamed: StreamedKeys(keysInMemory: keysInMemory, sealed: sealsScratch)))
        slots[type] = slot
        lastSlot = slot
        return slot
    }

    /// The key's change not yet written, as this transaction alone left it.
    private func unwrittenChange(slot: Int, key: StorageKey) -> Change? {
        guard let position = types[slot].unwritten[key] else { return nil }
        return entries[position].change
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
    func isWritten(type: String, key: StorageKey) throws -> Bool? {
        for layer in [self] + beneath.reversed() {
            guard let slot = layer.slot(of: type) else { continue }
            switch layer.unwrittenChange(slot: slot, key: key) {
            case .held: return true
            case .deleted: return false
            case nil: break
            }
            switch try layer.types[slot].streamed.entry(key) {
            case .some(let location): return location != nil
            case nil: if layer.types[slot].cleared { return false }
            }
        }
        return nil
    }

    /// The key's state as this transaction alone left it.
    private func ownState(type: String, key: StorageKey) throws -> State? {
        guard let slot = slot(of: type) else { return nil }
        switch unwrittenChange(slot: slot, key: key) {
        case .held(let bytes): return .written(bytes)
        case .deleted: return .deleted
        case nil: break
        }
        switch try types[slot].streamed.entry(key) {
        case .some(.some(let location)): return .written(try readBack(location))
        case .some(nil): return .deleted
        case nil: return types[slot].cleared ? .deleted : nil
        }
    }

    private func readBack(_ location: WriteStream.Location) throws -> [UInt8] {
        // A location is only ever made by this transaction's stream.
        guard let stream else { throw StorageError(.closed) }
        return try stream.value(at: location)
    }

    /// The keys of `type` written (by this transaction or those beneath it) and not deleted since.
    func writtenKeys(type: String) throws -> [StorageKey] {
        try changedKeys(type: type).keys.compactMap { key, written in written ? key : nil }
    }

    /// Whether every stored object of `type` was deleted (by this transaction or those beneath
    /// it), and the keys of `type` written (true) or deleted (false) since.
    func changedKeys(type: String) throws -> (cleared: Bool, keys: [StorageKey: Bool]) {
        var keys: [StorageKey: Bool] = [:]
        var cleared = false
        for layer in [self] + beneath.reversed() {
            guard let slot = layer.slot(of: type) else { continue }
            var layerKeys: [StorageKey: Bool] = [:]
            try layer.types[slot].streamed.forEach { key, written in layerKeys[key] = written }
            for entry in layer.entries where entry.slot == slot {
                switch entry.change {
                case .held: layerKeys[entry.key] = true
                case .deleted: layerKeys[entry.key] = false
                case nil: continue
                }
            }
            keys.merge(layerKeys) { newer, _ in newer }
            if layer.types[slot].cleared {
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
        let changed = try changedKeys(type: type)
        var keys: [StorageKey: [UInt8]?] = [:]
        for (key, written) in changed.keys {
            if written, case .written(let bytes)? = try state(type: type, key: key) { keys[key] = .some(bytes) } else { keys[key] = .some(nil) }
        }
        return (changed.cleared, keys)
    }

    func put(type: String, key: StorageKey, value: [UInt8]) throws {
        record(.held(value), type: type, key: key)
        heldBytes += Self.heldWeight(of: value)
        mostHeldBytes = max(mostHeldBytes, heldBytes)
        if let streaming, heldBytes >= streaming.threshold { try writeHeld(streaming) }
    }

    func delete(type: String, key: StorageKey) {
        record(.deleted, type: type, key: key)
    }

    func deleteAll(type: String) {
        let slot = touch(type)
        for position in entries.indices where entries[position].slot == slot {
            if case .held(let bytes) = entries[position].change { heldBytes -= Self.heldWeight(of: bytes) }
            entries[position].change = nil
        }
        types[slot].unwritten = Positions()
        types[slot].streamed = StreamedKeys(keysInMemory: keysInMemory, sealed: sealsScratch)
        types[slot].cleared = true
        types[slot].clearUnwritten = true
    }

    /// What a held put costs in memory beside its value's storage: the value's header and the
    /// allocator's, its entry and its place here, and, while the held records are written, its
    /// operation in the batch and in the piece, its encoded copy and its location (heaptrack on
    /// 100,000 integer records of 25 bytes: about 320 bytes each).
    static let heldOverhead = 256

    /// The bytes a held value is counted for: its storage as allocated (an encoder reserves ahead,
    /// so a short record can take several times its length), not only its length, and the
    /// overhead of holding it. Counting lengths alone let a model of short records hold many
    /// times the threshold.
    static func heldWeight(of value: [UInt8]) -> Int {
        max(value.count, value.capacity) + heldOverhead
    }

    /// Makes `change` the key's latest, in the key's place among the unwritten changes (taken now
    /// if it has none); forgets the held bytes it replaces.
    private func record(_ change: Change, type: String, key: StorageKey) {
        let slot = touch(type)
        // One access to the type's places, which reading them apart would copy.
        if let position = types[slot].unwritten.place(of: key, orGive: entries.count) {
            if case .held(let bytes) = entries[position].change { heldBytes -= Self.heldWeight(of: bytes) }
            entries[position].change = change
        } else {
            entries.append(Entry(slot: slot, key: key, change: change))
        }
    }

    /// The changes not yet written, in order: clearing a type comes before that type's later writes.
    private func unwrittenBatch() -> WriteBatch {
        var batch = WriteBatch()
        for type in types.filter(\.clearUnwritten).map(\.name).sorted() {
            batch.deleteAll(type: type)
        }
        for entry in entries {
            switch entry.change {
            case .held(let value): batch.put(type: types[entry.slot].name, key: entry.key, value: value)
            case .deleted: batch.delete(type: types[entry.slot].name, key: entry.key)
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
        for slot in types.indices where types[slot].clearUnwritten {
            streamedTypes.insert(types[slot].name)
            types[slot].clearUnwritten = false
        }
        var streamedSlots = [Bool](repeating: false, count: types.count)
        for entry in entries {
            switch entry.change {
            case .held:
                // The batch listed the puts in this order, and the stream returns one location per put.
                guard let location = next.next() else { throw StorageError(.closed) }
                types[entry.slot].streamed.set(entry.key, location)
            case .deleted:
                types[entry.slot].streamed.set(entry.key, nil)
            case nil:
                continue
            }
            streamedSlots[entry.slot] = true
        }
        for slot in types.indices where streamedSlots[slot] { streamedTypes.insert(types[slot].name) }
        // Every change is now in `streamed`: what is held is only what comes next.
        for slot in types.indices { types[slot].unwritten = Positions() }
        entries.removeAll(keepingCapacity: true)
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
