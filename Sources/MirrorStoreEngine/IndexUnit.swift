/// The payload of an index unit (a unit whose frame carries `LogFrame.indexFlag`): its first
/// byte says what it holds. Replaying the log skips index units; opening from a checkpoint reads
/// them instead of the commits they cover (docs/FILE_FORMAT.md, "Checkpoints").
enum IndexUnit {
    enum Kind: UInt8 {
        /// Blocks of one persisted key run (`KeyRun`).
        case keyRun = 1
        /// A checkpoint: the whole state as of a sequence number, its objects in key runs.
        case checkpoint = 2
        /// Blocks of one persisted secondary index run (`IndexRun`).
        case indexRun = 3
        /// A piece of a streamed commit (`StreamPiece`), applied only with the commit naming it.
        case streamPiece = 4
    }

    /// Encodes the checkpoint of `index` (whose types' objects all lie in runs) numbered
    /// `number`, covering the commits up to `sequence`, which end at `coveredEnd` in the log.
    static func encodeCheckpoint(
        _ index: KeyIndex, types: TypeTable, number: UInt64, sequence: UInt64, coveredEnd: UInt64, path: String
    ) throws -> [UInt8] {
        var writer = ByteWriter()
        writer.byte(Kind.checkpoint.rawValue)
        writer.varint(number)
        writer.varint(sequence)
        writer.varint(coveredEnd)
        writer.varint(UInt64(types.count))
        for name in types.names { writer.lengthPrefixed(name) }
        writer.varint(UInt64(index.metadata.count))
        for (key, value) in index.metadata.sorted(by: { $0.key < $1.key }) {
            writer.lengthPrefixed(key)
            writer.lengthPrefixed(value)
        }
        writer.varint(UInt64(index.largeValueLengths.count))
        for (offset, length) in index.largeValueLengths.sorted(by: { $0.key < $1.key }) {
            writer.varint(offset)
            writer.varint(length)
        }
        let regions = index.regions?.checksums ?? []
        writer.varint(index.regions?.start ?? 0)
        writer.varint(index.regions?.end ?? 0)
        writer.varint(UInt64(regions.count))
        for checksum in regions { writer.uint32(checksum) }
        writer.varint(UInt64(index.types.count))
        for (name, objects) in index.types.sorted(by: { $0.key < $1.key }) {
            guard let id = types.id(of: name), objects.memoryCount == 0 else {
                throw StorageError(.corrupted(path: path, offset: coveredEnd, reason: "a checkpoint was asked to record type '\(name)' with objects outside its runs"))
            }
            writer.varint(UInt64(id))
            if let schema = objects.schema {
                writer.byte(1)
                writer.lengthPrefixed(schema)
            } else {
                writer.byte(0)
            }
            writer.varint(UInt64(objects.count))
            writer.varint(ByteWriter.zigzag(Int64(objects.liveBytes)))
            writer.varint(UInt64(objects.runs.count))
            for run in objects.runs {
                writer.varint(UInt64(run.entryCount))
                writer.varint(UInt64(run.byteCount))
                if case .integers = run.fences { writer.byte(0) } else { writer.byte(1) }
                writer.varint(UInt64(run.blockOffsets.count))
                for block in run.blockOffsets.indices {
                    writer.varint(run.blockOffsets[block])
                    writer.varint(UInt64(run.blockCounts[block]))
                    OperationCodec.encodeKey(run.fences.key(block), into: &writer)
                }
            }
        }
        writer.varint(UInt64(index.persistedIndexes.count))
        for (name, persisted) in index.persistedIndexes.sorted(by: { $0.key < $1.key }) {
            writer.lengthPrefixed(name)
            writer.lengthPrefixed(persisted.typeName)
            writer.byte(persisted.isUnique ? 1 : 0)
            writer.lengthPrefixed(persisted.fingerprint)
            writer.uint32(persisted.schemaCheck)
            writer.varint(UInt64(persisted.count))
            writer.varint(UInt64(persisted.runs.count))
            for run in persisted.runs {
                writer.varint(UInt64(run.byteCount))
                writer.varint(UInt64(run.fences.count))
                for block in run.fences.indices {
                    writer.varint(run.blocks.offsets[block])
                    writer.varint(UInt64(run.liveCounts[block]))
                    writer.varint(UInt64(run.markCounts[block]))
                    // Fences come from written entries, which are never `greatest`.
                    _ = IndexKeyTag.encode(run.fences[block].key, into: &writer)
                    OperationCodec.encodeKey(run.fences[block].object, into: &writer)
                }
            }
        }
        return writer.bytes
    }

    /// What a checkpoint unit holds, ready to open from.
    struct Checkpoint {
        var number: UInt64
        var sequence: UInt64
        var coveredEnd: UInt64
        var index: KeyIndex
        var types: TypeTable
    }

