/// A consistent, immutable view of a store as of one acknowledged commit.
///
/// Taking one is cheap (the index is copy-on-write) and it never sees part of a commit.
/// Reads go to the log generation the snapshot was taken from, so they keep working while
/// the engine commits or compacts.
///
/// ```swift
/// let snapshot = engine.snapshot()
/// if let bytes = try snapshot.value(type: "Hero", key: .integer(1455)) { decode(bytes) }
/// ```
public struct EngineSnapshot: Sendable {
    /// The snapshot's parts behind one reference, which the engine keeps until its state
    /// changes: taking a snapshot, and each copy of one, was a retain and a release of each part
    /// of the index, more than a lookup by key then cost.
    private final class Parts: Sendable {
        let index: KeyIndex
        let generation: any LogStorage
        let secondary: SecondaryIndexes
        let sequence: UInt64
        let version: UInt64
        let formatVersion: UInt32
        /// The types and their objects in a list, when there are at most `listedTypes` of them: a
        /// read by key compares its type's name with each (equal names are mostly one string,
        /// which `==` finds from its bits alone), where hashing the name to find it in
        /// `index.types` cost more than the rest of finding the key's location.
        private let listed: [(name: String, objects: TypeIndex)]?
        static let listedTypes = 8

        init(index: KeyIndex, generation: any LogStorage, secondary: SecondaryIndexes, sequence: UInt64, version: UInt64, formatVersion: UInt32) {
            self.index = index
            self.generation = generation
            self.secondary = secondary
            self.sequence = sequence
            self.version = version
            self.formatVersion = formatVersion
            listed = index.types.count <= Self.listedTypes ? index.types.map { (name: $0.key, objects: $0.value) } : nil
        }

        /// Where the value at the packed location `packed` lies, checked against the
        /// checkpoint's checksums when it lies where they cover. Here, on the parts themselves:
        /// read through the snapshot's `index` getter, each call copied the index (a retain and
        /// a release of each of its tables) for every value read.
        func span(ofPacked packed: UInt64) throws -> (offset: UInt64, length: Int) {
            let (offset, length) = index.resolve(packed)
            try index.verify(offset: offset, length: length, in: generation)
            return (offset, length)
        }

        /// The packed location of `key` of `type`, or nil; here for the same reason. An integer
        /// key's type is asked without a retain of its fields (`TypeIndex.unretained`): `listed`
        /// is a constant of these parts, which the caller holds, and a call on a copy of the type
        /// was a retain and a release of its fields per read by key.
        func location(type: String, key: StorageKey) throws -> UInt64? {
            guard let listed else { return try index.types[type]?.location(for: key) }
            var position = 0
            while position < listed.count {
                if listed[position].name == type {
                    guard case .integer(let value) = key else { return try listed[position].objects.location(for: key) }
                    let objects = listed[position].objects.unretained
                    return try objects.location(forInteger: value)
                }
                position += 1
            }
            return nil
        }

        /// `index.types[type]`, found in `listed` when there is one.
        func objects(ofType type: String) -> TypeIndex? {
            guard let listed else { return index.types[type] }
            var position = 0
            while position < listed.count {
                if listed[position].name == type { return listed[position].objects }
                position += 1
            }
            return nil
        }
    }

    private let parts: Parts

    var index: KeyIndex { parts.index }
    var generation: any LogStorage { parts.generation }
    var secondary: SecondaryIndexes { parts.secondary }

    /// The sequence number of the last commit this snapshot includes (0 for an empty store).
    public var sequence: UInt64 { parts.sequence }
    /// The ``StorageEngine/version`` of the state this snapshot shows; 0 for one made outside an engine.
    public var version: UInt64 { parts.version }
    /// The format of the file the snapshot's log is written in, which says what its writers may
    /// write; the current one for a snapshot made outside an engine.
    public var formatVersion: UInt32 { parts.formatVersion }

