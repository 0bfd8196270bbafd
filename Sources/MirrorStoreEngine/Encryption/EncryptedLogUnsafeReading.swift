/// Values lent from an encrypted log's plaintext pages in place, for passes over many values: no
/// array is made, and reads that fall in the page the pass already holds take no lock.
extension EncryptedLog {
    func withBytes(at offset: UInt64, count: Int, lent: inout LentPage?, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let index = Self.page(containing: offset)
        let within = Int(offset - Self.start(ofPage: index))
        // A page's array is never changed in place (a longer last page is a new array), and what
        // it held stays what the log holds there: a held page is as good as the cached one.
        if count > 0, let page = lent, page.index == index, page.bytes.count >= within + count {
            return try page.bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[within..<(within + count)])) }
        }
        let (size, first, _, _) = cachedPages(forReadAt: offset, count: count)
        if count > 0, offset <= size, UInt64(count) <= size - offset, let first, first.count >= within + count {
            lent = LentPage(index: index, bytes: first)
            return try first.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[within..<(within + count)])) }
        }
        try read(at: offset, count: count).withUnsafeBytes(body)
    }
}
