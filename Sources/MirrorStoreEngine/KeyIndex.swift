/// Where a value's bytes lie in the log, packed into 64 bits: offset in the high 40 bits,
/// length in the low 24. Longer values store `lengthSentinel` and keep their true length in
/// `KeyIndex.largeValueLengths`, so the common case costs 8 bytes per object.
/// Where a value lies in the log of the snapshot that gave it, as the key table records it.
/// A query keeps the locations of the records it tested, so that reading them again (to make
/// models) looks no key up: ``TypeValues/value(at:)`` reads one, in that snapshot only.
public struct ValueLocation: Hashable, Sendable {
    static let offsetLimit: UInt64 = 1 << 40
    static let lengthSentinel: UInt64 = (1 << 24) - 1

    let packed: UInt64

    init(offset: UInt64, length: Int) {
        packed = offset << 24 | min(UInt64(length), Self.lengthSentinel)
    }

    init(packed: UInt64) {
        self.packed = packed
    }

    var offset: UInt64 { packed >> 24 }
    var isLarge: Bool { packed & Self.lengthSentinel == Self.lengthSentinel }
    var shortLength: Int { Int(packed & Self.lengthSentinel) }
}

/// The objects of one type: the persisted key runs of the last checkpoint (`KeyRun`, newest
/// first), and in memory what changed since, a compact map per key kind (`IntegerKeyMap`, 16
/// bytes an integer key; `ByteKeyMap`, about 24 bytes a string or byte-string key beside its bytes). A key's location
/// is the memory part's, else the newest run's that mentions it; location 0 marks a key deleted
/// since a run recorded it (offset 0 is the header, never a value).
struct TypeIndex: Sendable {
    /// The fields, behind one reference: reading a type out of `KeyIndex.types` copies one
    /// pointer rather than a dozen fields (a lookup paid for that copy twice over), and a change
    /// copies the fields only when a snapshot shares them.
    fileprivate final class Storage: @unchecked Sendable {
        // @unchecked: a `Storage` is changed only through `TypeIndex.unique()`, when no other
        // `TypeIndex` (and so no snapshot on another thread) refers to it and no snapshot has
        // shown it (`shown`). The same discipline makes every access exclusive, so the lookups'
        // fields skip the runtime's check, which cost a lookup as much as hashing its key.
        @exclusivity(unchecked) var runs: [KeyRun] = []
        @exclusivity(unchecked) var integers = IntegerKeyMap()
        @exclusivity(unchecked) var strings = ByteKeyMap()
        @exclusivity(unchecked) var byteStrings = ByteKeyMap()
        var fileOrder: Memo<FileOrder.Sorted>?
        var keyOrder: Memo<FileOrder.Sorted>?
        var schema: [UInt8]?
        var liveBytes = 0
        var count = 0
        /// Set by the writer, under the engine's lock, once a snapshot has shown these fields
        /// (``KeyIndex/markShown()``); never cleared: a copy starts unshown.
        var shown = false

        /// ``TypeIndex/location(forInteger:)``. The map and the runs are read where these fields
        /// hold them: a copy of either out of them was a retain and a release of its buffers per
        /// lookup. Each run is borrowed without a retain: no one changes the runs of fields a
        /// snapshot may read (`unique()`), so the array keeps it alive while it is asked.
        func location(forInteger value: Int64) throws -> UInt64? {
            if !integers.isEmpty, let packed = integers[value] { return packed == 0 ? nil : packed }
            var index = 0
            while index < runs.count {
                let run = runs.unretainedElement(index)
                if let packed = try run._withUnsafeGuaranteedRef({ try $0.packed(forInteger: value) }) {
                    return packed == 0 ? nil : packed
                }
                index += 1
            }
            return nil
        }

        /// The location the runs alone hold for a string key, each run borrowed without a
        /// retain, as in ``location(forInteger:)``.
        func persistedLocation(of probe: StringProbe) throws -> UInt64? {
            var index = 0
            while index < runs.count {
                let run = runs.unretainedElement(index)
                if let packed = try run._withUnsafeGuaranteedRef({ try $0.packed(for: probe) }) { return packed == 0 ? nil : packed }
                index += 1
            }
            return nil
        }

        func copy() -> Storage {
            let copy = Storage()
            copy.runs = runs
            copy.integers = integers
            copy.strings = strings
            copy.byteStrings = byteStrings
            copy.fileOrder = fileOrder
            copy.keyOrder = keyOrder
            copy.schema = schema
            copy.liveBytes = liveBytes
            copy.count = count
            return copy
        }
    }