    init(
        index: KeyIndex, generation: any LogStorage, sequence: UInt64, secondary: SecondaryIndexes = SecondaryIndexes(),
        version: UInt64 = 0, formatVersion: UInt32 = LogHeader.currentVersion
    ) {
        parts = Parts(index: index, generation: generation, secondary: secondary, sequence: sequence, version: version, formatVersion: formatVersion)
    }

    /// Whether values written against this snapshot may take the forms of format 5 on: the
    /// layer above's tagless records, which code of an earlier format cannot read.
    public var allowsNewerValueForms: Bool { formatVersion >= LogHeader.valueFormsVersion }

    /// Throws `closed` when the snapshot was taken after its engine closed: it reads nothing.
    public func checkOpen() throws(StorageError) {
        if generation is ClosedLog { throw StorageError(.closed) }
    }

    /// The secondary index called `name` as of this snapshot, or nil when none is defined.
    public func index(named name: String) -> IndexSnapshot? {
        secondary.snapshot(named: name)
    }

    /// The value stored for `key` of `type`, or nil. Throws if the file cannot be read.
    public func value(type: String, key: StorageKey) throws -> [UInt8]? {
        guard let packed = try parts.location(type: type, key: key) else { return nil }
        let (offset, length) = try parts.span(ofPacked: packed)
        return try generation.read(at: offset, count: length)
    }

