import Foundation
import Testing
import TestSupport
import MirrorStore

/// A store opened with `Configuration.encryption`: queries, indexes, compaction, reopening and
/// key changes work as on a plain store; the file holds none of what was written; the typed
/// errors for secrets are reachable from `import MirrorStore`.
@Suite struct EncryptedStoreTests {
    final class Patient: Persistable {
        var id = 0
        var name = ""
        var diagnosis = ""
        var age = 0
        init() {}
        static var primaryKey: String? { "id" }
        static var compoundIndexes: [CompoundIndex] { [["age", "name"]] }

        init(id: Int, name: String, diagnosis: String, age: Int) {
            self.id = id
            self.name = name
            self.diagnosis = diagnosis
            self.age = age
        }
    }

    static let key = Data((0..<32).map { UInt8($0 * 7 % 256) })

    static func storeConfiguration(_ encryption: Store.Configuration.Encryption?) -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.encryption = encryption
        configuration.durability = .none
        return configuration
    }

    @Test func queriesIndexesCompactionAndReopeningWorkEncrypted() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("patients.store")
        var generator = SeededRandom(seed: SeededRandom.seed(default: 0xE27))
        var reference: [Int: (name: String, diagnosis: String, age: Int)] = [:]
        var store = try Store(path: path, models: [Patient.self], configuration: Self.storeConfiguration(.key(Self.key)))
        for round in 0..<6 {
            try store.write { transaction in
                for _ in 0..<200 {
                    let id = Int.random(in: 0..<500, using: &generator)
                    let patient = Patient(
                        id: id, name: "patient-name-\(id)", diagnosis: "confidential-diagnosis-\(round)",
                        age: Int.random(in: 0..<100, using: &generator))
                    try transaction.add(patient)
                    reference[id] = (patient.name, patient.diagnosis, patient.age)
                }
            }
            if round == 3 { try store.compact() }
            if round % 2 == 1 {
                try store.close()
                store = try Store(path: path, models: [Patient.self], configuration: Self.storeConfiguration(.key(Self.key)))
            }
            let adults = try store.objects(Patient.self).filter(#Predicate { $0.age >= 18 && $0.age < 40 })
            #expect(Set(adults.map(\.id)) == Set(reference.filter { $0.value.age >= 18 && $0.value.age < 40 }.keys), "round \(round)")
            #expect(try store.objects(Patient.self).count == reference.count)
        }
        try store.close()
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        for needle in ["patient-name-", "confidential-diagnosis", "Patient", "diagnosis"] {
            let pattern = Array(needle.utf8)
            let found = bytes.indices.dropLast(pattern.count).contains { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) }
            #expect(!found, "'\(needle)' is in the file in clear")
        }
    }

    /// A migration rewrites the file: the new file is encrypted too (under a new data key), and
    /// holds none of the old or new names in clear.
    @Test func aMigrationOfAnEncryptedStoreStaysEncrypted() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("people.store")
        var version1 = configuration(version: 1, migration: v2Migration)
        version1.encryption = .key(Self.key)
        let store = try Store(path: path, models: [V1.Person.self], configuration: version1)
        try store.write { transaction in
            var ada = V1.Person()
            ada.identifier = 1
            ada.name = "Ada Lovelace"
            ada.firstName = "Ada"
            try transaction.add(ada)
        }
        try store.close()
        var version2 = configuration(version: 2, migration: v2Migration)
        version2.encryption = .key(Self.key)
        let migrated = try Store(path: path, models: [V2.Person.self], configuration: version2)
        #expect(try migrated.object(V2.Person.self, primaryKey: 1)?.fullName == "Ada Lovelace")
        try migrated.close()
        let bytes = [UInt8](try fileBytes(path))
        for needle in ["Ada Lovelace", "fullName", "Person"] {
            let pattern = Array(needle.utf8)
            let found = bytes.indices.dropLast(pattern.count).contains { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) }
            #expect(!found, "'\(needle)' is in the migrated file in clear")
        }
        #expect(throws: StorageError(.encryptionRequired(path: path))) {
            try Store(path: path, models: [V2.Person.self], configuration: configuration(version: 2, migration: v2Migration))
        }
    }

    @Test func secretsAreTypedErrorsAndChangesKeepTheData() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("secrets.store")
        var store = try Store(path: path, models: [Patient.self], configuration: Self.storeConfiguration(.passphrase("first")))
        try store.write { try $0.add(Patient(id: 1, name: "Ada", diagnosis: "fine", age: 36)) }
        try store.close()

        #expect(throws: StorageError(.wrongKey(path: path))) {
            try Store(path: path, models: [Patient.self], configuration: Self.storeConfiguration(.passphrase("second")))
        }
        #expect(throws: StorageError(.emptyPassphrase)) {
            try Store(path: path, models: [Patient.self], configuration: Self.storeConfiguration(.passphrase("")))
        }
        #expect(throws: StorageError(.invalidKeyLength(found: 16, expected: 32))) {
            try Store(path: path, models: [Patient.self], configuration: Self.storeConfiguration(.key(Data(count: 16))))
        }
        #expect(throws: StorageError(.encryptionRequired(path: path))) {
            try Store(path: path, models: [Patient.self], configuration: Self.storeConfiguration(nil))
        }

        store = try Store(path: path, models: [Patient.self], configuration: Self.storeConfiguration(.passphrase("first")))
        try store.changeEncryption(to: .key(Self.key))
        try store.rotateEncryptionKey()
        try store.write { try $0.add(Patient(id: 2, name: "Grace", diagnosis: "fine", age: 45)) }
        try store.close()
        #expect(throws: StorageError(.wrongKey(path: path))) {
            try Store(path: path, models: [Patient.self], configuration: Self.storeConfiguration(.passphrase("first")))
        }
        store = try Store(path: path, models: [Patient.self], configuration: Self.storeConfiguration(.key(Self.key)))
        #expect(try store.objects(Patient.self).map(\.name).sorted() == ["Ada", "Grace"])
        try store.changeEncryption(to: nil)
        try store.close()
        store = try Store(path: path, models: [Patient.self], configuration: Self.storeConfiguration(nil))
        #expect(try store.objects(Patient.self).count == 2)
        try store.close()
        #expect("\(Store.Configuration.Encryption.passphrase("first"))" == "a passphrase")
    }
}