    private var storage = Storage()

    private mutating func unique() {
        // Fields a snapshot showed are changed in a copy even when no snapshot holds them any
        // more. In place, the change would be ordered after the readers' last reads only by the
        // reference count's atomics, which ThreadSanitizer does not see (the Swift runtime is not
        // instrumented), so it reported a race; a copy of the fields is one allocation a type.
        if !isKnownUniquelyReferenced(&storage) || storage.shown { storage = storage.copy() }
    }

    /// Marks these fields as shown by a snapshot: the next change copies them (`unique()`).
    func markShown() {
        storage.shown = true
    }

    /// What identifies the fields behind these objects, for tests that a change made a copy.
    var storageIdentity: ObjectIdentifier { ObjectIdentifier(storage) }

    /// Persisted runs, newest first.
    private(set) var runs: [KeyRun] {
        get { storage.runs }
        set { unique(); storage.runs = newValue }
    }
    private(set) var integers: IntegerKeyMap {
        get { storage.integers }
        set { unique(); storage.integers = newValue }
        _modify { unique(); yield &storage.integers }
    }
    private(set) var strings: ByteKeyMap {
        get { storage.strings }
        set { unique(); storage.strings = newValue }
        _modify { unique(); yield &storage.strings }
    }
    private(set) var byteStrings: ByteKeyMap {
        get { storage.byteStrings }
        set { unique(); storage.byteStrings = newValue }
        _modify { unique(); yield &storage.byteStrings }
    }
    /// The objects in file order, once a scan has put them so, shared by every snapshot of these
    /// objects (sorting the locations was a seventh of a scan, paid again by every query of the
    /// same objects): dropped by any change to them, so it never describes other objects.
    private(set) var fileOrder: Memo<FileOrder.Sorted>? {
        get { storage.fileOrder }
        set { unique(); storage.fileOrder = newValue }
    }
    /// The objects in key order, kept as `fileOrder` is: every read in key order of every object
    /// (fetching all, aggregates) sorted the keys again.
    private(set) var keyOrder: Memo<FileOrder.Sorted>? {
        get { storage.keyOrder }
        set { unique(); storage.keyOrder = newValue }
    }
    var schema: [UInt8]? {
        get { storage.schema }
        set { unique(); storage.schema = newValue }
    }
    /// Encoded bytes of this type's live objects and schema.
    /// Signed: canonically equal strings with different UTF-8 lengths make the tally approximate, never a trap.
    var liveBytes: Int {
        get { storage.liveBytes }
        set { unique(); storage.liveBytes = newValue }
    }
    /// Live objects.
    private(set) var count: Int {
        get { storage.count }
        set { unique(); storage.count = newValue }
    }

    /// A type whose `count` objects lie in `runs`, as a checkpoint records it.
    init(runs: [KeyRun], count: Int, schema: [UInt8]?, liveBytes: Int) {
        self.runs = runs
        self.count = count
        self.schema = schema
        self.liveBytes = liveBytes
    }

    init() {}

