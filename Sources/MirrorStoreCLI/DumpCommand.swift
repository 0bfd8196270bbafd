import MirrorStore

enum DumpCommand: Command {
    static let name = "dump"
    static let summary = "Print every object of a type as JSON lines."
    static let usage = """
        USAGE: mirrorstore dump --type <type-name> <store-path>

        Prints one JSON object per stored object of the type, in primary-key order, decoded with
        the schemas stored in the file (the models are not needed). Links to models with a primary
        key print as that key; embedded models print as nested objects.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try Arguments(arguments, options: ["--type"])
        let path = try parsed.storePath()
        guard let typeName = parsed.options["--type"] else { throw UsageError(description: "missing --type <type-name>") }
        let inspector = try StoreInspector(path: path)
        defer { try? inspector.close() }
        try inspector.forEachRecord(of: typeName) { record in
            print(JSONLine.object(record, root: true))
        }
        return 0
    }
}
