import MirrorStore

enum DumpCommand: Command {
    static let name = "dump"
    static let summary = "Print every object of a type, or those matching a condition, as JSON lines."
    static let usage = """
        USAGE: mirrorstore dump [--passphrase-file <path>] --type <type-name> [--where <condition>] <store-path>

        Prints one JSON object per stored object of the type, in primary-key order, decoded with
        the schemas stored in the file (the models are not needed). Links to models with a primary
        key print as that key; embedded models print as nested objects. Runs beside an app that
        has the store open and goes on writing: it prints the objects as of the last commit made
        when it opened.

        --where prints only the objects matching a condition on their stored properties:
          name == "Hulk"                    compare with  ==  !=  <  <=  >  >=
          age >= 30 && !(isActive || x)     combine with  &&  ||  !  and parentheses; a Bool alone tests true
          publisher.name == "Marvel"        read through a to-one link (nil when the link is nil)
          realName != nil                   values: "text" (escapes \\" \\\\ \\n \\t \\u{…}), 42, -4.5, true, false, nil
          joined < "2020-01-01T00:00:00Z"   a string stands for a date (ISO 8601), a UUID or a URL
        A mistake in the condition, or a property the type does not store, is reported with exit
        status 1.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try Arguments(arguments, options: ["--type", "--where"])
        let path = try parsed.storePath()
        guard let typeName = parsed.options["--type"] else { throw UsageError(description: "missing --type <type-name>") }
        let inspector = try StoreInspector(path: path, encryption: try parsed.encryption())
        defer { try? inspector.close() }
        guard let condition = parsed.options["--where"] else {
            try inspector.forEachRecord(of: typeName) { record in
                print(JSONLine.object(record, root: true))
            }
            return 0
        }
        do {
            try inspector.forEachRecord(of: typeName, where: condition) { record in
                print(JSONLine.object(record, root: true))
            }
        } catch let error as QueryError {
            var message = "mirrorstore dump: \(error)"
            // Point at the mistake in the condition as it was typed.
            if case .syntax(let offset, _) = error.kind, !condition.contains("\n") {
                message += "\n  \(condition)\n  \(String(repeating: " ", count: offset))^"
            }
            printError(message)
            return 1
        }
        return 0
    }
}
