import MirrorStore
import MirrorStoreEngine

enum InspectCommand: Command {
    static let name = "inspect"
    static let summary = "Show the format version, types with object counts, live and dead bytes, and the checkpoint."
    static let usage = """
        USAGE: mirrorstore inspect [--passphrase-file <path>] <store-path>

        Opens the store read-only, beside an app that has it open and goes on writing (it shows
        the last commit made when it opened; sizes are those of the commits it read), and prints its format version, schema version, last sequence number, file size, live and dead
        bytes, the checkpoint opening starts from and its persisted key and index runs, each type with its object count and schema, and under "recovery:" what earlier
        recoveries dropped and the files that keep those bytes (<store-path>.dropped-<n>), and a
        torn final commit that opening for writing would drop.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try Arguments(arguments)
        let path = try parsed.storePath()
        let encryption = try parsed.encryption()
        let inspector = try StoreInspector(path: path, encryption: encryption)
        defer { try? inspector.close() }
        let statistics = inspector.statistics
        print("format version: \(statistics.formatVersion)")
        print("schema version: \(inspector.schemaVersion.map(String.init) ?? "none")")
        print("last sequence: \(statistics.lastSequence)")
        print("file size: \(statistics.fileSize) bytes")
        print("live bytes: \(statistics.liveBytes)")
        print("dead bytes: \(statistics.deadBytes)")
        if let end = statistics.checkpointEnd {
            let indexRuns = statistics.persistedIndexRuns
            print("checkpoint: ends at byte \(end), \(statistics.persistedRuns) key run\(statistics.persistedRuns == 1 ? "" : "s") and \(indexRuns) index run\(indexRuns == 1 ? "" : "s") in force; opening replays \(statistics.fileSize - min(end, statistics.fileSize)) bytes after it")
        } else {
            print("checkpoint: none; opening replays the whole log")
        }
        print("types:")
        for typeName in inspector.typeNames {
            print("  \(typeName): \(inspector.count(of: typeName)) objects")
            if let schema = inspector.schema(of: typeName) {
                for property in schema.properties {
                    print("    \(property)")
                }
            }
        }
        // A writer may be appending meanwhile: verification checks again a tail that looks torn.
        let verification = try verifyStoreFile(at: path, encryption: encryption)
        print("recovery:")
        if verification.isIntact, verification.keptRecoveries.isEmpty {
            print("  nothing dropped")
        }
        for kept in verification.keptRecoveries {
            print("  \(kept)")
        }
        if !verification.isIntact {
            print("  \(verification)")
        }
        return 0
    }
}
