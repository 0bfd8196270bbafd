import MirrorStore

/// The store the migration crash tests kill a migration of: contacts written by version 1 of an
/// app, migrated by version 2 with one rename, one field combined from two, and one added
/// property; every fifth contact has a note, and version 2 deletes every tenth contact, whose
/// note its delete rule deletes with it, after the pass has written it.
public enum MigrationWorkload {
    public struct ContactV1: Persistable {
        public var identifier = 0
        public var name = ""
        public var firstName = ""
        public var lastName = ""
        public var age = 0
        public var note: Note?
        public init() {}
        public static var primaryKey: String? { "identifier" }
        public static var persistedTypeName: String { "Contact" }
    }

    public struct ContactV2: Persistable, Equatable {
        public var identifier = 0
        public var displayName = ""
        public var fullName = ""
        public var age = 0
        public var email = ""
        public var note: Note?
        public init() {}
        public static var primaryKey: String? { "identifier" }
        public static var persistedTypeName: String { "Contact" }
        public static var deleteRules: [String: DeleteRule] { ["note": .cascade] }
    }

    public struct Note: Persistable, Equatable {
        public var identifier = 0
        public var text = ""
        public init() {}
        public static var primaryKey: String? { "identifier" }
        public static var persistedTypeName: String { "Note" }
    }

    /// The contacts version 2 keeps: all but every tenth.
    public static func kept(_ n: Int) -> Bool { n % 10 != 0 }

    /// The note of contact `n`, if it has one.
    public static func note(_ n: Int) -> Note? {
        guard n % 5 == 0 else { return nil }
        var note = Note()
        note.identifier = n
        note.text = "note \(n)"
        return note
    }

    /// Contact `n` as version 1 stores it.
    public static func contact(_ n: Int) -> ContactV1 {
        var contact = ContactV1()
        contact.identifier = n
        contact.name = "contact \(n)"
        contact.firstName = "First\(n % 1000)"
        contact.lastName = "Last\(n / 1000)"
        contact.age = n % 90
        contact.note = note(n)
        return contact
    }

    /// Contact `n` as version 2 must read it after the migration: `nil` when it was deleted.
    public static func migrated(_ n: Int) -> ContactV2? {
        guard kept(n) else { return nil }
        let old = contact(n)
        var contact = ContactV2()
        contact.identifier = n
        contact.displayName = old.name
        contact.fullName = "\(old.firstName) \(old.lastName)"
        contact.age = old.age
        contact.note = old.note
        return contact
    }

    public static func configuration(version: Int) -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.schemaVersion = version
        configuration.durability = .none
        configuration.migration = { migration, oldSchemaVersion in
            guard oldSchemaVersion < 2 else { return }
            try migration.renameProperty(onType: "Contact", from: "name", to: "displayName")
            try migration.enumerateObjects(ofType: "Contact") { old, new in
                if !kept(try old.value(forProperty: "identifier")) {
                    try migration.delete(new)
                    return
                }
                let first: String = try old.value(forProperty: "firstName")
                let last: String = try old.value(forProperty: "lastName")
                try new.setValue("\(first) \(last)", forProperty: "fullName")
            }
        }
        return configuration
    }

    /// Writes a version-1 store of `count` contacts at `path`.
    public static func populate(_ path: String, count: Int) throws {
        let store = try Store(path: path, models: [ContactV1.self, Note.self], configuration: configuration(version: 1))
        var next = 1
        while next <= count {
            let end = min(count, next + 9_999)
            try store.write { transaction in
                for n in next...end { try transaction.add(contact(n)) }
            }
            next = end + 1
        }
        try store.close()
    }
}
