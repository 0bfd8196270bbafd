/// A type's in-memory keys and locations in key order (``StorageKey/precedes(_:_:)``), deletion
/// marks included: integer keys, then strings, then byte strings, each kind sorted in an array of
/// its own. A checkpoint after a million new integer keys then holds them as 16-byte pairs; a
/// single array of `StorageKey` pairs was twice that, on top of the sorted copy it was made from.
struct SortedMemoryEntries: Sequence {
    private let integers: [(key: Int64, value: UInt64)]
    private let strings: [(key: String, value: UInt64)]
    private let byteStrings: [(key: [UInt8], value: UInt64)]

    init(integers: [Int64: UInt64], strings: [String: UInt64], byteStrings: [[UInt8]: UInt64]) {
        self.integers = integers.sorted { $0.key < $1.key }
        self.strings = strings.sorted { StorageKey.stringPrecedes($0.key, $1.key) }
        self.byteStrings = byteStrings.sorted { $0.key.lexicographicallyPrecedes($1.key) }
    }

    var count: Int { integers.count + strings.count + byteStrings.count }

    /// The entry at `position` in key order, or nil past the end.
    subscript(position: Int) -> (key: StorageKey, packed: UInt64)? {
        var at = position
        if at < integers.count { return (.integer(integers[at].key), integers[at].value) }
        at -= integers.count
        if at < strings.count { return (.string(strings[at].key), strings[at].value) }
        at -= strings.count
        if at < byteStrings.count { return (.bytes(byteStrings[at].key), byteStrings[at].value) }
        return nil
    }

    func makeIterator() -> Iterator { Iterator(entries: self) }

    struct Iterator: IteratorProtocol {
        let entries: SortedMemoryEntries
        var position = 0

        mutating func next() -> (key: StorageKey, packed: UInt64)? {
            defer { position += 1 }
            return entries[position]
        }
    }
}
