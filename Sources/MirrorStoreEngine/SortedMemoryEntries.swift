/// A type's in-memory keys and locations in key order (``StorageKey/precedes(_:_:)``), deletion
/// marks included: integer keys, then strings, then byte strings. Integer keys are read in order
/// from their map's sorted arrays as they are (``IntegerKeyMap/SortedEntries``); strings and byte
/// strings through the numbers of their maps' entries sorted by key (``ByteKeyMap/sortedEntries()``),
/// each key made as it is read.
struct SortedMemoryEntries: Sequence {
    private let integers: IntegerKeyMap.SortedEntries
    private let strings: ByteKeyMap
    private let stringOrder: [UInt32]
    private let byteStrings: ByteKeyMap
    private let byteStringOrder: [UInt32]

    init(integers: IntegerKeyMap, strings: ByteKeyMap, byteStrings: ByteKeyMap) {
        self.integers = integers.sortedEntries
        // A string map's keys are NFC's UTF-8, whose byte order is `StorageKey.stringPrecedes`'s.
        self.strings = strings
        stringOrder = strings.sortedEntries()
        self.byteStrings = byteStrings
        byteStringOrder = byteStrings.sortedEntries()
    }

    func makeIterator() -> Iterator { Iterator(entries: self) }

    struct Iterator: IteratorProtocol {
        private let entries: SortedMemoryEntries
        private var integers: IntegerKeyMap.SortedEntries.Iterator
        private var position = 0

        init(entries: SortedMemoryEntries) {
            self.entries = entries
            integers = entries.integers.makeIterator()
        }

        mutating func next() -> (key: StorageKey, packed: UInt64)? {
            if let (key, value) = integers.next() { return (.integer(key), value) }
            defer { position += 1 }
            var at = position
            if at < entries.stringOrder.count {
                let entry = Int(entries.stringOrder[at])
                return (.string(String(decoding: entries.strings.key(at: entry), as: UTF8.self)), entries.strings.value(at: entry))
            }
            at -= entries.stringOrder.count
            if at < entries.byteStringOrder.count {
                let entry = Int(entries.byteStringOrder[at])
                return (.bytes(Array(entries.byteStrings.key(at: entry))), entries.byteStrings.value(at: entry))
            }
            return nil
        }
    }
}
