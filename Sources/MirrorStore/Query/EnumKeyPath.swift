/// A key path on a raw-value enum in a predicate, `$0.priority.rawValue` or any other property
/// of the enum, answered from the raw value the record stores, without the model.
///
/// Swift gives no way to name a concrete enum's `rawValue` key path at run time: `\E.rawValue`
/// written for a generic `E` is the protocol requirement's key path, never equal to the
/// predicate's `\Priority.rawValue`. So a key path is known to read the raw value when it reads
/// it for every case of a `CaseIterable` enum (a key path is a pure read); then the stored value
/// is the answer, and byte tests and indexes read it as they read any property. Any other key
/// path is applied to the enum made from the stored raw value, as reading the model makes it.
enum EnumKeyPath {
    /// What `keyPath` reads from a value of `type`, when `type` is an enum stored by its raw
    /// value: `.rawValue` itself, or a reading of each stored raw value; `nil` otherwise.
    static func reading(_ keyPath: AnyKeyPath, on type: Any.Type) -> Reading? {
        guard let enumType = type as? any RawRepresentable.Type, !(type is any RecordPrimitive.Type) else { return nil }
        return openedReading(keyPath, on: enumType)
    }

    /// How a key path on an enum reads a stored raw value.
    enum Reading {
        /// The key path reads the raw value: the stored value as it is.
        case rawValue
        /// The key path's value for the enum with the given stored raw value; `nil` for one the
        /// value or the result has no query form for.
        case mapped(Mapping)
    }

    /// A key path applied to the enum made from a stored raw value.
    struct Mapping: Sendable {
        fileprivate let reading: any StoredEnumReading

        /// The key path's value for the enum whose stored raw value is `stored`; `nil` when no
        /// case has it or the value has no query form.
        func read(_ stored: QueryValue) -> QueryValue? { reading.read(stored) }
    }

    private static func openedReading<Enum: RawRepresentable>(_ keyPath: AnyKeyPath, on type: Enum.Type) -> Reading? {
        guard let rawType = Enum.RawValue.self as? any RecordPrimitive.Type, let typed = keyPath as? PartialKeyPath<Enum> else { return nil }
        if let cases = type as? any CaseIterable.Type, readsRawValue(typed, cases: cases) { return .rawValue }
        return .mapped(Mapping(reading: mapping(typed, raw: rawType)))
    }

    /// `Raw` is `Enum.RawValue`, opened as a `RecordPrimitive`.
    private static func mapping<Enum: RawRepresentable, Raw: RecordPrimitive>(_ keyPath: PartialKeyPath<Enum>, raw: Raw.Type) -> any StoredEnumReading {
        KeyPathOnEnum<Enum, Raw>(keyPath: keyPath)
    }

    /// Whether `keyPath` reads each case's raw value.
    private static func readsRawValue<Enum: RawRepresentable>(_ keyPath: PartialKeyPath<Enum>, cases: any CaseIterable.Type) -> Bool {
        var all = 0
        for value in cases.allCasesAny {
            guard let value = value as? Enum, let read = QueryValue(constant: value[keyPath: keyPath]),
                  let raw = QueryValue(constant: value.rawValue), read.isEqual(to: raw) == true else { return false }
            all += 1
        }
        return all > 0
    }
}

fileprivate protocol StoredEnumReading: Sendable {
    func read(_ stored: QueryValue) -> QueryValue?
}

private struct KeyPathOnEnum<Enum: RawRepresentable, Raw: RecordPrimitive>: StoredEnumReading, @unchecked Sendable {
    // @unchecked: a key path is an immutable value, only read through here.
    let keyPath: PartialKeyPath<Enum>

    func read(_ stored: QueryValue) -> QueryValue? {
        guard let record = stored.scalarRecordValue, let raw = Raw(recordValue: record) as? Enum.RawValue,
              let value = Enum(rawValue: raw) else { return nil }
        return QueryValue(constant: value[keyPath: keyPath])
    }
}

private extension CaseIterable {
    static var allCasesAny: [Any] { allCases.map { $0 } }
}
