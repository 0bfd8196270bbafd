import Foundation
import MirrorStoreEngine
import Testing
import TestSupport
@testable import MirrorStore

/// Hero as a later app version declares it: one more property.
private final class HeroWithAge: Persistable {
    var identifier = 0
    var name = ""
    var realName = ""
    var power = Power.money
    var publisher: Publisher?
    var tags: [String] = []
    var aliases: Set<String> = []
    var age = 0
    init() {}
    static var primaryKey: String? { "identifier" }
    static var indexedProperties: [String] { ["name"] }
    static var persistedTypeName: String { "Hero" }
}

@Suite("Store files")
struct StoreFileTests {
    @Test("every mapped type reads back exactly after reopening")
    func reopenEveryType() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/all.store"
            var random = SeededRandom(seed: PropertyBasedMappingTests.seed)
            let models = (0..<60).map { _ in PropertyBasedMappingTests.randomModel(&random) }
            let store = try Store(path: path, models: [AllTypes.self, Employee.self])
            try store.write { try $0.add(contentsOf: models) }
            let employee = Employee()
            employee.identifier = 3
            employee.employer = Company()
            employee.employer?.branches = [Address(), Address()]
            employee.contacts = ["x": Address()]
            employee.homes = [Address()]
            try store.write { try $0.add(employee) }
            try store.close()

