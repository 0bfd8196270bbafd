// The models the multi-process test's child processes write (PostgresWriterChild) and the test
// reads back (MultiProcessTests): one declaration for both.
import MirrorStore

/// One transaction of one child, under a key no other process uses.
public struct ChildEntry: Persistable {
    public var id = 0
    public var process = 0
    public var sequence = 0
    public static var primaryKey: String? { "id" }

    public init() {}

    public init(id: Int, process: Int, sequence: Int) {
        self.id = id
        self.process = process
        self.sequence = sequence
    }
}

/// A counter every child adds to.
public struct ChildCounter: Persistable {
    public var id = 0
    public var count = 0
    public var lastWriter = -1
    public static var primaryKey: String? { "id" }

    public init() {}

    public init(id: Int) {
        self.id = id
    }
}

/// A row several children upsert.
public struct ChildShared: Persistable {
    public var id = 0
    public var writer = 0
    public var sequence = 0
    public static var primaryKey: String? { "id" }

    public init() {}

    public init(id: Int, writer: Int, sequence: Int) {
        self.id = id
        self.writer = writer
        self.sequence = sequence
    }
}