    var isVacant: Bool { count == 0 && schema == nil }
    /// Whether every key is an integer: then scans key their items by the integer itself.
    var onlyIntegers: Bool {
        strings.isEmpty && byteStrings.isEmpty && runs.allSatisfy { if case .integers = $0.fences { true } else { false } }
    }
    /// Entries held in memory, deletions of persisted keys included.
    var memoryCount: Int { integers.count + strings.count + byteStrings.count }

    // The memory's maps are read where the storage holds them, and a key is hashed before its map
    // is read: a call between reading a map out of the storage and searching it that the compiler
    // cannot see through (the hash reads a seed drawn once per process) made it copy the map for
    // the search, a retain and a release of each of its buffers per lookup, which neither a `_read`
    // accessor nor a borrowing parameter avoided. Right after a checkpoint the memory is empty, and
    // a lookup need not hash its key.
    private func memoryValue(_ key: StorageKey) -> UInt64? {
        switch key {
        case .integer(let value):
            return storage.integers.isEmpty ? nil : storage.integers[value]
        case .string(let value):
            return storage.strings.isEmpty ? nil : StringProbe.with(value) { memoryValue(of: $0) }
        case .bytes(let value):
            guard !storage.byteStrings.isEmpty else { return nil }
            let hash = ByteKeyMap.hash(value)
            return storage.byteStrings.value(for: value, hash: hash)
        }
    }

    /// The value the memory's map of string keys holds for `probe`, or nil.
    private func memoryValue(of probe: StringProbe) -> UInt64? {
        guard !storage.strings.isEmpty else { return nil }
        let hash = ByteKeyMap.hash(probe.bytes)
        return storage.strings.value(for: probe.bytes, hash: hash)
    }

    /// The packed location of `key`'s value, or nil when it is not stored. Throws when a run
    /// block it must read is damaged.
    func location(for key: StorageKey) throws -> UInt64? {
        if case .integer(let value) = key { return try location(forInteger: value) }
        if case .string(let text) = key { return try StringProbe.with(text) { try location(of: $0) } }
        if let packed = memoryValue(key) { return packed == 0 ? nil : packed }
        return try persistedLocation(for: key)
    }

    /// `location(for: .string(…))`, the key's canonical bytes made once for the memory and every run.
    func location(of probe: StringProbe) throws -> UInt64? {
        if let packed = memoryValue(of: probe) { return packed == 0 ? nil : packed }
        return try storage.persistedLocation(of: probe)
    }

    /// `location(for: .integer(value))`, the common case, without a `StorageKey` to pass around.
    func location(forInteger value: Int64) throws -> UInt64? {
        try storage.location(forInteger: value)
    }

    /// These objects' fields, referred to without a retain of their own: for a reader that holds
    /// this `TypeIndex` where no one changes it (a snapshot's constant list of types) while it
    /// asks, and whose call on a copy of it was a retain and a release of the fields per read.
    var unretained: Unretained { Unretained(storage: Unmanaged.passUnretained(storage)) }

    /// ``TypeIndex``'s fields without a retain (``unretained``).
    struct Unretained {
        fileprivate let storage: Unmanaged<Storage>

        /// ``TypeIndex/location(forInteger:)``.
        @inline(__always)
        func location(forInteger value: Int64) throws -> UInt64? {
            try storage._withUnsafeGuaranteedRef { try $0.location(forInteger: value) }
        }
    }

    /// The location the runs alone hold for `key`.
    func persistedLocation(for key: StorageKey) throws -> UInt64? {
        if case .string(let text) = key { return try StringProbe.with(text) { try storage.persistedLocation(of: $0) } }
        for index in runs.indices {
            if let packed = try runs[index].packed(for: key) { return packed == 0 ? nil : packed }
        }
        return nil
    }

    @discardableResult
    private mutating func setMemory(_ key: StorageKey, _ packed: UInt64) -> UInt64? {
        switch key {
        case .integer(let value): return integers.updateValue(packed, forKey: value)
        case .string(let value): return strings.updateValue(packed, forString: value)
        case .bytes(let value): return byteStrings.updateValue(packed, for: value)
        }
    }

