/// A type's in-memory keys and locations in key order (``StorageKey/precedes(_:_:)``), deletion
/// marks included: integer keys, then strings, then byte strings. Integer keys are read in order
/// from their map's sorted arrays as they are (``IntegerKeyMap/SortedEntries``); strings and byte
/// strings are sorted into arrays of their own kind.
struct SortedMemoryEntries: Sequence {
    private let integers: IntegerKeyMap.SortedEntries
    private let strings: [(key: String, value: UInt64)]
    private let byteStrings: [(key: [UInt8], value: UInt64)]

    init(integers: IntegerKeyMap, strings: [String: UInt64], byteStrings: [[UInt8]: UInt64]) {
        self.integers = integers.sortedEntries
        self.strings = strings.sorted { StorageKey.stringPrecedes($0.key, $1.key) }
        self.byteStrings = byteStrings.sorted { $0.key.lexicographicallyPrecedes($1.key) }
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
            if at < entries.strings.count { return (.string(entries.strings[at].key), entries.strings[at].value) }
            at -= entries.strings.count
            if at < entries.byteStrings.count { return (.bytes(entries.byteStrings[at].key), entries.byteStrings[at].value) }
            return nil
        }
    }
}
