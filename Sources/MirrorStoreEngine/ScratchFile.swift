#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An unnamed file for a pass's scratch data, in the temporary directory (`TMPDIR`, else
/// `/tmp`): removed as soon as it is made, so that nothing is left behind whatever happens; its
/// space returns when its log is released.
enum ScratchFile {
    static func make() -> FileLog? {
        let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array((directory + "/mirrorstore-scratch-XXXXXX").utf8CString)
        let descriptor = mkstemp(&template)
        guard descriptor >= 0 else { return nil }
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        _ = unlink(path)
        return FileLog(path: path, descriptor: descriptor, faults: nil)
    }

    /// A scratch file as a log: sealed (`EncryptedLog.scratch(in:)`, under a key of its own
    /// that only memory holds) when `sealed`, for the keys and values of an encrypted store,
    /// which a plain file would hold in the clear; else the plain file. Nil when none can be made.
    static func make(sealed: Bool) -> (any LogStorage)? {
        guard let file = make() else { return nil }
        guard sealed else { return file }
        return try? EncryptedLog.scratch(in: file)
    }
}
