/// Seals a run's blocks (`RunBlockReader`'s layout: length, layout, count, entries, checksum) and
/// gathers them into index units of about `unitTarget` bytes appended to the log, so that writing
/// a run of any size holds one unit in memory. Shared by the key and index run writers, which
/// differ only in what their entries are.
struct RunUnitWriter {
    /// A checkpoint writes its runs while the commit it follows still holds its keys: a unit of
    /// a megabyte keeps the buffer small beside them (a run of 100,000 UUID keys is 3 MB).
    static let unitTarget = 1 << 20
    /// Units of a scratch file's runs, which are written while a commit holds the entries they
    /// come from: each unit is held whole until written.
    static let scratchUnitTarget = 256 << 10

    let log: any LogStorage
    /// Bytes a unit gathers before it is written.
    let unitTarget: Int
    let sequence: UInt64
    /// What the units hold, their payload's first byte.
    let kind: IndexUnit.Kind
    /// Where the next unit goes.
    private(set) var offset: UInt64
    /// Bytes of the units written so far, frames included.
    private(set) var bytesWritten = 0
    /// The unit being gathered, as its frame: room for the header, then the payload.
    private var unit: [UInt8] = []

    init(log: any LogStorage, sequence: UInt64, offset: UInt64, kind: IndexUnit.Kind, unitTarget: Int = Self.unitTarget) {
        self.log = log
        self.unitTarget = unitTarget
        self.sequence = sequence
        self.offset = offset
        self.kind = kind
    }

    /// The entries of a general- or index-layout block: the offset of each entry (2 bytes, from
    /// the end of the offsets), then the entries themselves.
    static func offsetTable(_ entryOffsets: [UInt16], then entries: [UInt8]) -> [UInt8] {
        var table: [UInt8] = []
        table.reserveCapacity(2 * entryOffsets.count + entries.count)
        for entry in entryOffsets {
            table.append(UInt8(truncatingIfNeeded: entry))
            table.append(UInt8(truncatingIfNeeded: entry >> 8))
        }
        table.append(contentsOf: entries)
        return table
    }

    /// Seals `entries`, `count` of them in `layout`, as a block, adds it to the unit being
    /// gathered (writing the unit once it is large enough), and returns where the block lies.
    mutating func appendBlock(layout: UInt8, count: Int, entries: [UInt8]) throws -> UInt64 {
        var block = ByteWriter()
        block.uint32(UInt32(3 + entries.count))
        block.byte(layout)
        block.bytes.append(UInt8(truncatingIfNeeded: count))
        block.bytes.append(UInt8(truncatingIfNeeded: count >> 8))
        block.bytes.append(contentsOf: entries)
        block.uint32(CRC32C.mask(CRC32C.checksum(block.bytes)))
        return try appendSealed(block.bytes)
    }

    /// Adds a block sealed already (one of another run, copied as it lies), as `appendBlock`
    /// adds the block it seals, and returns where the block lies.
    mutating func appendSealed(_ block: [UInt8]) throws -> UInt64 {
        if unit.isEmpty {
            // Room for the frame's header, filled in when the unit is written.
            unit.append(contentsOf: repeatElement(0, count: LogFrame.headerSize))
            unit.append(kind.rawValue)
        }
        // The block's place in the file: after the bytes before it, the frame's header included.
        let placed = offset + UInt64(unit.count)
        unit.append(contentsOf: block)
        if unit.count - LogFrame.headerSize >= unitTarget { try flush() }
        return placed
    }

    /// Goes on at `offset`, past units others wrote since this writer's last `flush` (a rewrite
    /// extends a run between its data units); a unit still being gathered is written first,
    /// where its blocks were placed.
    mutating func resume(at offset: UInt64) throws {
        try flush()
        self.offset = offset
    }

    /// Writes the unit being gathered, if it holds a block.
    mutating func flush() throws {
        guard !unit.isEmpty else { return }
        LogFrame.seal(&unit, sequence: sequence, isIndex: true)
        try log.write(unit, at: offset)
        offset += UInt64(unit.count)
        bytesWritten += unit.count
        unit.removeAll(keepingCapacity: true)
    }
}
