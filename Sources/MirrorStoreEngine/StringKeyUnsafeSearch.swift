#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A string key being looked up, as key runs order it: the UTF-8 of its canonical composition
/// (NFC), made once per lookup and compared where they lie with the run's fences and the stored
/// keys of the block they pick, so that no `String` is made per comparison. The byte order of
/// NFC's UTF-8 is the order of NFC's scalars, ``StorageKey/stringPrecedes(_:_:)``'s, and two
/// strings are canonically equal (one key) exactly when those bytes are equal.
///
/// A stored key that is ASCII is its own NFC and is compared as it lies; one that is not may be
/// in another form (a file written before string keys went through `ByteKeyMap`), so it is
/// decoded and normalized to be compared, as ``StorageKey/precedes(_:_:)`` would.
struct StringProbe {
    /// The canonical UTF-8, lent for the lookup only. The probe holds nothing it would retain:
    /// passed through the runs and into each block's search, a copy of a held `String` was a
    /// retain and a release each time.
    let bytes: UnsafeRawBufferPointer

    /// The canonical UTF-8's last word: its bytes from the last multiple of eight on, fewer
    /// than eight, as a big-endian number padded with zeros (0 when the length is a multiple of
    /// eight). A stored key is compared with the probe's bytes a word at a time
    /// (``order(ofStored:count:)``): the words before this one are read where the bytes lie.
    let lastWord: UInt64