    /// Calls `body` with the value stored for `key` of `type` where it lies in the file's memory
    /// mapping, or with a copy when the file is not mapped there, and returns what it returns;
    /// nil when no value is stored. For a read that decodes the value and keeps none of its
    /// bytes, which are valid during the call only. Throws if the file cannot be read.
    public func withValue<Result>(type: String, key: StorageKey, _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result? {
        guard let packed = try parts.location(type: type, key: key) else { return nil }
        let (offset, length) = try parts.span(ofPacked: packed)
        return try generation.withBytes(at: offset, count: length, body)
    }

    /// Bytes a pass in file order asks the system to read ahead at once.
    static let prefetchSpan = 4 << 20

    /// The value at the packed location `packed` (`ValueLocation`), checked against the
    /// checkpoint's checksums when it lies where they cover.
    func value(atPacked packed: UInt64) throws -> [UInt8] {
        let (offset, length) = try parts.span(ofPacked: packed)
        return try generation.read(at: offset, count: length)
    }

    /// Where the value at the packed location `packed` (`ValueLocation`) lies, checked as for
    /// ``value(atPacked:)``.
    func span(ofPacked packed: UInt64) throws -> (offset: UInt64, length: Int) {
        try parts.span(ofPacked: packed)
    }

    /// The values of `type`, for reading many of them by key: the type is found once, not on
    /// every read.
    public func values(ofType type: String) -> TypeValues {
        TypeValues(objects: parts.objects(ofType: type), snapshot: self)
    }

    /// What identifies the bytes stored for `key` of `type` in this snapshot, without reading
    /// them, or nil when the key is not stored. Two snapshots of one engine give equal identities
    /// only for equal bytes: the log never writes two values at one place of one file, and a
    /// compaction's new file is another generation.
    ///
    /// - Throws: `StorageError` when a persisted key run it reads is damaged.
    public func storedValueIdentity(type: String, key: StorageKey) throws -> StoredValueIdentity? {
        try index.types[type]?.location(for: key).map { StoredValueIdentity(generation: generation, location: $0) }
    }

    /// Whether `key` of `type` exists, without reading its value.
    ///
    /// - Throws: `StorageError` when a persisted key run it reads is damaged.
    public func contains(type: String, key: StorageKey) throws -> Bool {
        try index.types[type]?.location(for: key) != nil
    }

    /// Every key of `type`, in no particular order.
    ///
    /// - Throws: `StorageError` when a persisted key run it reads is damaged.
    public func keys(type: String) throws -> [StorageKey] {
        try index.types[type]?.keys() ?? []
    }

    /// Every key and value of `type`, in no particular order. Reads the file in large
    /// sequential spans rather than one read per value, so it is the fast way to load a type.
    public func entries(type: String) throws -> [(key: StorageKey, value: [UInt8])] {
        guard let objects = index.types[type] else { return [] }
        var result: [(key: StorageKey, value: [UInt8])] = []
        result.reserveCapacity(objects.count)
        try forEachEntry(type: type) { key, value in result.append((key, value)) }
        return result
    }

    /// Calls `body` with every key and value of `type`, reading the file in large sequential
    /// spans and holding one span and a bounded number of locations at a time: for passes over
    /// more data than memory. The keys are taken in windows of a bounded number, each read in
    /// file order, so a type whose keys lie in the file in key order is read in file order.
    public func forEachEntry(type: String, _ body: (StorageKey, [UInt8]) throws -> Void) throws {
        guard let objects = index.types[type] else { return }
        try index.regions?.verifyAll(in: generation)
        try SpanReader.forEach(objects, in: index, source: generation, body)
    }

    /// Calls `body` with every key and value of `type` in key order (``StorageKey/precedes(_:_:)``):
    /// the order objects are listed in when nothing else orders them.
    public func forEachEntryInKeyOrder(type: String, _ body: (StorageKey, [UInt8]) throws -> Void) throws {
        try forEachValueInPlaceInKeyOrder(type: type) { key, bytes in try body(key, Array(bytes)) }
    }

    /// Calls `body` with every key of `type` and its value's bytes where they lie, in key order
    /// (``StorageKey/precedes(_:_:)``), as ``forEachValueInPlace(type:_:)`` does in file order:
    /// for passes over every object that must take them in the order they are listed.
    public func forEachValueInPlaceInKeyOrder(type: String, _ body: (StorageKey, UnsafeRawBufferPointer) throws -> Void) throws {
        guard let objects = index.types[type] else { return }
        let onlyIntegers = objects.onlyIntegers
        func keyOrder() throws -> FileOrder.Sorted {
            var items: [FileOrder.Item] = []
            var keys: [StorageKey] = []
            items.reserveCapacity(objects.count)
            if onlyIntegers, objects.runs.isEmpty {
                // Integer keys, the common case: their map gives them in key order already.
                items = objects.integers.compactMap { $0.value == 0 ? nil : FileOrder.Item(packed: $0.value, payload: $0.key) }
                return FileOrder.Sorted(items: items, keys: [])
            }
            try objects.forEachInKeyOrder { key, packed in
                if onlyIntegers, case .integer(let value) = key {
                    items.append(FileOrder.Item(packed: packed, payload: value))
                } else {
                    items.append(FileOrder.Item(packed: packed, payload: Int64(keys.count)))
                    keys.append(key)
                }
            }
            return FileOrder.Sorted(items: items, keys: keys)
        }
        try visitInPlace(objects.keyOrder?.value(keyOrder) ?? (try keyOrder()), onlyIntegers: onlyIntegers) { key, _, bytes in
            try body(key, bytes)
        }
    }

    /// Calls `body` with every key of `type`, where its value lies (for ``TypeValues/value(at:)``)
    /// and the value's bytes where they lie (in the file's memory mapping; copied only when the log
    /// cannot be mapped), in file order. The bytes are valid during the call only: for passes that
    /// test every object without copying it.
    public func forEachValueInPlace(type: String, _ body: (StorageKey, ValueLocation, UnsafeRawBufferPointer) throws -> Void) throws {
        guard let objects = index.types[type] else { return }
        try visitInPlace(try fileOrder(of: objects), onlyIntegers: objects.onlyIntegers, body)
    }

    /// The objects' locations in file order, sorted once and kept with them (`TypeIndex.fileOrder`).
    func fileOrder(of objects: TypeIndex) throws -> FileOrder.Sorted {
        // With integer keys only (the common case) each key is its own payload; otherwise every
        // key is found again by its position in `keys`.
        let onlyIntegers = objects.onlyIntegers
        func fileOrder() throws -> FileOrder.Sorted {
            var keys: [StorageKey] = []
            var items: [FileOrder.Item] = []
            items.reserveCapacity(objects.count)
            var largestOffset: UInt64 = 0
            if onlyIntegers, objects.runs.isEmpty {
                for (key, packed) in objects.integers {
                    items.append(FileOrder.Item(packed: packed, payload: key))
                    largestOffset = max(largestOffset, ValueLocation(packed: packed).offset)
                }
            } else if onlyIntegers {
                try objects.forEach { key, packed in
                    guard case .integer(let value) = key else { return }
                    items.append(FileOrder.Item(packed: packed, payload: value))
                    largestOffset = max(largestOffset, ValueLocation(packed: packed).offset)
                }
            } else {
                try objects.forEach { key, packed in
                    items.append(FileOrder.Item(packed: packed, payload: Int64(keys.count)))
                    keys.append(key)
                    largestOffset = max(largestOffset, ValueLocation(packed: packed).offset)
                }
            }
            FileOrder.sort(&items, largestOffset: largestOffset)
            return FileOrder.Sorted(items: items, keys: keys)
        }
        return try objects.fileOrder?.value(fileOrder) ?? (try fileOrder())
    }

    /// Calls `body` with each item's key, location and value bytes, in the order `order` lists them.
    private func visitInPlace(
        _ order: FileOrder.Sorted, onlyIntegers: Bool, _ body: (StorageKey, ValueLocation, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let items = order.items, keys = order.keys
        // A pass over every object reads every region: check them all once, not one per value.
        try index.regions?.verifyAll(in: generation)
        try generation.withBytesInPlace { file in
            // Values come in file order: the bytes ahead are asked for in large requests.
            var prefetchedTo: UInt64 = 0
            var lent: LentPage?
            for item in items {
                let key: StorageKey = onlyIntegers ? .integer(item.payload) : keys[Int(item.payload)]
                let (offset, length) = index.resolve(item.packed)
                if offset + UInt64(length) > prefetchedTo {
                    generation.prefetch(at: offset, count: Self.prefetchSpan)
                    prefetchedTo = offset + UInt64(Self.prefetchSpan)
                }
                let location = ValueLocation(packed: item.packed)
                if let file, offset <= UInt64(file.count), UInt64(length) <= UInt64(file.count) - offset {
                    try body(key, location, UnsafeRawBufferPointer(rebasing: file[Int(offset)..<(Int(offset) + length)]))
                } else {
                    try generation.withBytes(at: offset, count: length, lent: &lent) { try body(key, location, $0) }
                }
            }
        }
    }

    /// The number of objects of `type`.
    public func count(type: String) -> Int {
        index.types[type]?.count ?? 0
    }

    /// The schema bytes last set for `type`, or nil.
    public func schema(type: String) -> [UInt8]? {
        index.types[type]?.schema
    }

    /// The types that have objects or a schema, in no particular order.
    public var typeNames: [String] {
        Array(index.types.keys)
    }

    /// The metadata value last set for `key`, or nil.
    public func metadata(key: String) -> [UInt8]? {
        index.metadata[key]
    }

    /// Every metadata key, in no particular order.
    public var metadataKeys: [String] {
        Array(index.metadata.keys)
    }
}

/// The values of one type in one snapshot, read by key.
///
/// ```swift
/// let heroes = snapshot.values(ofType: "Hero")
/// for key in keys { if let bytes = try heroes.value(for: key) { decode(bytes) } }
/// ```
public struct TypeValues: Sendable {
    /// The type's objects and the snapshot, behind one reference: a query passes its values
    /// through several closures, and each copy of a snapshot's fields is a retain and a release
    /// of each of them.
    private final class Parts: Sendable {
        let objects: TypeIndex?
        let snapshot: EngineSnapshot
        /// The file's mapping as it was when these values were taken, nil when the log is not
        /// mapped: found once, as taking it for each read took two locks.
        let mapped: StableBytes?

        init(objects: TypeIndex?, snapshot: EngineSnapshot) {
            self.objects = objects
            self.snapshot = snapshot
            // Valid while the log lives, which `snapshot` holds.
            mapped = snapshot.generation.withBytesInPlace { file in file.map { StableBytes(bytes: $0) } }
        }
    }

    private let parts: Parts

    init(objects: TypeIndex?, snapshot: EngineSnapshot) {
        parts = Parts(objects: objects, snapshot: snapshot)
    }

    /// The value stored for `key`, or nil. Throws if the file cannot be read.
    public func value(for key: StorageKey) throws -> [UInt8]? {
        guard let location = try location(for: key) else { return nil }
        return try value(at: location)
    }

    /// Where the value stored for `key` lies, or nil when the key is not stored.
    ///
    /// - Throws: `StorageError` when a persisted key run it reads is damaged.
    public func location(for key: StorageKey) throws -> ValueLocation? {
        try parts.objects?.location(for: key).map(ValueLocation.init(packed:))
    }

    /// The value at `location`, a location this snapshot gave (``location(for:)``,
    /// ``forEachValueInPlace(of:_:)``, ``EngineSnapshot/forEachValueInPlace(type:_:)``,
    /// ``ValueBatch/location(at:)``): the bytes its key held then, read without looking the key
    /// up again. Throws if the file cannot be read.
    public func value(at location: ValueLocation) throws -> [UInt8] {
        let (offset, length) = try parts.snapshot.span(ofPacked: location.packed)
        return try parts.snapshot.generation.read(at: offset, count: length)
    }

    /// Calls `body` with the value at `location` (a location as for ``value(at:)``) where it lies
    /// in the file's memory mapping or an encrypted file's cached page, or with a copy when it
    /// cannot be lent so: for a read that decodes the value and keeps none of its bytes. The
    /// bytes are valid during the call only.
    public func withValue<Result>(at location: ValueLocation, _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result {
        let (offset, length) = try parts.snapshot.span(ofPacked: location.packed)
        if let file = parts.mapped?.bytes, offset <= UInt64(file.count), UInt64(length) <= UInt64(file.count) - offset {
            return try body(UnsafeRawBufferPointer(rebasing: file[Int(offset)..<(Int(offset) + length)]))
        }
        return try parts.snapshot.generation.withBytes(at: offset, count: length, body)
    }

    /// Calls `body` with each of `keys` that is stored, where its value lies, and the value, in
    /// the order given: where the value lies in the file's memory mapping, or a copy when the
    /// file is not mapped.
    public func forEachValueInPlace(
        of keys: [StorageKey], _ body: (StorageKey, ValueLocation, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        guard let objects = parts.objects else { return }
        let (index, generation) = (parts.snapshot.index, parts.snapshot.generation)
        try generation.withBytesInPlace { file in
            var lent: LentPage?
            for key in keys {
                guard let packed = try objects.location(for: key) else { continue }
                let (offset, length) = index.resolve(packed)
                try index.verify(offset: offset, length: length, in: generation)
                let location = ValueLocation(packed: packed)
                if let file, offset <= UInt64(file.count), UInt64(length) <= UInt64(file.count) - offset {
                    try body(key, location, UnsafeRawBufferPointer(rebasing: file[Int(offset)..<(Int(offset) + length)]))
                } else {
                    try generation.withBytes(at: offset, count: length, lent: &lent) { try body(key, location, $0) }
                }
            }
        }
    }
}

/// Where a value is stored: its log generation and its place there. See
/// ``EngineSnapshot/storedValueIdentity(type:key:)``.
public struct StoredValueIdentity: Hashable, Sendable {
    /// Held, so that no later generation can be made at its address while the identity lives.
    let generation: any LogStorage
    let location: UInt64

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.location == rhs.location && lhs.generation === rhs.generation
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(generation))
        hasher.combine(location)
    }
}
