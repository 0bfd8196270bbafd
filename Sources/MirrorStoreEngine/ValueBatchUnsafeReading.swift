// The pass over a type's values in batches: pointers to values where they lie in the file's
// memory mapping, gathered in a temporary buffer, which is why this file is named so.

extension EngineSnapshot {
    /// Calls `body` with every value of `type` in file order, as
    /// ``forEachValueInPlace(type:_:)`` does, up to ``ValueBatch/capacity`` values a call: a pass
    /// that tests every value then makes one call per batch rather than one per value, and makes
    /// the key and location of only the values it keeps (``ValueBatch/key(at:)``).
    ///
    /// ```swift
    /// try snapshot.forEachValueBatchInPlace(type: "Hero") { batch in
    ///     for index in batch.values.indices where isWanted(batch.values[index]) { keep(batch.key(at: index)) }
    /// }
    /// ```
    public func forEachValueBatchInPlace(type: String, _ body: (ValueBatch) throws -> Void) throws {
        guard let objects = index.types[type] else { return }
        let order = try fileOrder(of: objects), onlyIntegers = objects.onlyIntegers
        try index.regions?.verifyAll(in: generation)
        try generation.withBytesInPlace { file in
            try withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: ValueBatch.capacity) { values in
                var prefetchedTo: UInt64 = 0
                var lent: LentPage?
                // The batch holds the values of `order.items[first..<first + count]`.
                var first = 0, count = 0
                func flush() throws {
                    guard count > 0 else { return }
                    try body(ValueBatch(values: UnsafeBufferPointer(rebasing: values[..<count]), order: order, onlyIntegers: onlyIntegers, first: first))
                    first += count
                    count = 0
                }
                for (position, item) in order.items.enumerated() {
                    let (offset, length) = index.resolve(item.packed)
                    if offset + UInt64(length) > prefetchedTo {
                        generation.prefetch(at: offset, count: Self.prefetchSpan)
                        prefetchedTo = offset + UInt64(Self.prefetchSpan)
                    }
                    if let file, offset <= UInt64(file.count), UInt64(length) <= UInt64(file.count) - offset {
                        values[count] = UnsafeRawBufferPointer(rebasing: file[Int(offset)..<(Int(offset) + length)])
                        count += 1
                        if count == ValueBatch.capacity { try flush() }
                    } else {
                        // Bytes lent for one call only: a batch of their own.
                        try flush()
                        try generation.withBytes(at: offset, count: length, lent: &lent) { bytes in
                            try withUnsafePointer(to: bytes) { one in
                                try body(ValueBatch(values: UnsafeBufferPointer(start: one, count: 1), order: order, onlyIntegers: onlyIntegers, first: position))
                            }
                        }
                        first = position + 1
                    }
                }
                try flush()
            }
        }
    }
}

/// Values of one type given to a pass in file order (``EngineSnapshot/forEachValueBatchInPlace(type:_:)``),
/// valid during the call only.
public struct ValueBatch {
    /// How many values a batch holds at most.
    public static let capacity = 256

    /// Each value's bytes, where they lie in the file's memory mapping (lent or copied when the
    /// log cannot be mapped).
    public let values: UnsafeBufferPointer<UnsafeRawBufferPointer>
    let order: FileOrder.Sorted
    let onlyIntegers: Bool
    /// The position in `order.items` of the first value.
    let first: Int

    /// The key of the value at `index` in ``values``.
    public func key(at index: Int) -> StorageKey {
        let payload = order.items[first + index].payload
        return onlyIntegers ? .integer(payload) : order.keys[Int(payload)]
    }

    /// Where the value at `index` in ``values`` lies (for ``TypeValues/value(at:)``).
    public func location(at index: Int) -> ValueLocation {
        ValueLocation(packed: order.items[first + index].packed)
    }
}