    /// Decodes the checkpoint payload `bytes[range]` of the unit at `unitOffset` in `log`, whose
    /// runs lie in `unitsStart..<unitOffset`. Every count is checked against the bytes left
    /// before anything is allocated.
    static func decodeCheckpoint(
        _ bytes: [UInt8], range: Range<Int>, unitOffset: UInt64, unitsStart: UInt64, log: any LogStorage
    ) throws(DecodeFailure) -> Checkpoint {
        var reader = ByteReader(bytes, from: range.lowerBound, to: range.upperBound)
        func count(_ what: String) throws(DecodeFailure) -> Int {
            let start = reader.position
            let value = try reader.varint()
            guard value <= UInt64(reader.remaining) else {
                throw DecodeFailure(offset: start, reason: "the checkpoint lists \(value) \(what), more than its bytes hold")
            }
            return Int(value)
        }
        let kind = try reader.byte()
        guard kind == Kind.checkpoint.rawValue else {
            throw DecodeFailure(offset: range.lowerBound, reason: "the unit is not a checkpoint (kind \(kind))")
        }
        let number = try reader.varint()
        let sequence = try reader.varint()
        let coveredEnd = try reader.varint()
        guard coveredEnd >= unitsStart, coveredEnd <= unitOffset else {
            throw DecodeFailure(offset: range.lowerBound, reason: "the checkpoint covers the log up to byte \(coveredEnd), outside \(unitsStart)...\(unitOffset)")
        }
        var types = TypeTable()
        for _ in 0..<(try count("type names")) {
            let start = reader.position
            let name = try reader.lengthPrefixedString()
            guard types.id(of: name) == nil else { throw DecodeFailure(offset: start, reason: "the checkpoint names type '\(name)' twice") }
            types.define(name)
        }
        var index = KeyIndex()
        for _ in 0..<(try count("metadata entries")) {
            let key = try reader.lengthPrefixedString()
            index.setMetadata(key: key, value: try reader.lengthPrefixedBytes())
        }
        for _ in 0..<(try count("long values")) {
            let offset = try reader.varint()
            index.largeValueLengths[offset] = try reader.varint()
        }
        let regionsAt = reader.position
        let regionsStart = try reader.varint()
        let regionsEnd = try reader.varint()
        let regionCount = try count("region checksums")
        guard regionsStart == unitsStart, regionsEnd == coveredEnd,
              regionCount == CoveredRegions.count(start: regionsStart, end: regionsEnd), regionCount * 4 <= reader.remaining
        else {
            throw DecodeFailure(offset: regionsAt, reason: "the checkpoint's region checksums do not cover \(unitsStart)..<\(coveredEnd)")
        }
        var checksums: [UInt32] = []
        checksums.reserveCapacity(regionCount)
        for _ in 0..<regionCount { checksums.append(try reader.uint32()) }
        index.regions = CoveredRegions(start: regionsStart, end: regionsEnd, checksums: checksums)
        for _ in 0..<(try count("types")) {
            let start = reader.position
            let id = try reader.varint()
            guard let name = types.name(of: id), index.types[name] == nil else {
                throw DecodeFailure(offset: start, reason: "the checkpoint describes type id \(id), which it does not name or describes twice")
            }
            let schema: [UInt8]? = try reader.byte() == 0 ? nil : try reader.lengthPrefixedBytes()
            let objects = try reader.varint()
            let liveBytes = ByteWriter.unzigzag(try reader.varint())
            var runs: [KeyRun] = []
            for _ in 0..<(try count("runs")) {
                let entries = try reader.varint()
                let byteCount = try reader.varint()
                let fenceKind = try reader.byte()
                let blocks = try count("blocks")
                var offsets: [UInt64] = []
                offsets.reserveCapacity(blocks)
                var counts: [UInt16] = []
                counts.reserveCapacity(blocks)
                var integers: [Int64] = []
                var keys: [StorageKey] = []
                for _ in 0..<blocks {
                    let at = reader.position
                    let offset = try reader.varint()
                    guard offset >= unitsStart, offset < unitOffset else {
                        throw DecodeFailure(offset: at, reason: "a run block at byte \(offset) lies outside \(unitsStart)..<\(unitOffset)")
                    }
                    offsets.append(offset)
                    let entries = try reader.varint()
                    guard entries > 0, entries <= UInt64(UInt16.max) else {
                        throw DecodeFailure(offset: at, reason: "a run block lists \(entries) entries")
                    }
                    counts.append(UInt16(entries))
                    let key = try OperationCodec.decodeKey(&reader)
                    if fenceKind == 0 {
                        guard case .integer(let value) = key else {
                            throw DecodeFailure(offset: at, reason: "an integer-keyed run lists a block whose first key is \(key)")
                        }
                        integers.append(value)
                    } else {
                        keys.append(key)
                    }
                }
                guard entries <= UInt64(Int.max), byteCount <= UInt64(Int.max), blocks > 0 else {
                    throw DecodeFailure(offset: start, reason: "a run of type '\(name)' lists no block or impossible sizes")
                }
                let fences: KeyRun.Fences = fenceKind == 0 ? .integers(integers) : .keys(keys)
                runs.append(KeyRun(
                    blockOffsets: offsets, blockCounts: counts, fences: fences, entryCount: Int(entries), byteCount: Int(byteCount),
                    log: log, end: unitOffset, regions: index.regions))
            }
            guard objects <= UInt64(Int.max) else {
                throw DecodeFailure(offset: start, reason: "type '\(name)' declares \(objects) objects")
            }
            index.types[name] = TypeIndex(runs: runs, count: Int(objects), schema: schema, liveBytes: Int(liveBytes))
        }
        // Checkpoints written before indexes were persisted end here.
        if !reader.isAtEnd {
            index.persistedIndexes = try decodeIndexes(&reader, index: index, unitOffset: unitOffset, unitsStart: unitsStart, log: log)
        }
        guard reader.isAtEnd else {
            throw DecodeFailure(offset: reader.position, reason: "the checkpoint has bytes after its last field")
        }
        return Checkpoint(number: number, sequence: sequence, coveredEnd: coveredEnd, index: index, types: types)
    }