            let reopened = try Store(path: path, models: [AllTypes.self, Employee.self])
            let read = try reopened.objects(AllTypes.self).all()
            #expect(read.count == models.count)
            for (index, (original, copy)) in zip(models, read).enumerated() {
                #expect(PropertyBasedMappingTests.bitwiseEqual(original, copy), "model \(index), seed \(PropertyBasedMappingTests.seed)")
            }
            let copy = try #require(try reopened.object(Employee.self, primaryKey: 3))
            #expect(copy.employer?.branches.count == 2)
            #expect(copy.contacts == employee.contacts)
            #expect(copy.homes == employee.homes)
            try reopened.close()
        }
    }

    @Test("a no-sync bulk load is all there after close and reopen")
    func noSyncDurability() throws {
        try withTemporaryDirectory { directory in
            var configuration = Store.Configuration()
            configuration.durability = .none
            let store = try Store(path: directory + "/bulk.store", models: [Person.self], configuration: configuration)
            try store.write { try $0.add(contentsOf: (1...500).map { Person.named("p\($0)", $0) }) }
            try store.close()
            let reopened = try Store(path: directory + "/bulk.store", models: [Person.self])
            #expect(try reopened.objects(Person.self).count == 500)
            try reopened.close()
        }
    }

    @Test("a changed model without a raised schema version is refused with every difference")
    func schemaChanged() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/heroes.store"
            try Store(path: path, models: [Hero.self]).close()
            let error = #expect(throws: StoreError.self) { try Store(path: path, models: [HeroWithAge.self]) }
            #expect(error?.description == "The store's schemas differ from the models: Hero: property age was added; raise Configuration.schemaVersion above 0 to migrate the store (add a Configuration.migration for changes the automatic rules do not cover), or open it with the models it was written with.")
            #expect(StoreError(.schemaChanged(version: 2, differences: ["A: property a was removed", "B: property b changed from Int to String"])).description
                == "The store's schemas differ from the models: A: property a was removed; B: property b changed from Int to String; raise Configuration.schemaVersion above 2 to migrate the store (add a Configuration.migration for changes the automatic rules do not cover), or open it with the models it was written with.")
            #expect(try Store(path: path, models: [Hero.self]).close() == (), "the refused open left the file usable")
        }
    }

    @Test("schema differences name each changed property; index changes are not differences")
    func schemaDifferences() throws {
        let stored = ObjectSchema(typeName: "T", properties: [
            .init(name: "id", kind: .int, isPrimaryKey: true),
            .init(name: "name", kind: .string, isIndexed: true),
            .init(name: "gone", kind: .bool),
        ])
        let current = ObjectSchema(typeName: "T", properties: [
            .init(name: "id", kind: .string),
            .init(name: "name", kind: .string),
            .init(name: "new", kind: .optional(.date)),
        ])
        #expect(ModelRegistry.differences(from: stored, to: current) == [
            "property id changed from Int to String",
            "property id is no longer the primary key",
            "property new was added",
            "property gone was removed",
        ])
    }

    @Test("a file written with a newer schema version is refused")
    func newerSchemaVersion() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/versioned.store"
            var configuration = Store.Configuration()
            configuration.schemaVersion = 3
            try Store(path: path, models: [Person.self], configuration: configuration).close()
            configuration.schemaVersion = 2
            #expect(throws: StoreError(.newerSchemaVersion(stored: 3, configured: 2))) {
                try Store(path: path, models: [Person.self], configuration: configuration)
            }
            #expect(StoreError(.newerSchemaVersion(stored: 3, configured: 2)).description
                == "The store was written with schema version 3, newer than this app's version 2.")
            configuration.schemaVersion = 4
            try Store(path: path, models: [Person.self], configuration: configuration).close()
        }
    }

    @Test("a file that is not a store is refused, and left untouched")
    func notAStore() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/notes.txt"
            let text = Data("These are my notes, not a database.\n".utf8)
            try text.write(to: URL(fileURLWithPath: path))
            let error = #expect(throws: StorageError.self) { try Store(path: path, models: [Person.self]) }
            #expect(error?.kind == .notAStore(path: path))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == text)
        }
    }

    @Test("a directory that does not exist ends in a typed error")
    func missingDirectory() throws {
        try withTemporaryDirectory { directory in
            let error = #expect(throws: StorageError.self) {
                try Store(path: directory + "/no/such/dir/x.store", models: [Person.self])
            }
            #expect(error?.description.contains("No such file or directory") == true, "\(String(describing: error))")
        }
    }

    @Test("the same path twice in one process is refused until the first store closes")
    func openTwice() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/once.store"
            let first = try Store(path: path, models: [Person.self])
            let error = #expect(throws: StorageError.self) { try Store(path: path, models: [Person.self]) }
            #expect(error?.kind == .alreadyOpenInProcess(path: path))
            try first.close()
            try Store(path: path, models: [Person.self]).close()
        }
    }

    @Test("compaction keeps every live object and shrinks the file")
    func compaction() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/compact.store"
            var configuration = Store.Configuration()
            configuration.compaction = .manual
            let store = try Store(path: path, models: [Person.self], configuration: configuration)
            for round in 0..<20 {
                try store.write { try $0.add(contentsOf: (1...50).map { Person.named("round \(round) #\($0)", $0) }) }
            }
            try store.write { try $0.delete(Person.self, primaryKey: 50) }
            let before = store.statistics
            try store.compact()
            let after = store.statistics
            #expect(after.fileSize < before.fileSize / 5)
            #expect(after.deadBytes < 64, "only the framing of the rewritten units counts as dead")
            #expect(try store.objects(Person.self).all().map(\.name) == (1...49).map { "round 19 #\($0)" })
            try store.close()
            let reopened = try Store(path: path, models: [Person.self])
            #expect(try reopened.objects(Person.self).count == 49)
            try reopened.close()
        }
    }

    @Test("automatic compaction runs when the dead-bytes threshold is crossed")
    func automaticCompaction() throws {
        try withTemporaryDirectory { directory in
            var configuration = Store.Configuration()
            configuration.compaction = .whenDeadBytesExceed(ratio: 0.5, minimumFileSize: 16 << 10)
            let store = try Store(path: directory + "/auto.store", models: [Person.self], configuration: configuration)
            for round in 0..<40 {
                try store.write { try $0.add(contentsOf: (1...20).map { Person.named("r\(round)-\($0)", $0) }) }
            }
            #expect(store.statistics.compactions > 0)
            #expect(try store.objects(Person.self).all().map(\.name) == (1...20).map { "r39-\($0)" })
            try store.close()
        }
    }

    @Test("a full disk fails the commit with a typed error and loses nothing acknowledged",
          .enabled(if: getuid() == 0, "mounting a tiny tmpfs needs root"))
    func fullDisk() throws {
        try withTemporaryDirectory { directory in
            let mountPoint = directory + "/tiny"
            try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
            try run("/bin/mount", ["-t", "tmpfs", "-o", "size=128k", "tmpfs", mountPoint])
            defer { try? run("/bin/umount", [mountPoint]) }
            let path = mountPoint + "/full.store"
            var configuration = Store.Configuration()
            configuration.compaction = .manual
            let store = try Store(path: path, models: [Person.self], configuration: configuration)
            var acknowledged = 0
            var failure: (any Error)?
            for batch in 0..<1_000 {
                do {
                    try store.write { transaction in
                        try transaction.add(contentsOf: (0..<20).map { Person.named(String(repeating: "x", count: 200), batch * 20 + $0) })
                    }
                    acknowledged = (batch + 1) * 20
                } catch {
                    failure = error
                    break
                }
            }
            let storageError = try #require(failure as? StorageError, "the disk never filled: \(String(describing: failure))")
            #expect(storageError.kind == .diskFull(path: path))
            #expect(acknowledged > 0)
            try? store.close()
            let reopened = try Store(path: path, models: [Person.self])
            #expect(try reopened.objects(Person.self).count == acknowledged)
            try reopened.close()
        }
    }

    private func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "\(tool) \(arguments) exited \(process.terminationStatus)"])
        }
    }
}
