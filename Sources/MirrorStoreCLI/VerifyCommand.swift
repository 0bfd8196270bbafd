import MirrorStore
import MirrorStoreEngine

enum VerifyCommand: Command {
    static let name = "verify"
    static let summary = "Check every checksum, the schemas and every record; exit 1 on damage."
    static let usage = """
        USAGE: mirrorstore verify [--passphrase-file <path>] <store-path>

        Reads the whole file without changing it: checks the header, every unit's checksum and
        payload, then decodes each stored schema and every record. Exits 0 when all is intact and
        1 when something is damaged, naming the byte offset of the first damage and what opening
        would drop. Also lists what earlier recoveries dropped and the files that keep those bytes
        (<store-path>.dropped-<n>).

        Runs beside an app that has the store open and goes on writing: it takes no lock and
        checks the commits made when it reads; a last unit that looks torn is checked again a few
        times, since the app may be appending it.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try Arguments(arguments)
        let path = try parsed.storePath()
        let encryption = try parsed.encryption()
        let report = try verifyStoreFile(at: path, encryption: encryption)
        for kept in report.keptRecoveries {
            print(kept.description)
        }
        guard report.isIntact else {
            printError(report.description)
            return 1
        }
        let inspector = try StoreInspector(path: path, encryption: encryption)
        defer { try? inspector.close() }
        var records = 0
        for typeName in inspector.typeNames where inspector.schema(of: typeName) != nil {
            try inspector.forEachRecord(of: typeName) { _ in records += 1 }
        }
        print(report.description)
        print("schemas and \(records) records decode.")
        return 0
    }
}
