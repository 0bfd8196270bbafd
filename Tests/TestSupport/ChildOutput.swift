#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes one whole line straight to the stdout descriptor, unbuffered, so that nothing a crash
/// child has acknowledged sits in a stdio buffer when SIGKILL arrives.
public func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    var done = 0
    while done < bytes.count {
        let wrote = bytes.withUnsafeBytes { buffer in
            buffer.baseAddress.map { write(1, $0 + done, buffer.count - done) } ?? -1
        }
        if wrote < 0 && errno == EINTR { continue }
        if wrote <= 0 { return }
        done += wrote
    }
}
