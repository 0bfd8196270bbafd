import Foundation
import Testing
import TestSupport
@testable import MirrorStore
@testable import MirrorStoreEngine

/// Runs the built `mirrorstore` executable against real store files.
@Suite("mirrorstore tool")
struct MirrorStoreToolTests {
    struct Outcome {
        var status: Int32
        var output: String
        var errors: String
    }

    private func mirrorstore(_ arguments: String...) throws -> Outcome {
        try mirrorstore(arguments, environment: nil)
    }

    private func mirrorstore(_ arguments: [String], environment: [String: String]?) throws -> Outcome {
        let tool = try #require(Self.toolURL(), "the mirrorstore executable must be built next to the tests")
        let process = Process()
        if let environment { process.environment = environment }
        let output = Pipe()
        let errors = Pipe()
        process.executableURL = tool
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus,
                       output: String(decoding: out, as: UTF8.self), errors: String(decoding: err, as: UTF8.self))
    }

    /// Runs the tool, but stops it after `seconds`: nil when it had not finished by then.
    private func mirrorstore(within seconds: Double, _ arguments: [String]) throws -> Outcome? {
        let tool = try #require(Self.toolURL(), "the mirrorstore executable must be built next to the tests")
        let process = Process()
        let output = Pipe()
        let errors = Pipe()
        process.executableURL = tool
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        let finished = !process.isRunning
        if !finished { process.terminate() }
        process.waitUntilExit()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        guard finished else { return nil }
        return Outcome(status: process.terminationStatus,
                       output: String(decoding: out, as: UTF8.self), errors: String(decoding: err, as: UTF8.self))
    }

    static func toolURL() -> URL? {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<6 {
            let candidate = directory.appendingPathComponent("mirrorstore")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    /// A store with three commits; returns the file size after each, i.e. where each unit ends.
    private func makeStore(at path: String) throws -> [UInt64] {
        var configuration = Store.Configuration()
        configuration.compaction = .manual
        let store = try Store(path: path, models: [Hero.self, AllTypes.self], configuration: configuration)
        var ends = [store.statistics.fileSize]
        try store.write { try $0.add(Hero.ironMan()) }
        ends.append(store.statistics.fileSize)
        try store.write { transaction in
            let hulk = Hero()
            hulk.identifier = 1009
            hulk.name = "Hulk \"Green\""
            hulk.tags = ["smash"]
            try transaction.add(hulk)
            var all = AllTypes()
            all.double = .nan
            all.data = Data([1, 2, 3])
            all.date = Date(timeIntervalSince1970: 1_101_763_989.123)   // 2004-11-29T21:33:09.123Z
            try transaction.add(all)
        }
        ends.append(store.statistics.fileSize)
        try store.write { try $0.update(Hero.self, primaryKey: 1455, set: \.name, to: "Iron Man II") }
        ends.append(store.statistics.fileSize)
        try store.close()
        return ends
    }

    @Test("inspect, verify and dump take an encrypted store's passphrase from a file or the environment, never the command line")
    func encryptedStore() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/secret.store"
            var configuration = Store.Configuration()
            configuration.encryption = .passphrase("tool passphrase")
            let store = try Store(path: path, models: [Hero.self], configuration: configuration)
            try store.write { try $0.add(Hero.ironMan()) }
            try store.close()
            let passphraseFile = directory + "/passphrase"
            try Data("tool passphrase\n".utf8).write(to: URL(fileURLWithPath: passphraseFile))

            let verify = try mirrorstore("verify", "--passphrase-file", passphraseFile, path)
            #expect(verify.status == 0, "\(verify.errors)")
            #expect(verify.output.contains("records decode"))
            let dump = try mirrorstore("dump", "--passphrase-file", passphraseFile, "--type", "Hero", path)
            #expect(dump.status == 0, "\(dump.errors)")
            #expect(dump.output.contains("Iron Man"))
            var environment = ProcessInfo.processInfo.environment
            environment["MIRRORSTORE_PASSPHRASE"] = "tool passphrase"
            let inspect = try mirrorstore(["inspect", path], environment: environment)
            #expect(inspect.status == 0, "\(inspect.errors)")
            #expect(inspect.output.contains("  Hero: 1 objects"))

            let without = try mirrorstore("inspect", path)
            #expect(without.status == 1)
            #expect(without.errors.contains("is encrypted; open it with the passphrase or key"))
            environment["MIRRORSTORE_PASSPHRASE"] = "another passphrase"
            let wrong = try mirrorstore(["verify", path], environment: environment)
            #expect(wrong.status == 1)
            #expect(wrong.errors.contains("does not open the store"))
        }
    }

    @Test("inspect lists types, counts, live and dead bytes")
    func inspect() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/heroes.store"
            _ = try makeStore(at: path)
            let outcome = try mirrorstore("inspect", path)
            #expect(outcome.status == 0, "\(outcome.errors)")
            #expect(outcome.output.contains("format version: 7"))
            #expect(outcome.output.contains("checkpoint: "))
            #expect(outcome.output.contains("  Hero: 2 objects"))
            #expect(outcome.output.contains("  Publisher: 1 objects"))
            #expect(outcome.output.contains("  AllTypes: 1 objects"))
            #expect(outcome.output.contains("identifier: Int (primary key)"))
            #expect(outcome.output.contains("live bytes: "))
            #expect(outcome.output.contains("dead bytes: "))
        }
    }

    @Test("inspect, verify and dump run beside a writer that goes on committing")
    func besideAWriter() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/live.store"
            _ = try makeStore(at: path)
            var configuration = Store.Configuration()
            configuration.compaction = .manual
            let writer = try Store(path: path, models: [Hero.self, AllTypes.self], configuration: configuration)
            let stop = Lock<Bool>(false)
            let committing = Thread {
                var n = 0
                while !stop.withLock({ $0 }) {
                    n += 1
                    let hero = Hero()
                    hero.identifier = 10_000 + n % 500
                    hero.name = "Hero \(n)"
                    try? writer.write { try $0.add(hero) }
                    if n % 200 == 0 { try? writer.compact() }
                }
            }
            committing.start()
            defer { stop.withLock { $0 = true } }
            for round in 0..<3 {
                let inspect = try mirrorstore("inspect", path)
                #expect(inspect.status == 0, "round \(round): \(inspect.errors)")
                #expect(inspect.output.contains("  Publisher: 1 objects"), "round \(round)")
                let verify = try mirrorstore("verify", path)
                #expect(verify.status == 0, "round \(round): \(verify.errors)")
                #expect(verify.output.contains("is intact"), "round \(round)")
                let dump = try mirrorstore("dump", "--type", "Hero", "--where", "identifier == 1455", path)
                #expect(dump.status == 0, "round \(round): \(dump.errors)")
                #expect(dump.output.split(separator: "\n").count == 1, "round \(round): \(dump.output)")
            }
            stop.withLock { $0 = true }
            while !committing.isFinished { usleep(1_000) }
            try writer.close()
        }
    }

    @Test("inspect prints the schema version and each type's stored schema, before and after a migration")
    func inspectSchemaVersion() throws {
        try withTemporaryDirectory { directory in
            let path = try fixtureCopy(in: directory)
            let before = try mirrorstore("inspect", path)
            #expect(before.output.contains("schema version: 1"))
            #expect(before.output.contains("    firstName: String"))
            try Store(path: path, models: [V3.Dog.self], configuration: configuration(version: 3)).close()
            let after = try mirrorstore("inspect", path)
            #expect(after.status == 0, "\(after.errors)")
            #expect(after.output.contains("schema version: 3"))
            #expect(after.output.contains("    fullName: String"))
            #expect(!after.output.contains("firstName"))
        }
    }

    @Test("verify passes an intact store and exits 1 naming the offset of damage")
    func verify() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/heroes.store"
            let ends = try makeStore(at: path)
            let intact = try mirrorstore("verify", path)
            #expect(intact.status == 0, "\(intact.errors)")
            #expect(intact.output.contains("is intact"))
            #expect(intact.output.contains("schemas and 4 records decode."))

            // Flip one byte inside the second commit: the damage starts where the first one ends.
            var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            let inside = Int(ends[1]) + 20
            bytes[inside] ^= 0x40
            try bytes.write(to: URL(fileURLWithPath: path))
            let damaged = try mirrorstore("verify", path)
            #expect(damaged.status == 1)
            #expect(damaged.errors.contains("has damage at byte offset \(ends[1])"), "\(damaged.errors)")

            // A torn last commit is reported as such.
            bytes[inside] ^= 0x40
            try bytes.prefix(Int(ends[3]) - 3).write(to: URL(fileURLWithPath: path))
            let torn = try mirrorstore("verify", path)
            #expect(torn.status == 1)
            #expect(torn.errors.contains("has a torn final commit at byte offset \(ends[2])"), "\(torn.errors)")
        }
    }

    @Test("verify and inspect report what recovery dropped and where the bytes are kept")
    func recoveryReports() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/heroes.store"
            let ends = try makeStore(at: path)
            let tornLength = Int(ends[3]) - 3
            let intact = try Data(contentsOf: URL(fileURLWithPath: path))
            try intact.prefix(tornLength).write(to: URL(fileURLWithPath: path))
            let dropped = tornLength - Int(ends[2])

            let verifyTorn = try mirrorstore("verify", path)
            #expect(verifyTorn.status == 1)
            #expect(verifyTorn.errors.contains("opening drops the last \(dropped) bytes (at least 1 commit) and keeps them in a sidecar file."), "\(verifyTorn.errors)")
            let inspectTorn = try mirrorstore("inspect", path)
            #expect(inspectTorn.status == 0, "\(inspectTorn.errors)")
            #expect(inspectTorn.output.contains("recovery:\n  '\(path)' has a torn final commit at byte offset \(ends[2])"), "\(inspectTorn.output)")

            // Opening for writing drops the torn commit, keeps its bytes and says so.
            let store = try Store(path: path, models: [Hero.self, AllTypes.self])
            let report = try #require(store.recoveryReport)
            try store.close()
            let sidecar = path + ".dropped-1"
            #expect(report.keptAt == sidecar)
            #expect(report.droppedBytes == UInt64(dropped))
            let kept = "Recovery dropped \(dropped) bytes (at least 1 commit after sequence 3) for a torn final commit at byte offset \(ends[2]) (the unit's declared length of"
            #expect(report.description.hasPrefix(kept), "\(report)")

            let verify = try mirrorstore("verify", path)
            #expect(verify.status == 0, "\(verify.errors)")
            #expect(verify.output.contains(kept), "\(verify.output)")
            #expect(verify.output.contains("they are kept in '\(sidecar)'."))
            #expect(verify.output.contains("is intact"))
            let inspect = try mirrorstore("inspect", path)
            #expect(inspect.status == 0, "\(inspect.errors)")
            #expect(inspect.output.contains("recovery:\n  \(kept)"), "\(inspect.output)")
            #expect(inspect.output.contains("they are kept in '\(sidecar)'."))

            // An intact store says so.
            try FileManager.default.removeItem(atPath: sidecar)
            #expect(try mirrorstore("inspect", path).output.contains("recovery:\n  nothing dropped"))
        }
    }

    @Test("compact shrinks the file and keeps every object")
    func compact() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/heroes.store"
            let ends = try makeStore(at: path)
            let outcome = try mirrorstore("compact", path)
            #expect(outcome.status == 0, "\(outcome.errors)")
            #expect(outcome.output.contains("compacted"))
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? UInt64
            #expect(size.map { $0 < ends[3] } == true)
            let store = try Store(path: path, models: [Hero.self, AllTypes.self])
            #expect(try store.object(Hero.self, primaryKey: 1455)?.name == "Iron Man II")
            #expect(try store.objects(Hero.self).count == 2)
            try store.close()
        }
    }

    @Test("dump prints one JSON object per line, decoded without the models")
    func dump() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/heroes.store"
            _ = try makeStore(at: path)
            let outcome = try mirrorstore("dump", "--type", "Hero", path)
            #expect(outcome.status == 0, "\(outcome.errors)")
            let lines = outcome.output.split(separator: "\n")
            #expect(lines.count == 2)
            let objects = try lines.map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            }
            #expect(objects[0]["identifier"] as? Int == 1009)
            #expect(objects[0]["name"] as? String == "Hulk \"Green\"")
            #expect(objects[0]["tags"] as? [String] == ["smash"])
            #expect(objects[1]["name"] as? String == "Iron Man II")
            #expect(objects[1]["publisher"] as? Int == 1, "a linked model with a primary key prints as its key")

            let all = try mirrorstore("dump", "--type", "AllTypes", path)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(all.output.utf8)) as? [String: Any])
            #expect(object["double"] as? String == "nan")
            #expect(object["data"] as? String == "AQID")
            #expect(object["date"] as? String == "2004-11-29T21:33:09.123Z", "the full date and time, in UTC")
        }
    }

    @Test("dump --where prints the objects matching a condition, and explains a bad one")
    func dumpWhere() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/heroes.store"
            _ = try makeStore(at: path)
            func identifiers(_ condition: String) throws -> [Int] {
                let outcome = try mirrorstore("dump", "--type", "Hero", "--where", condition, path)
                #expect(outcome.status == 0, "\(condition): \(outcome.errors)")
                return try outcome.output.split(separator: "\n").map { line in
                    let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                    return try #require(object["identifier"] as? Int)
                }
            }
            #expect(try identifiers(#"name == "Hulk \"Green\"""#) == [1009])
            #expect(try identifiers("identifier >= 1009") == [1009, 1455])
            #expect(try identifiers(#"identifier > 1009 && !(name == "Hulk")"#) == [1455])
            #expect(try identifiers(#"publisher.name == "Marvel""#) == [1455])
            #expect(try identifiers("publisher == nil || identifier < 0") == [1009])
            #expect(try identifiers("-1 > identifier").isEmpty)

            let syntax = try mirrorstore("dump", "--type", "Hero", "--where", "name = 3", path)
            #expect(syntax.status == 1)
            #expect(syntax.output.isEmpty)
            #expect(syntax.errors.contains("syntax error at character 5: use == to compare"), "\(syntax.errors)")
            #expect(syntax.errors.contains("  name = 3\n       ^"), "a caret under the mistake: \(syntax.errors)")

            let unknown = try mirrorstore("dump", "--type", "Hero", "--where", #"nickname == "x""#, path)
            #expect(unknown.status == 1)
            #expect(unknown.errors.contains("Hero has no stored property named nickname"), "\(unknown.errors)")

            let mismatch = try mirrorstore("dump", "--type", "Hero", "--where", #"identifier == "x""#, path)
            #expect(mismatch.status == 1)
            #expect(mismatch.errors.contains("Hero.identifier holds Int values"), "\(mismatch.errors)")

            let deep = try mirrorstore("dump", "--type", "Hero", "--where", String(repeating: "!", count: 50_000) + "name", path)
            #expect(deep.status == 1)
            #expect(deep.errors.contains("more than 64 levels"), "\(deep.errors)")

            let missing = try mirrorstore("dump", "--type", "Hero", path, "--where")
            #expect(missing.status == 2)
            #expect(missing.errors.contains("--where needs a value"))

            let help = try mirrorstore("dump", "--help")
            #expect(help.output.contains("--where <condition>"))
        }
    }

    /// Until issue 28 the tools were refused while an app had the store open; they now read beside it.
    @Test("a store open for writing in this process is read beside its writer")
    func readWhileOpen() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/heroes.store"
            _ = try makeStore(at: path)
            let store = try Store(path: path, models: [Hero.self, AllTypes.self])
            let outcome = try mirrorstore("inspect", path)
            #expect(outcome.status == 0, "\(outcome.errors)")
            #expect(outcome.output.contains("  Hero: 2 objects"))
            try store.close()
            #expect(try mirrorstore("inspect", path).status == 0)
        }
    }

    @Test("verify, inspect and dump refuse a FIFO at once instead of waiting for a writer")
    func fifo() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/pipe.store"
            #expect(mkfifo(path, 0o644) == 0)
            for command in [["verify", path], ["inspect", path], ["dump", "--type", "Hero", path]] {
                let outcome = try mirrorstore(within: 10, command)
                let finished = try #require(outcome, "\(command[0]) hung on a FIFO")
                #expect(finished.status == 1, "\(command[0])")
                #expect(finished.errors.contains("names a FIFO, not a regular file, so it is not a store"), "\(command[0]): \(finished.errors)")
            }
        }
    }

    @Test("verify, inspect and dump end crafted store files in a typed error at once")
    func craftedFiles() throws {
        try withTemporaryDirectory { directory in
            let ends = try makeStore(at: directory + "/heroes.store").map(Int.init)
            let intact = Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/heroes.store")))
            var gigabyte = ByteWriter()
            gigabyte.uint32(UInt32(LogFrame.maximumPayload))
            gigabyte.uint32(0xDEAD_BEEF)
            gigabyte.uint64(4)
            let cases: [(name: String, bytes: [UInt8], size: Int?, says: String)] = [
                ("a unit numbered UInt64.max", intact + LogFrame.encode(sequence: .max, payload: []), nil,
                 "the unit's sequence number 18446744073709551615 is above 9223372036854775807, the highest a store writes"),
                ("a unit cut out of the middle", Array(intact[..<ends[1]] + intact[ends[2]...]), nil,
                 "the unit's sequence number 4 does not follow its predecessor's 2"),
                ("a gigabyte declared over a 4 GiB sparse file", intact + gigabyte.bytes, 4 << 30,
                 "more bytes follow the end it declares, so it is not an interrupted last append"),
            ]
            for crafted in cases {
                let path = directory + "/crafted.store"
                try Data(crafted.bytes).write(to: URL(fileURLWithPath: path))
                if let size = crafted.size { #expect(truncate(path, off_t(size)) == 0) }
                #expect(throws: StorageError.self, "\(crafted.name)") { try Store(path: path, models: [Hero.self, AllTypes.self]) }
                for command in [["verify", path], ["inspect", path], ["dump", "--type", "Hero", path]] {
                    let start = Date()
                    let outcome = try #require(try mirrorstore(within: 10, command), "\(crafted.name), \(command[0]) hung")
                    #expect(Date().timeIntervalSince(start) < 5, "\(crafted.name), \(command[0])")
                    #expect(outcome.status == 1, "\(crafted.name), \(command[0])")
                    #expect(outcome.errors.contains(crafted.says), "\(crafted.name), \(command[0]): \(outcome.errors)")
                }
                try FileManager.default.removeItem(atPath: path)
            }

            // Records a crafted file smuggles in: verify decodes every record, dump prints them.
            let receipts = directory + "/receipts.store"
            try CraftedRecordTests.craft(at: receipts, receipts: [
                5: CraftedRecordTests.receipt(identifier: 5, amount: "12abc%%", when: 0),
            ])
            for command in [["verify", receipts], ["dump", "--type", "Receipt", receipts]] {
                let outcome = try #require(try mirrorstore(within: 10, command))
                #expect(outcome.status == 1, "\(command[0])")
                #expect(outcome.errors.contains("The stored Receipt with key 5 cannot be read: byte 3 of the record: \"12abc%%\" is not a decimal number as a store writes one."), "\(command[0]): \(outcome.errors)")
            }
            try FileManager.default.removeItem(atPath: receipts)
            try CraftedRecordTests.craft(at: receipts, receipts: [
                5: CraftedRecordTests.receipt(identifier: 6, amount: "1", when: 0),
            ])
            for command in [["verify", receipts], ["dump", "--type", "Receipt", receipts]] {
                let outcome = try #require(try mirrorstore(within: 10, command))
                #expect(outcome.status == 1, "\(command[0])")
                #expect(outcome.errors.contains("its primary key identifier holds 6, not the key it is stored under"), "\(command[0]): \(outcome.errors)")
            }
        }
    }

    @Test("help for the tool and each command")
    func help() throws {
        let overview = try mirrorstore("--help")
        #expect(overview.status == 0)
        for command in ["inspect", "verify", "compact", "dump"] {
            #expect(overview.output.contains("  \(command) "))
            let help = try mirrorstore(command, "--help")
            #expect(help.status == 0)
            #expect(help.output.hasPrefix("USAGE: mirrorstore \(command)"))
        }
    }

    @Test("mistakes go to standard error with a non-zero status")
    func errors() throws {
        try withTemporaryDirectory { directory in
            let missing = try mirrorstore("inspect", directory + "/missing.store")
            #expect(missing.status == 1)
            #expect(missing.errors.contains("No such file or directory"))
            #expect(missing.output.isEmpty)

            let unknown = try mirrorstore("frobnicate")
            #expect(unknown.status == 2)
            #expect(unknown.errors.contains("unknown command 'frobnicate'"))

            let path = directory + "/heroes.store"
            _ = try makeStore(at: path)
            let noType = try mirrorstore("dump", path)
            #expect(noType.status == 2)
            #expect(noType.errors.contains("missing --type <type-name>"))

            let wrongType = try mirrorstore("dump", "--type", "Villain", path)
            #expect(wrongType.status == 1)
            #expect(wrongType.errors.contains("Villain is not one of this store's models"))

            try Data("not a store at all".utf8).write(to: URL(fileURLWithPath: directory + "/text.store"))
            let notAStore = try mirrorstore("verify", directory + "/text.store")
            #expect(notAStore.status == 1)
            #expect(!notAStore.errors.isEmpty)
        }
    }
}
