import MirrorStoreEngine

enum CompactCommand: Command {
    static let name = "compact"
    static let summary = "Rewrite the store with live records only."
    static let usage = """
        USAGE: mirrorstore compact [--passphrase-file <path>] <store-path>

        Takes the store's write lock (fails if another process has it open), writes the live
        records to a temporary file, syncs it and renames it over the store. Prints the file size
        before and after.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try Arguments(arguments)
        let path = try parsed.storePath()
        var configuration = EngineConfiguration()
        configuration.autoCompaction = .disabled
        configuration.encryption = try parsed.encryption()
        let engine = try StorageEngine(path: path, configuration: configuration)
        let before = engine.statistics.fileSize
        try engine.compact()
        let after = engine.statistics.fileSize
        try engine.close()
        print("compacted '\(path)': \(before) → \(after) bytes")
        return 0
    }
}