    private mutating func removeMemory(_ key: StorageKey) {
        switch key {
        case .integer(let value): integers[value] = nil
        case .string(let value): strings.removeValue(forString: value)
        case .bytes(let value): byteStrings.removeValue(for: value)
        }
    }

    /// Stores `packed` for `key`, counting `size` live bytes, and returns the location it replaced.
    mutating func set(_ key: StorageKey, _ packed: UInt64, adding size: Int) throws -> UInt64? {
        let old: UInt64?
        if runs.isEmpty {
            // Nothing to read that could fail: one hash of the key finds and replaces.
            let replaced = setMemory(key, packed)
            old = replaced == 0 ? nil : replaced
        } else {
            // Found before anything changes, so that a damaged run leaves the objects as they were.
            old = try location(for: key)
            setMemory(key, packed)
        }
        unique()
        storage.liveBytes += size
        storage.fileOrder = nil
        storage.keyOrder = nil
        if old == nil { storage.count += 1 }
        return old
    }

    /// Stores `packed` for `key` in memory without reading what it replaces, for a table that
    /// keeps no count (`StreamKeyTable`): a lookup still finds the newest value first, and a
    /// set reads no run block.
    mutating func overwrite(_ key: StorageKey, _ packed: UInt64) {
        setMemory(key, packed)
    }

    mutating func reserveCapacity(integers: Int, strings: Int, byteStrings: Int) {
        if integers > 0 { self.integers.reserveCapacity(integers) }
        if strings > 0 { self.strings.reserveCapacity(strings) }
        if byteStrings > 0 { self.byteStrings.reserveCapacity(byteStrings) }
    }

    /// Removes `key` and returns the location it had, or nil when it was not stored.
    @discardableResult
    mutating func remove(_ key: StorageKey) throws -> UInt64? {
        let inMemory = memoryValue(key)
        if inMemory == 0 { return nil }
        // Read once: it is the old location when the memory does not hold the key, and a key a
        // run holds stays deleted only through a mark that hides it.
        let persisted = try persistedLocation(for: key)
        guard let old = inMemory ?? persisted else { return nil }
        unique()
        storage.fileOrder = nil
        storage.keyOrder = nil
        storage.count -= 1
        if persisted != nil { setMemory(key, 0) } else { removeMemory(key) }
        return old
    }

    /// The same objects with the memory entries and the `merged` newest runs written as the one
    /// run `run` (nil when they left no entry), in front of the older runs.
    func replacingRuns(_ merged: Int, with run: KeyRun?) -> TypeIndex {
        var next = TypeIndex(runs: (run.map { [$0] } ?? []) + runs.dropFirst(merged), count: count, schema: schema, liveBytes: liveBytes)
        next.fileOrder = fileOrder
        next.keyOrder = keyOrder
        return next
    }

    /// Whether ``provideFileOrderCache()`` has a cache to give.
    var lacksFileOrderCache: Bool { fileOrder == nil || keyOrder == nil }

    /// Gives these objects a place to keep their file order and key order, if they have none.
    mutating func provideFileOrderCache() {
        if fileOrder == nil { fileOrder = Memo() }
        if keyOrder == nil { keyOrder = Memo() }
    }

    /// Every key, in no particular order.
    func keys() throws -> [StorageKey] {
        var result: [StorageKey] = []
        result.reserveCapacity(count)
        try forEach { key, _ in result.append(key) }
        return result
    }

    /// The memory entries in key order, deletion marks included.
    func sortedMemoryEntries() -> SortedMemoryEntries {
        SortedMemoryEntries(integers: integers, strings: strings, byteStrings: byteStrings)
    }

