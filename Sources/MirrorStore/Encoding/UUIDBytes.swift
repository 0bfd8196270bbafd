import Foundation

extension UUID {
    /// The UUID whose 16 bytes, in order, are `bytes`, as records and keys store it. Callers
    /// pass exactly 16 bytes (a reader's `fixedBytes(16)`, or a key checked to have 16).
    init(storedBytes bytes: [UInt8]) {
        self.init(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                         bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
