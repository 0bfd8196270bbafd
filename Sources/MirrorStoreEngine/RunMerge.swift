/// Reads several sorted sources of key entries (persisted runs, and the memory's entries sorted)
/// as one, in key order, where the newest source that mentions a key decides its location:
/// what a lookup does for one key, done for all of them in one pass.
enum RunMerge {
    /// One sorted source: a run read a block at a time, or the memory's entries sorted.
    struct Cursor {
        private let run: KeyRun?
        private var block = 0
        /// The run's current block, decoded.
        private var entries: [(key: StorageKey, packed: UInt64)]
        private var memory: SortedMemoryEntries.Iterator?
        private var position = 0
        private(set) var current: (key: StorageKey, packed: UInt64)?

        init(run: KeyRun) throws {
            self.run = run
            entries = []
            memory = nil
            try load()
        }

        init(entries: SortedMemoryEntries) {
            run = nil
            self.entries = []
            var memory = entries.makeIterator()
            current = memory.next()
            self.memory = memory
        }

        mutating func advance() throws {
            if memory != nil {
                current = memory?.next()
                return
            }
            position += 1
            if position >= entries.count {
                block += 1
                try load()
            }
            current = position < entries.count ? entries[position] : nil
        }

        /// Reads the blocks from `block` on until one holds entries.
        private mutating func load() throws {
            guard let run else { return }
            entries.removeAll(keepingCapacity: true)
            position = 0
            while entries.isEmpty, block < run.blockOffsets.count {
                let index = block
                run.blocks.prefetch(forPassAt: index)
                entries = try run.blocks.keyEntries(index)
                if entries.isEmpty { block += 1 }
            }
            current = entries.first
        }
    }

    /// Calls `body` with every key the cursors mention, in key order, with the location the
    /// first cursor (the newest) that mentions it holds, deletion marks (0) included.
    static func forEachNewest(_ cursors: [Cursor], _ body: (StorageKey, UInt64) throws -> Void) throws {
        var cursors = cursors
        while true {
            var smallest: Int?
            for index in cursors.indices {
                guard let entry = cursors[index].current else { continue }
                if let best = smallest, let bestEntry = cursors[best].current, !StorageKey.precedes(entry.key, bestEntry.key) { continue }
                smallest = index
            }
            guard let smallest, let chosen = cursors[smallest].current else { return }
            try body(chosen.key, chosen.packed)
            for index in cursors.indices where cursors[index].current?.key == chosen.key {
                try cursors[index].advance()
            }
        }
    }

    /// Calls `body` with each live key of `runs` (newest first) and its location, in key order.
    static func forEachLive(_ runs: [KeyRun], _ body: (StorageKey, UInt64) throws -> Void) throws {
        if runs.count == 1 {
            try runs[0].forEachEntry { key, packed in if packed != 0 { try body(key, packed) } }
            return
        }
        try forEachNewest(runs.map(Cursor.init)) { key, packed in if packed != 0 { try body(key, packed) } }
    }
}
