/// Values lent from an encrypted log's plaintext pages in place, for passes over many values: no
/// array is made, and reads that fall in the page the pass already holds take no lock.
extension EncryptedLog {
    func withBytes(at offset: UInt64, count: Int, lent: inout LentPage?, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let index = Self.page(containing: offset)
        let within = Int(offset - Self.start(ofPage: index))
        // A page is never changed once made (a longer last page is a new one), and what it held
        // stays what the log holds there: a held page is as good as the cached one.
        if count > 0, let held = lent, held.index == index, held.page.count >= within + count {
            return try held.page.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[within..<(within + count)])) }
        }
        let (size, first, _) = cachedPages(page: index, within: within, count: count)
        if count > 0, offset <= size, UInt64(count) <= size - offset, let first, first.count >= within + count {
            lent = LentPage(index: index, page: first)
            return try first.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[within..<(within + count)])) }
        }
        try read(at: offset, count: count).withUnsafeBytes(body)
    }
}

/// One value lent from its page in place, for a read that decodes it and keeps none of its bytes
/// (a lookup by key): a copy of it cost an allocation and a pass over the bytes. A page the cache
/// holds is read without the lock and without a reference to it (`PublishedPages`).
extension EncryptedLog {
    func withBytes<Result>(at offset: UInt64, count: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result {
        let index = Self.page(containing: offset)
        let within = Int(offset - Self.start(ofPage: index))
        // A value across two pages is joined in a copy, as `read` gives it.
        guard count > 0, within + count <= Self.capacity(ofPage: index) else {
            return try read(at: offset, count: count).withUnsafeBytes(body)
        }
        let size = sizeWithoutLock
        guard offset <= size, UInt64(count) <= size - offset else {
            throw StorageError(.corrupted(path: path, offset: offset, reason: "the log ends before \(count) bytes could be read"))
        }
        // One path for both cases, in the reading: a `Result?` to tell them apart would make
        // this unspecialised function look up the metadata of that optional on every call.
        return try pages.withReading { reading in
            if let page = reading.page(index), page.count >= within + count {
                return try body(UnsafeRawBufferPointer(rebasing: page[within..<(within + count)]))
            }
            // A page read for it is authenticated and kept, as `read` keeps it.
            let page = try plaintext(ofPage: index, through: within + count)
            return try page.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[within..<(within + count)])) }
        }
    }
}

/// Bytes lent in two pieces from the two pages they lie across, for a run block (about a page
/// long, so nearly always across two): searched where it lies rather than joined in a copy, and
/// from cached pages without the lock (`PublishedPages`).
extension EncryptedLog {
    func withPieces(at offset: UInt64, count: Int, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        let index = Self.page(containing: offset)
        let within = Int(offset - Self.start(ofPage: index))
        let size = sizeWithoutLock
        guard offset <= size, UInt64(count) <= size - offset else {
            throw StorageError(.corrupted(path: path, offset: offset, reason: "the log ends before \(count) bytes could be read"))
        }
        let none = UnsafeRawBufferPointer(start: nil, count: 0)
        // Nothing to read, no page to decrypt, as for `read(at:count:)`.
        guard count > 0 else { return try body(none, none) }
        let capacity = Self.capacity(ofPage: index)
        let headCount = min(count, capacity - within)
        // Past the second page, what the two hold: the caller reads the rest another way.
        let tailCount = min(count - headCount, Self.capacity(ofPage: index + 1))
        let lentInPlace = try pages.withReading { reading -> Bool in
            guard let page = reading.page(index), page.count >= within + headCount else { return false }
            let head = UnsafeRawBufferPointer(rebasing: page[within..<(within + headCount)])
            guard tailCount > 0 else {
                try body(head, none)
                return true
            }
            // The next page follows on only from a full one.
            guard page.count == capacity, let following = reading.page(index + 1), following.count >= tailCount else { return false }
            try body(head, UnsafeRawBufferPointer(rebasing: following[..<tailCount]))
            return true
        }
        if lentInPlace { return }
        let page = try plaintext(ofPage: index, through: within + headCount)
        let following = tailCount == 0 ? nil : try plaintext(ofPage: index + 1, through: tailCount)
        try page.withUnsafeBytes { page in
            let head = UnsafeRawBufferPointer(rebasing: page[within..<(within + headCount)])
            guard let following else { return try body(head, none) }
            try following.withUnsafeBytes { try body(head, UnsafeRawBufferPointer(rebasing: $0[..<tailCount])) }
        }
    }
}

