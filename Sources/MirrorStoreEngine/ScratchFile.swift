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
}
