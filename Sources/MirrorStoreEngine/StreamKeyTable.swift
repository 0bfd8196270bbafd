/// Keys and a nonzero 64-bit value each (for a write transaction, where the record it streamed
/// for a key lies in the log), held in memory up to `keysInMemory` keys and beyond that as sorted
/// key runs in an unnamed scratch file (`ScratchFile`, `RewriteKeyRuns`; sealed under a key
/// only memory holds when `sealed`), so that a transaction
/// of any size holds about that many keys rather than one per record. The newest value of a key
/// is the one read, in memory or in the newest run that holds it.
///
/// ```swift
/// var table = StreamKeyTable(keysInMemory: 1 << 18)
/// table.set(.integer(7), 42)
/// try table.value(for: .integer(7))   // 42
/// ```
public struct StreamKeyTable {
    /// One type, unnamed: a key index reads and merges runs and memory as a store's table does.
    private var index = KeyIndex()
    private var runs: RewriteKeyRuns?
    private var scratch: (any LogStorage)?
    /// Whether the scratch file is sealed (`EncryptedLog.scratch(in:)`).
    private let sealed: Bool
    /// Where the scratch file's next run goes.
    private var end: UInt64 = 0
    /// Whether keys past the bound may go to a scratch file: not once making or writing one failed.
    private var spills: Bool
    private let keysInMemory: Int

    /// An empty table that writes its keys to a scratch file once it holds `keysInMemory` in
    /// memory; `Int.max` keeps them all in memory. With `sealed` (for an encrypted store, whose
    /// keys a plain file would hold in the clear) the scratch file is encrypted and authenticated
    /// under a key of its own that only memory holds.
    public init(keysInMemory: Int, sealed: Bool = false) {
        self.keysInMemory = max(1, keysInMemory)
        self.sealed = sealed
        spills = keysInMemory < Int.max
    }

    /// The value of `key`, or nil when it has none.
    ///
    /// - Throws: `StorageError` when a block of the scratch file fails its check (or, sealed,
    ///   does not authenticate).
    public func value(for key: StorageKey) throws -> UInt64? {
        try index.types[""]?.location(for: key)
    }

    /// Gives `key` the value `value`, which must not be 0 (a run's mark of a deleted key). Reads
    /// nothing: a failure to write the scratch file keeps the keys in memory from then on.
    public mutating func set(_ key: StorageKey, _ value: UInt64) {
        precondition(value != 0, "a stream key table's values are never 0")
        index.types["", default: TypeIndex()].overwrite(key, value)
        guard spills, (index.types[""]?.memoryCount ?? 0) >= keysInMemory else { return }
        if runs == nil, let file = ScratchFile.make(sealed: sealed) {
            scratch = file
            runs = RewriteKeyRuns(bound: keysInMemory, log: file, sequence: 1, valuesInLog: false)
        }
        do {
            if let written = try runs?.spill(&index, at: end) { end = written }
            // What the merges read may be read again from the page cache, not held.
            scratch?.release(at: 0, count: Int(end))
        } catch {
            // A full disk under the scratch file: the keys stay in memory, and no run is written
            // again, as one could overwrite those written.
            runs = nil
        }
        spills = runs != nil
    }

    /// The runs the table's keys lie in beside its memory.
    var runCount: Int { index.types[""]?.runs.count ?? 0 }

    /// Calls `body` with every key and its value: those of the runs in key order, then those of
    /// the memory in no particular order.
    ///
    /// - Throws: what `body` throws; `StorageError` when a block of the scratch file fails its check.
    public func forEach(_ body: (StorageKey, UInt64) throws -> Void) throws {
        try index.types[""]?.forEach(body)
    }
}