/// Bytes copied out of the cached pages where they lie, for `read(at:count:)`.
extension PublishedPages.Reading {
    /// `count` bytes from `within` on in page `page`, running on into page `page + 1` when they
    /// pass the end of `page` and it is full (`capacity` bytes), copied where the pages lie; nil
    /// when a page they need is not held or holds too few.
    func copy(page: Int, from within: Int, count: Int, capacity: Int) -> [UInt8]? {
        guard count > 0, within >= 0, let head = self.page(page) else { return nil }
        if within + count <= head.count {
            return Array(UnsafeRawBufferPointer(rebasing: head[within..<(within + count)]))
        }
        guard head.count == capacity, within < head.count, let tail = self.page(page + 1) else { return nil }
        let rest = count - (head.count - within)
        guard rest <= tail.count else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(count)
        result.append(contentsOf: UnsafeRawBufferPointer(rebasing: head[within...]))
        result.append(contentsOf: UnsafeRawBufferPointer(rebasing: tail[..<rest]))
        return result
    }
}

/// A read's bytes put together in the array it returns, from cached pages copied in and pages
/// decrypted where they go (`decrypt(_:page:from:of:)`): a page a read takes whole, such as the
/// checkpoint's at open, needs no array of its own, nor a copy out of one.
struct PlaintextAssembly {
    private let buffer: UnsafeMutableRawBufferPointer
    /// The bytes put in so far, from the start.
    private(set) var count = 0

    private init(buffer: UnsafeMutableRawBufferPointer) {
        self.buffer = buffer
    }

    /// The `count` bytes at `offset` in the log at `path` that `body` puts in, in order. Throws
    /// `corrupted` when it puts in fewer, as for a read that ends short.
    static func assembled(count: Int, at offset: UInt64, path: String, _ body: (inout PlaintextAssembly) throws -> Void) throws -> [UInt8] {
        var filled = 0
        let bytes = try [UInt8](unsafeUninitializedCapacity: count) { output, initialized in
            var assembly = PlaintextAssembly(buffer: UnsafeMutableRawBufferPointer(output))
            try body(&assembly)
            initialized = assembly.count
            filled = assembly.count
        }
        guard filled == count else {
            throw StorageError(.corrupted(path: path, offset: offset, reason: "the log ends before \(count) bytes could be read"))
        }
        return bytes
    }

    /// Appends `bytes`, or as many of them as there is room for.
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        let taken = min(bytes.count, buffer.count - count)
        guard taken > 0, let destination = buffer.baseAddress, let start = bytes.baseAddress else { return }
        (destination + count).copyMemory(from: start, byteCount: taken)
        count += taken
    }

    /// Appends page `index` of `log` decrypted from its physical bytes (from `start` on), where it
    /// goes in the result: all of it, exactly the page's capacity, authenticated before this
    /// returns (a page that does not authenticate throws `corrupted` and leaves nothing here).
    mutating func decrypt(_ physical: [UInt8], page index: Int, from start: Int, of log: EncryptedLog) throws {
        let length = try log.sealedLength(physical, page: index, from: start)
        guard length == EncryptedLog.capacity(ofPage: index), length <= buffer.count - count else { throw log.shortPage(index) }
        let nonceStart = start + 2
        let nonceEnd = nonceStart + AES256GCM.nonceByteCount
        do throws(StorageError) {
            try log.opener.open(
                physical[nonceEnd..<(nonceEnd + length + AES256GCM.tagByteCount)],
                nonce: Array(physical[nonceStart..<nonceEnd]),
                associatedData: log.associatedData(page: index, length: length),
                into: UnsafeMutableRawBufferPointer(rebasing: buffer[count..<(count + length)]))
        } catch where error.kind == .authenticationFailed {
            throw log.unauthentic(page: index)
        }
        count += length
    }
}