    /// The probe of `bytes`, a string's canonical UTF-8.
    @inline(__always)
    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        let count = bytes.count
        let whole = count & ~7
        var last: UInt64 = 0
        if let base = bytes.baseAddress, whole < count {
            if count >= 8 {
                // The last eight bytes, moved up past the ones before `whole`.
                last = UInt64(bigEndian: base.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)) &<< UInt64(8 * (8 - (count - whole)))
            } else {
                var shift: UInt64 = 56
                for offset in 0..<count {
                    last |= UInt64(base.load(fromByteOffset: offset, as: UInt8.self)) &<< shift
                    shift &-= 8
                }
            }
        }
        lastWord = last
    }

    /// The probe's bytes from `offset` (a multiple of eight, at most their count) as a
    /// big-endian number, padded with zeros past their end.
    @inline(__always)
    func word(at offset: Int) -> UInt64 {
        guard offset &+ 8 <= bytes.count, let base = bytes.baseAddress else { return lastWord }
        return UInt64(bigEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// The key, canonically equal to the one given, for the stored keys of other kinds and the
    /// blocks of other layouts, which are ordered as keys: made when one is met, which a run
    /// of string keys never does.
    var key: StorageKey { .string(String(decoding: bytes, as: UTF8.self)) }

    /// Calls `body` with the probe for `text`: its own bytes where they lie when it is ASCII (its
    /// own NFC, and the common key), else its NFC, normalized once.
    ///
    /// Inlined into each caller: as a call, the closure's captures (the index or run asking)
    /// were retained and released per lookup.
    @inline(__always)
    static func with<Result>(_ text: String, _ body: (StringProbe) throws -> Result) rethrows -> Result {
        // Read where the string holds it (small strings lent from the stack): `withUTF8` needs a
        // mutable copy of the string, a retain and a release per lookup.
        let inPlace = try text.utf8.withContiguousStorageIfAvailable { utf8 -> Result? in
            let bytes = UnsafeRawBufferPointer(utf8)
            return isASCII(bytes) ? try body(StringProbe(bytes: bytes)) : nil
        }
        switch inPlace {
        case .some(.some(let ascii)):
            return ascii
        case .some(.none):
            break
        case .none:
            // Not contiguous (bridged): made so in a copy.
            var text = text
            let ascii = try text.withUTF8 { utf8 -> Result? in
                let bytes = UnsafeRawBufferPointer(utf8)
                return isASCII(bytes) ? try body(StringProbe(bytes: bytes)) : nil
            }
            if let ascii { return ascii }
        }
        return try text._nfcCodeUnits.withUnsafeBytes { try body(StringProbe(bytes: $0)) }
    }

    /// Whether every byte is below 0x80 (``UTF8Text/isASCII(_:)``): ASCII is its own NFC.
    @inline(__always)
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        UTF8Text.isASCII(bytes)
    }

    /// How the stored string body `stored` orders against the probe (-1: the stored key
    /// first); nil when it is not valid UTF-8, which no key decodes from.
    @inline(__always)
    func order(ofStored stored: UnsafeRawBufferPointer) -> Int? {
        if Self.isASCII(stored) { return RunBlockReader.order(stored, bytes) }
        return nonASCIIOrder(ofStored: stored)
    }

    /// ``order(ofStored:)`` of the `count` bytes at `stored`, which at least eight readable
    /// bytes follow (a general block's key is followed by its location): compared a word at a
    /// time with the probe's (``word(at:)``), each stored word read in place and cut to the key's
    /// length, without a call per comparison.
    ///
    /// The words decide for a stored key that is ASCII (its own NFC, and valid UTF-8, as the
    /// whole key must be for any order to be told), or one whose bytes are the probe's (which
    /// are valid NFC); any other is normalized, as ``order(ofStored:)`` does.
    @inline(__always)
    func order(ofStored stored: UnsafeRawPointer, count: Int) -> Int? {
        let order = wordOrder(ofStored: stored, count: count)
        if order == 0 || Self.isASCII(UnsafeRawBufferPointer(start: stored, count: count)) { return order }
        return nonASCIIOrder(ofStored: UnsafeRawBufferPointer(start: stored, count: count))
    }

    /// The order of the `count` bytes at `stored` and the probe's bytes, byte by byte, the
    /// shorter first when one begins the other, read as big-endian words: each side is as if
    /// followed by zeros (the stored word cut at the key's end, the probe's last word padded),
    /// so the first word that differs orders as the first byte that differs, and where no word
    /// differs up to the shorter one's end the shorter is first. Reads up to eight bytes past
    /// `count`.
    @inline(__always)
    private func wordOrder(ofStored stored: UnsafeRawPointer, count: Int) -> Int {
        let common = min(count, bytes.count)
        var offset = 0
        // Wrapping arithmetic: `offset` never passes `common + 8`, and `left` is 0...7 where it
        // is shifted by.
        while true {
            var held = UInt64(bigEndian: stored.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            let left = count &- offset
            if left < 8 { held &= ~(UInt64.max &>> UInt64(truncatingIfNeeded: left &<< 3)) }
            // `offset` is at most the probe's length.
            let wanted = word(at: offset)
            if held != wanted { return held < wanted ? -1 : 1 }
            offset &+= 8
            if offset > common { return count == bytes.count ? 0 : count < bytes.count ? -1 : 1 }
        }
    }

    /// The order of a stored key that is not ASCII: decoded, then compared as its NFC.
    @inline(never)
    private func nonASCIIOrder(ofStored stored: UnsafeRawBufferPointer) -> Int? {
        guard let text = UTF8Text.string(stored.assumingMemoryBound(to: UInt8.self)) else { return nil }
        return text._nfcCodeUnits.withUnsafeBytes { RunBlockReader.order($0, bytes) }
    }

    /// The block among `fences` that may hold the probe: the last whose first key is not after
    /// it, or nil when it precedes them all.
    func block(in fences: StringFences) -> Int? {
        fences.block(for: bytes, prefix: word(at: 0))
    }
}

/// The fences of a key run whose every fence is a string, as the UTF-8 of their canonical
/// compositions one after another in one buffer, with each one's first eight bytes as a number
/// (``IndexRun/stringPrefix(_:)``): a search compares most fences as numbers, and the few that
/// share the probe's first eight bytes byte by byte, where ordering them as keys read each
/// fence's `String` per probe.
struct StringFences: Sendable {
    private let bytes: [UInt8]
    /// Where each fence's bytes end in `bytes` (each starts where the one before ends).
    private let ends: [Int]
    private let prefixes: [UInt64]

    /// The table of `fences`, or nil when one is not a string.
    init?(_ fences: [StorageKey]) {
        var bytes: [UInt8] = []
        var ends: [Int] = []
        var prefixes: [UInt64] = []
        ends.reserveCapacity(fences.count)
        prefixes.reserveCapacity(fences.count)
        for fence in fences {
            guard case .string(let text) = fence else { return nil }
            let utf8 = Array(text.utf8)
            let canonical = utf8.allSatisfy { $0 < 0x80 } ? utf8 : text._nfcCodeUnits
            prefixes.append(IndexRun.stringPrefix(canonical))
            bytes += canonical
            ends.append(bytes.count)
        }
        self.bytes = bytes
        self.ends = ends
        self.prefixes = prefixes
    }

    /// The last fence not after `wanted` (canonical UTF-8), or nil when it precedes them all.
    /// `wantedPrefix` is its ``IndexRun/stringPrefix(_:)``, which the probe holds
    /// (``StringProbe/word(at:)`` 0).
    func block(for wanted: UnsafeRawBufferPointer, prefix wantedPrefix: UInt64) -> Int? {
        // The tables read through buffers: `middle` is always below their count (`ends` has
        // one per prefix), and the arrays' checked subscripts cost each step bounds tests.
        return prefixes.withUnsafeBufferPointer { prefixes in
            ends.withUnsafeBufferPointer { ends in
                bytes.withUnsafeBytes { all -> Int? in
                    var low = 0
                    var high = prefixes.count
                    while low < high {
                        // Both at most the fences' count: no overflow.
                        let middle = (low &+ high) &>> 1
                        let prefix = prefixes[middle]
                        let notAfter: Bool
                        if prefix != wantedPrefix {
                            notAfter = prefix < wantedPrefix
                        } else {
                            let start = middle == 0 ? 0 : ends[middle - 1]
                            let fence = UnsafeRawBufferPointer(rebasing: all[start..<ends[middle]])
                            notAfter = RunBlockReader.order(fence, wanted) <= 0
                        }
                        if notAfter { low = middle + 1 } else { high = middle }
                    }
                    return low > 0 ? low - 1 : nil
                }
            }
        }
    }
}

extension RunBlockReader {
    /// The packed location a key-run block holds for `probe` (0 for a deleted key), searched in
    /// place: each probed string entry's bytes are compared with the probe's where they lie
    /// (``StringProbe/order(ofStored:)``); entries of other kinds, and blocks of other layouts,
    /// are decoded and ordered as keys. `.damaged` when a probed entry does not decode, as
    /// ``entry(_:)`` would find it.
    func location(of probe: StringProbe) -> KeySearch {
        guard layout == Self.generalLayout else { return searchGeneral(probe.key, tag: nil, bytes: UnsafeRawBufferPointer(start: nil, count: 0)) }
        let count = count
        let end = size - Self.checksumSize
        let entries = Self.prefixSize + 2 * count
        guard tail.isEmpty, let base = head.baseAddress, entries <= end else { return searchInPieces(probe) }
        var low = 0
        var high = count
        while low < high {
            // At most the block's count of 65,535 each: no overflow.
            let middle = (low &+ high) &>> 1
            var position = Self.entryStart(in: base, middle, entries: entries)
            guard position < end else { return .damaged }
            let order: Int
            if base.load(fromByteOffset: position, as: UInt8.self) == OperationCodec.KeyTag.string.rawValue {
                position += 1
                guard let length = Self.varint(in: base, &position, end: end) else { return .damaged }
                // The body, then the location's 8 bytes, before the checksum: the words read up
                // to eight bytes past the body.
                guard length <= UInt64(end - position), end - position - Int(length) >= 8,
                      let found = probe.order(ofStored: base + position, count: Int(length)) else { return .damaged }
                position += Int(length)
                if found == 0 { return .found(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position, as: UInt64.self))) }
                order = found
            } else {
                guard let entry = entry(middle) else { return .damaged }
                // Of another kind, so never equal.
                order = StorageKey.precedes(entry.key, probe.key) ? -1 : 1
            }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return .absent
    }

    /// ``location(of:)-(StringProbe)`` for a block in two pieces, through the reads that
    /// address both.
    private func searchInPieces(_ probe: StringProbe) -> KeySearch {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            guard var position = entryStart(middle) else { return .damaged }
            let order: Int
            if self[position] == OperationCodec.KeyTag.string.rawValue {
                position += 1
                guard let length = varint(&position), let found = withBody(&position, count: length, probe.order(ofStored:)),
                      size - Self.checksumSize - position >= 8 else { return .damaged }
                if found == 0 { return .found(uint64(at: position)) }
                order = found
            } else {
                guard let entry = entry(middle) else { return .damaged }
                order = StorageKey.precedes(entry.key, probe.key) ? -1 : 1
            }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return .absent
    }
}
