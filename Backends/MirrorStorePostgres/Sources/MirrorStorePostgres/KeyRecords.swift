import MirrorStore

/// The records a migration shows for links: a record of the target's model holding only its
/// primary key, as the file store's migration shows them, without reading the target's row.
enum KeyRecords {
    /// `value` read from `column`, its link keys (a single one, or a list) made records of the
    /// schema `schemaOf` gives the target; any other value as it is.
    static func replacingKeys(in value: RecordValue, column: ColumnMapping, schemaOf: (String) -> ObjectSchema?) throws -> RecordValue {
        guard let target = column.linkTarget, let schema = schemaOf(target), let key = schema.primaryKey else { return value }
        func record(_ keyValue: RecordValue) throws -> RecordValue {
            if keyValue == .null { return .null }
            let record = ManagedObject(objectSchema: schema)
            try record.setValue(keyValue, forProperty: key)
            return .object(record)
        }
        if case .list(let keys) = value { return .list(List(try keys.map(record))) }
        return try record(value)
    }
}
