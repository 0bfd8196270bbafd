import Foundation

/// A fresh directory per test, removed afterwards, like GRDB's per-test database.
public func withTemporaryDirectory<Result>(_ body: (String) throws -> Result) throws -> Result {
    let path = NSTemporaryDirectory() + "mirrorstore-tests-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// The same, for async tests.
public func withTemporaryDirectory<Result>(_ body: (String) async throws -> Result) async throws -> Result {
    let path = NSTemporaryDirectory() + "mirrorstore-tests-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

/// A fresh directory per test, removed when the test ends.
public final class TemporaryDirectory {
    public let path: String

    public init() {
        let base = FileManager.default.temporaryDirectory.path
        path = base + "/mirrorstore-tests-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    public func file(_ name: String) -> String {
        path + "/" + name
    }
}