    /// Calls `body` with every live key and its location, in key order (``StorageKey/precedes(_:_:)``).
    func forEachInKeyOrder(_ body: (StorageKey, UInt64) throws -> Void) throws {
        let memory = sortedMemoryEntries()
        guard !runs.isEmpty else {
            for (key, packed) in memory where packed != 0 { try body(key, packed) }
            return
        }
        try RunMerge.forEachNewest([RunMerge.Cursor(entries: memory)] + runs.map(RunMerge.Cursor.init)) { key, packed in
            if packed != 0 { try body(key, packed) }
        }
    }

    /// Calls `body` with every live key and its location: the runs' keys in key order, then the
    /// memory's in no particular order.
    func forEach(_ body: (StorageKey, UInt64) throws -> Void) throws {
        if !runs.isEmpty {
            try RunMerge.forEachLive(runs) { key, packed in
                if memoryValue(key) == nil { try body(key, packed) }
            }
        }
        for (key, packed) in integers where packed != 0 { try body(.integer(key), packed) }
        try strings.forEachEntry { entry in
            let packed = strings.value(at: entry)
            if packed != 0 { try body(.string(String(decoding: strings.key(at: entry), as: UTF8.self)), packed) }
        }
        try byteStrings.forEachEntry { entry in
            let packed = byteStrings.value(at: entry)
            if packed != 0 { try body(.bytes(Array(byteStrings.key(at: entry))), packed) }
        }
    }
}

/// The whole in-memory state of a store: object locations per type, schemas, metadata.
/// A value type: a snapshot is a copy, and copy-on-write keeps taking one cheap.
struct KeyIndex: Sendable {
    var types: [String: TypeIndex] = [:] {
        // A changed or added type may lack the caches every snapshot used to find in place.
        didSet { cachesProvided = false }
    }
    /// Every type has its file-order and key-order caches: taking a snapshot need not look.
    private var cachesProvided = false
    var metadata: [String: [UInt8]] = [:]
    /// True lengths of values too long for `ValueLocation`, by value offset.
    var largeValueLengths: [UInt64: UInt64] = [:]
    var metadataBytes: Int = 0
    /// The compact put encodings the log's writer uses, those of its format (every file of the
    /// current format has them all): `liveBytes` counts each put as its writer encodes it.
    var packing = OperationCodec.Packing.current
    /// The secondary indexes the newest checkpoint persisted, by name, for the layer above to
    /// reuse when it defines them (`SecondaryIndexes`); the engine's indexes in force are kept
    /// apart from the objects, in `SecondaryIndexes`.
    var persistedIndexes: [String: PersistedIndex] = [:]
    /// Checksums of the log the checkpoint this state was opened from covers, checked as values
    /// are read from there; nil when every unit was replayed (and so checked) at open.
    var regions: CoveredRegions?

    /// Checks the bytes of the value at `offset` against the checkpoint's checksums.
    func verify(offset: UInt64, length: Int, in log: any LogStorage) throws {
        try regions?.verify(offset: offset, length: length, in: log)
    }

    /// Gives each type's objects a place to keep their file order, so that the snapshots taken
    /// from this state share one (a copy of a state without one would compute its own).
    mutating func provideFileOrderCaches() {
        guard !cachesProvided else { return }
        // Each type changed where it lies, by its position: a list of the names that lacked
        // caches, each hashed again to be found, was most of a snapshot's cost after a commit.
        var position = types.values.startIndex
        while position != types.values.endIndex {
            if types.values[position].lacksFileOrderCache { types.values[position].provideFileOrderCache() }
            types.values.formIndex(after: &position)
        }
        cachesProvided = true
    }

    /// Marks every type's fields as shown by a snapshot (``TypeIndex/markShown()``), so that no
    /// later change writes where a reader of that snapshot read.
    func markShown() {
        for objects in types.values { objects.markShown() }
    }

    /// Payload bytes the live state needs; the rest of the file is dead and compaction drops it.
    var liveBytes: Int {
        max(0, types.values.reduce(metadataBytes) { $0 + $1.liveBytes })
    }

