import Foundation
import Testing
@testable import MirrorStore
import MirrorStoreEngine
import TestSupport

// Models of a store whose migration writes its key table as runs as it goes: string keys and
// integer keys written in shuffled order, a link, and indexes.
enum StreamedV1 {
    struct Member: Persistable {
        var handle = ""
        var name = ""
        var team = 0
        init() {}
        static var primaryKey: String? { "handle" }
        static var persistedTypeName: String { "Member" }
        static var indexedProperties: [String] { ["team"] }
    }

    struct Visit: Persistable {
        var identifier = 0
        var member: Member?
        var day = 0
        init() {}
        static var primaryKey: String? { "identifier" }
        static var persistedTypeName: String { "Visit" }
    }
}

enum StreamedV2 {
    struct Member: Persistable, Equatable {
        var handle = ""
        var displayName = ""
        var team = 0
        var score = 7
        init() {}
        static var primaryKey: String? { "handle" }
        static var persistedTypeName: String { "Member" }
        static var indexedProperties: [String] { ["team", "displayName"] }
    }

    struct Visit: Persistable {
        var identifier = 0
        var member: Member?
        var day = 0
        init() {}
        static var primaryKey: String? { "identifier" }
        static var persistedTypeName: String { "Visit" }
    }
}

@Suite("Migrations that stream their key table")
struct StreamedMigrationTests {
    static let members = 500
    static let visits = 800

    static func member(_ handle: String) -> StreamedV1.Member {
        var member = StreamedV1.Member()
        member.handle = handle
        member.name = "Name of \(handle)"
        member.team = handle.unicodeScalars.reduce(0) { $0 + Int($1.value) } % 7
        return member
    }

    /// A version-1 store at `path`, its objects added in a shuffled order over several transactions.
    static func populate(_ path: String, seed: UInt64) throws {
        var generator = SeededRandom(seed: seed)
        var configuration = Store.Configuration()
        configuration.schemaVersion = 1
        let store = try Store(path: path, models: [StreamedV1.Member.self, StreamedV1.Visit.self], configuration: configuration)
        let handles = (0..<members).map { "member-\($0)-ü" }.shuffled(using: &generator)
        for chunk in stride(from: 0, to: handles.count, by: 100) {
            try store.write { transaction in
                for handle in handles[chunk..<min(handles.count, chunk + 100)] { try transaction.add(member(handle)) }
            }
        }
        let identifiers = (1...visits).shuffled(using: &generator)
        for chunk in stride(from: 0, to: identifiers.count, by: 200) {
            try store.write { transaction in
                for identifier in identifiers[chunk..<min(identifiers.count, chunk + 200)] {
                    var visit = StreamedV1.Visit()
                    visit.identifier = identifier
                    visit.day = identifier % 31
                    // The whole member: adding a visit adds the member it links to as well.
                    visit.member = member("member-\(identifier % members)-ü")
                    try transaction.add(visit)
                }
            }
        }
        try store.close()
    }