    /// The persisted secondary indexes a checkpoint lists, after its types.
    private static func decodeIndexes(
        _ reader: inout ByteReader, index: KeyIndex, unitOffset: UInt64, unitsStart: UInt64, log: any LogStorage
    ) throws(DecodeFailure) -> [String: PersistedIndex] {
        func count(_ what: String) throws(DecodeFailure) -> Int {
            let start = reader.position
            let value = try reader.varint()
            guard value <= UInt64(reader.remaining) else {
                throw DecodeFailure(offset: start, reason: "the checkpoint lists \(value) \(what), more than its bytes hold")
            }
            return Int(value)
        }
        var indexes: [String: PersistedIndex] = [:]
        for _ in 0..<(try count("secondary indexes")) {
            let start = reader.position
            let name = try reader.lengthPrefixedString()
            let typeName = try reader.lengthPrefixedString()
            let isUnique = try reader.byte() != 0
            let fingerprint = try reader.lengthPrefixedString()
            let schemaCheck = try reader.uint32()
            let entries = try reader.varint()
            guard indexes[name] == nil, entries <= UInt64(Int.max) else {
                throw DecodeFailure(offset: start, reason: "the checkpoint lists index '\(name)' twice or with \(entries) entries")
            }
            var runs: [IndexRun] = []
            var net = 0
            for _ in 0..<(try count("index runs")) {
                let byteCount = try reader.varint()
                let blocks = try count("index run blocks")
                guard blocks > 0, byteCount <= UInt64(Int.max) else {
                    throw DecodeFailure(offset: reader.position, reason: "a run of index '\(name)' lists no block or an impossible size")
                }
                var offsets: [UInt64] = []
                var fences: [IndexEntry] = []
                var live: [UInt16] = []
                var marks: [UInt16] = []
                for _ in 0..<blocks {
                    let at = reader.position
                    let offset = try reader.varint()
                    let liveCount = try reader.varint()
                    let markCount = try reader.varint()
                    guard offset >= unitsStart, offset < unitOffset, liveCount + markCount > 0, liveCount + markCount <= UInt64(UInt16.max) else {
                        throw DecodeFailure(offset: at, reason: "an index run block at byte \(offset) lies outside \(unitsStart)..<\(unitOffset) or lists \(liveCount) entries and \(markCount) marks")
                    }
                    let fence = IndexEntry(key: try IndexKeyTag.decode(&reader), object: try OperationCodec.decodeKey(&reader))
                    if let previous = fences.last, !IndexEntry.precedes(previous, fence) {
                        throw DecodeFailure(offset: at, reason: "the blocks of a run of index '\(name)' are out of order")
                    }
                    offsets.append(offset)
                    fences.append(fence)
                    live.append(UInt16(liveCount))
                    marks.append(UInt16(markCount))
                }
                let run = IndexRun(
                    blockOffsets: offsets, fences: fences, liveCounts: live, markCounts: marks, byteCount: Int(byteCount), log: log,
                    end: unitOffset)
                net += run.net
                runs.append(run)
            }
            guard net == Int(entries) else {
                throw DecodeFailure(offset: start, reason: "the runs of index '\(name)' hold \(net) entries, not the \(entries) the checkpoint lists")
            }
            indexes[name] = PersistedIndex(
                typeName: typeName, isUnique: isUnique, fingerprint: fingerprint, schemaCheck: schemaCheck, count: Int(entries),
                runs: runs, basis: PersistedIndex.basis(of: index.types[typeName]))
        }
        return indexes
    }
}