    func location(type: String, key: StorageKey) throws -> (offset: UInt64, length: Int)? {
        guard let packed = try types[type]?.location(for: key) else { return nil }
        return resolve(packed)
    }

    /// Bytes the persisted key runs and index runs take: live, since open reads through them.
    var runBytes: Int {
        let keyRuns = types.values.reduce(0) { total, objects in objects.runs.reduce(total) { $0 + $1.byteCount } }
        return persistedIndexes.values.reduce(keyRuns) { total, index in index.runs.reduce(total) { $0 + $1.byteCount } }
    }

    /// The bytes of `log` that the key runs and persisted index runs take: `runBytes` less the
    /// runs a streamed commit wrote to a scratch file.
    func runBytes(in log: any LogStorage) -> Int {
        let keyRuns = types.values.reduce(0) { total, objects in
            objects.runs.reduce(total) { $0 + ($1.log === log ? $1.byteCount : 0) }
        }
        return persistedIndexes.values.reduce(keyRuns) { total, index in
            index.runs.reduce(total) { $0 + ($1.log === log ? $1.byteCount : 0) }
        }
    }

    func resolve(_ packed: UInt64) -> (offset: UInt64, length: Int) {
        let location = ValueLocation(packed: packed)
        if location.isLarge, let length = largeValueLengths[location.offset] {
            return (location.offset, Int(length))
        }
        return (location.offset, location.shortLength)
    }

    /// The bytes a put of `key` takes in the log, as its writer encodes it: a plain put is an
    /// opcode, a type id (one byte for the first 128 types), the key, the value's length and the
    /// value; in a file that packs integer puts (``packing``) such a put is only its length and
    /// value, since a run of consecutive keys names none and the run's own header and a sparse
    /// run's steps are a byte or two shared or per key, counted as overhead like unit frames; in
    /// one that packs byte-string puts such a put is its key's bytes, its length and value, the
    /// run's header shared.
    private func entrySize(_ key: StorageKey, valueLength: Int) -> Int {
        let value = ByteWriter.varintSize(UInt64(valueLength)) + valueLength
        switch key {
        case .integer where packing.integers: return value
        case .bytes(let bytes) where packing.byteKeys: return bytes.count + value
        default: return 2 + OperationCodec.encodedSize(of: key) + value
        }
    }

    private static func blobSize(_ name: String, _ bytes: [UInt8]) -> Int {
        (2 + name.utf8.count + ByteWriter.varintSize(UInt64(bytes.count)) + bytes.count)
    }

    mutating func put(type: String, key: StorageKey, offset: UInt64, length: Int) throws {
        let location = ValueLocation(offset: offset, length: length)
        if location.isLarge { largeValueLengths[offset] = UInt64(length) }
        let added = entrySize(key, valueLength: length)
        let old = try types[type, default: TypeIndex()].set(key, location.packed, adding: added)
        if let old { forget(type: type, key: key, packed: old) }
    }

    /// Sizes `type`'s dictionaries for the keys about to arrive, never beyond `limit` in all.
    mutating func reserveCapacity(type: String, integers: Int, strings: Int, byteStrings: Int, limit: Int) {
        var budget = max(0, limit)
        func take(_ wanted: Int) -> Int {
            let granted = min(wanted, budget)
            budget -= granted
            return granted
        }
        let (integers, strings, byteStrings) = (take(integers), take(strings), take(byteStrings))
        types[type, default: TypeIndex()].reserveCapacity(integers: integers, strings: strings, byteStrings: byteStrings)
    }

    mutating func delete(type: String, key: StorageKey) throws {
        guard let old = try types[type]?.remove(key) else { return }
        forget(type: type, key: key, packed: old)
        dropIfVacant(type)
    }