    /// Version 2's configuration; `keysInMemory` bounds the keys the migration holds per type.
    static func configuration(keysInMemory: Int?, moveVisits: Bool = false) -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.schemaVersion = 2
        configuration.rewriteKeysInMemory = keysInMemory
        configuration.migration = { migration, _ in
            try migration.renameProperty(onType: "Member", from: "name", to: "displayName")
            guard moveVisits else { return }
            // Every key changes: each is looked up among the keys written so far, runs included.
            try migration.enumerateObjects(ofType: "Visit") { old, new in
                let identifier: Int = try old.value(forProperty: "identifier")
                try new.setValue(.int(Int64(identifier + 10_000)), forProperty: "identifier")
            }
        }
        return configuration
    }

    struct Migrated: Equatable {
        var members: [StreamedV2.Member]
        var visits: [Int: (member: String?, day: Int)]

        static func == (left: Migrated, right: Migrated) -> Bool {
            left.members == right.members && left.visits.count == right.visits.count
                && left.visits.allSatisfy { right.visits[$0.key]?.member == $0.value.member && right.visits[$0.key]?.day == $0.value.day }
        }
    }

    /// Migrates a copy of `pristine` and reads everything back after reopening; checks that the
    /// file verifies and that the indexes agree with the objects.
    static func migrate(_ pristine: String, in directory: String, name: String, _ configuration: Store.Configuration) throws -> Migrated {
        let path = directory + "/" + name
        try FileManager.default.copyItem(atPath: pristine, toPath: path)
        try Store(path: path, models: [StreamedV2.Member.self, StreamedV2.Visit.self], configuration: configuration).close()
        let report = try verifyStoreFile(at: path)
        #expect(report.isIntact, "\(name): \(report)")
        let store = try Store(path: path, models: [StreamedV2.Member.self, StreamedV2.Visit.self], configuration: configuration)
        defer { try? store.close() }
        let members = try store.objects(StreamedV2.Member.self).sorted { $0.handle < $1.handle }
        for team in 0..<7 {
            let indexed = try store.objects(StreamedV2.Member.self).filter(#Predicate { $0.team == team }).map(\.handle).sorted()
            #expect(indexed == members.filter { $0.team == team }.map(\.handle), "\(name): the team index agrees with the objects")
        }
        for member in members.prefix(20) {
            let wanted = member.displayName
            let found = try store.objects(StreamedV2.Member.self).filter(#Predicate { $0.displayName == wanted }).map(\.handle)
            #expect(found == [member.handle], "\(name): the name index agrees with the objects")
        }
        var visits: [Int: (member: String?, day: Int)] = [:]
        for visit in try store.objects(StreamedV2.Visit.self) { visits[visit.identifier] = (visit.member?.handle, visit.day) }
        return Migrated(members: members, visits: visits)
    }

    @Test("A migration writing its keys as many runs gives what one holding them all gives", arguments: [false, true])
    func streamedMatchesReference(moveVisits: Bool) throws {
        try withTemporaryDirectory { directory in
            let pristine = directory + "/v1.store"
            try Self.populate(pristine, seed: SeededRandom.seed(default: 0x5E77))
            let reference = try Self.migrate(pristine, in: directory, name: "reference.store", Self.configuration(keysInMemory: nil, moveVisits: moveVisits))
            #expect(reference.members.count == Self.members)
            #expect(reference.visits.count == Self.visits)
            #expect(reference.members.allSatisfy { $0.displayName == "Name of \($0.handle)" && $0.score == 7 })
            for bound in [3, 16, 100] {
                let streamed = try Self.migrate(
                    pristine, in: directory, name: "streamed-\(bound).store", Self.configuration(keysInMemory: bound, moveVisits: moveVisits))
                #expect(streamed == reference, "a bound of \(bound) keys")
            }
        }
    }

    @Test("A duplicate key found among the runs written refuses the migration and leaves the file")
    func duplicateAcrossRuns() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/v1.store"
            try Self.populate(path, seed: 0xD0B1E)
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            var configuration = Self.configuration(keysInMemory: 4)
            configuration.migration = { migration, _ in
                // Visit 1 takes visit 2's key: found among the keys written (most of them in runs
                // by then) when visit 2 comes first, or when visit 2 keeps its key after it.
                try migration.enumerateObjects(ofType: "Visit") { old, new in
                    let identifier: Int = try old.value(forProperty: "identifier")
                    if identifier == 1 { try new.setValue(.int(2), forProperty: "identifier") }
                }
            }
            #expect {
                try Store(path: path, models: [StreamedV2.Member.self, StreamedV2.Visit.self], configuration: configuration).close()
            } throws: { error in
                (error as? MigrationError)?.kind == .duplicatePrimaryKey(typeName: "Visit", key: "2")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        }
    }
}