    mutating func deleteAll(type: String) throws {
        guard let current = types[type] else { return }
        if !largeValueLengths.isEmpty {
            try current.forEach { _, packed in
                let location = ValueLocation(packed: packed)
                if location.isLarge { largeValueLengths[location.offset] = nil }
            }
        }
        var emptied = TypeIndex()
        emptied.schema = current.schema
        emptied.liveBytes = current.schema.map { Self.blobSize(type, $0) } ?? 0
        types[type] = emptied
        dropIfVacant(type)
    }

    mutating func setSchema(type: String, schema: [UInt8]) {
        if let old = types[type]?.schema {
            types[type, default: TypeIndex()].liveBytes -= Self.blobSize(type, old)
        }
        types[type, default: TypeIndex()].schema = schema
        types[type, default: TypeIndex()].liveBytes += Self.blobSize(type, schema)
    }

    mutating func setMetadata(key: String, value: [UInt8]) {
        if let old = metadata.updateValue(value, forKey: key) {
            metadataBytes -= Self.blobSize(key, old)
        }
        metadataBytes += Self.blobSize(key, value)
    }

    private mutating func forget(type: String, key: StorageKey, packed: UInt64) {
        let (offset, length) = resolve(packed)
        if ValueLocation(packed: packed).isLarge { largeValueLengths[offset] = nil }
        types[type, default: TypeIndex()].liveBytes -= entrySize(key, valueLength: length)
    }

    private mutating func dropIfVacant(_ type: String) {
        if types[type]?.isVacant == true { types[type] = nil }
    }

    /// Applies a unit's operations. `capacityLimit` caps what capacity hints may reserve
    /// (recovery passes a bound derived from the file's size).
    mutating func apply(_ operations: [DecodedOperation], capacityLimit: Int = Int(Int32.max)) throws {
        var hinted: [String] = []
        for operation in operations {
            switch operation {
            case .put(let type, let key, let offset, let length):
                try put(type: type, key: key, offset: offset, length: length)
            case .delete(let type, let key):
                try delete(type: type, key: key)
            case .deleteAll(let type):
                try deleteAll(type: type)
            case .setSchema(let type, let schema):
                setSchema(type: type, schema: schema)
            case .setMetadata(let key, let value):
                setMetadata(key: key, value: value)
            case .reserveCapacity(let type, let integers, let strings, let byteStrings):
                reserveCapacity(type: type, integers: integers, strings: strings, byteStrings: byteStrings, limit: capacityLimit)
                hinted.append(type)
            }
        }
        // A hint alone must not make a type appear.
        for type in hinted { dropIfVacant(type) }
    }

    /// Reads every run block that applying `operations` will look keys up in, so that a damaged
    /// one refuses the commit before it is written rather than after.
    func checkReadable(_ operations: [WriteBatch.Operation]) throws {
        for operation in operations {
            switch operation {
            case .put(let type, let key, _), .delete(let type, let key):
                if let objects = types[type], !objects.runs.isEmpty { _ = try objects.persistedLocation(for: key) }
            case .deleteAll(let type):
                if let objects = types[type], !objects.runs.isEmpty, !largeValueLengths.isEmpty { try objects.forEach { _, _ in } }
            case .setSchema, .setMetadata, .reserveCapacity:
                break
            }
        }
    }

    /// Throws when applying `operations` would read a persisted block that fails its check:
    /// the decoded form of ``checkReadable(_:)-([WriteBatch.Operation])``, for a reader applying a
    /// writer's commits.
    func checkReadable(_ operations: [DecodedOperation]) throws {
        for operation in operations {
            switch operation {
            case .put(let type, let key, _, _), .delete(let type, let key):
                if let objects = types[type], !objects.runs.isEmpty { _ = try objects.persistedLocation(for: key) }
            case .deleteAll(let type):
                if let objects = types[type], !objects.runs.isEmpty, !largeValueLengths.isEmpty { try objects.forEach { _, _ in } }
            case .setSchema, .setMetadata, .reserveCapacity:
                break
            }
        }
    }
}
