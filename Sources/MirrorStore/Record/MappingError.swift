/// A model and a record that cannot be converted into each other.
///
/// The description is one sentence naming the model type, the property path and what was expected
/// versus found:
///
/// ```swift
/// do {
///     _ = try Hero.modelInstance(managedObject: record)
/// } catch let error as MappingError {
///     print(error)   // Hero.publisher.name expects String, but the record holds int(5).
/// }
/// ```
public struct MappingError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What went wrong. New cases may be added; switch with a `default`.
    public enum Kind: Equatable, Sendable {
        /// The property's Swift type cannot be stored.
        case unsupportedType(String)
        /// The property's type is, or holds, an enum without a raw value, usually because it has
        /// associated values; `declared` is the property's type, `enumType` the enum.
        case unsupportedEnum(declared: String, enumType: String)
        /// The record's schema has no such property.
        case missingProperty
        /// The record's value has another type than the property.
        case typeMismatch(expected: String, found: String)
        /// The record holds `null` for a property that is not optional.
        case unexpectedNil(expected: String)
        /// An enum has no case for the stored raw value.
        case unknownEnumCase(enumType: String, rawValue: String)
        /// A `let` property of a class: release builds may fold its default value into the code
        /// that reads it, so writing it into an instance `init()` made would not be seen. Structs
        /// may have `let` properties: they are built from their records in fresh memory.
        case immutableProperty
        /// A struct with `let` properties is built from empty values and its record, but this
        /// property's type has no empty value; `type` is that type.
        case noEmptyValue(type: String)
        /// A `weak` or `unowned` property: its storage is not a plain value.
        case nonStrongReference
        /// A property declared as a class holds an instance of a subclass.
        case subclassInstance(declared: String, actual: String)
        /// The record describes another model type.
        case wrongRecordType(expected: String, found: String)
        /// `primaryKey`, `indexedProperties` or `ignoredProperties` names a property the model
        /// does not store.
        case unknownPropertyName(role: String)
        /// The primary key's type cannot identify a record.
        case unsupportedPrimaryKey(String)
        /// The model cannot be mapped at all.
        case unsupportedModel(String)
        /// Embedded models (or struct models in arrays) nest `levels` deep, more than the
        /// converting thread's stack can follow; nothing was converted. Class models, linked or
        /// embedded, are followed to any depth.
        case nestingTooDeep(levels: Int)
        /// A ``LinkingObjects`` property is declared by a model without a primary key, which links
        /// cannot point at.
        case inverseWithoutPrimaryKey(sourceType: String, sourceProperty: String)
        /// A ``LinkingObjects`` property names a property its source model does not store.
        case inverseOfMissingProperty(sourceType: String, sourceProperty: String)
        /// A ``LinkingObjects`` property names a property of its source model that is not a to-one
        /// or to-many link (`T`, `T?`, `[T]`, `[T?]` or `Set<T>`); `kind` is that property's kind.
        case inverseOfNonLink(sourceType: String, sourceProperty: String, kind: String)
        /// A ``LinkingObjects`` property names a link of its source model to another model type.
        case inverseOfOtherLink(sourceType: String, sourceProperty: String, linkedType: String)
    }

    /// What went wrong.
    public let kind: Kind
    /// The stored name of the model type the conversion started from.
    public let modelType: String
    /// The property names from the model down to the failing value; indexes and keys appear as
    /// `[2]` and `["key"]`.
    public let path: [String]

    init(_ kind: Kind, modelType: String, path: [String] = []) {
        self.kind = kind
        self.modelType = modelType
        self.path = path
    }

    /// The error for a record value of the wrong shape for `kind`; the caller adds the path.
    static func mismatch(expected kind: PropertyKind, found record: RecordValue) -> MappingError {
        if case .null = record {
            return MappingError(.unexpectedNil(expected: kind.description), modelType: "")
        }
        return MappingError(.typeMismatch(expected: kind.description, found: record.description), modelType: "")
    }

    /// The same error seen from one level further up: `parent` goes first in the path.
    func nested(under parent: String) -> MappingError {
        // A path thousands of levels long would say nothing the level count does not.
        if case .nestingTooDeep = kind { return self }
        return MappingError(kind, modelType: modelType, path: [parent] + path)
    }

    /// The same error, reported from the model type `modelType`.
    func reported(from modelType: String) -> MappingError {
        MappingError(kind, modelType: modelType, path: path)
    }

    /// `Hero.publisher.name`, or `Hero.sidekicks[2].name`.
    public var propertyPath: String {
        path.reduce(modelType) { text, component in
            component.hasPrefix("[") ? text + component : text + "." + component
        }
    }

    /// One sentence: the property path, what was expected versus found, and what to do.
    public var description: String {
        let subject = propertyPath
        switch kind {
        case .unsupportedType(let type):
            return "\(subject) has type \(type), which MirrorStore cannot store; use a supported type or list the property in ignoredProperties."
        case .unsupportedEnum(let declared, let enumType):
            let holder = declared == enumType ? "type \(enumType), an enum" : "type \(declared), whose \(enumType) is an enum"
            return "\(subject) has \(holder) with associated values or without a raw value, which MirrorStore cannot store; give it a String or integer raw type and no associated values, or list the property in ignoredProperties."
        case .missingProperty:
            return "\(subject) is missing from the record."
        case .typeMismatch(let expected, let found):
            return "\(subject) expects \(expected), but the record holds \(found)."
        case .unexpectedNil(let expected):
            return "\(subject) expects \(expected), but the record holds null."
        case .unknownEnumCase(let enumType, let rawValue):
            return "\(subject) expects a \(enumType), but no case has the raw value \(rawValue)."
        case .immutableProperty:
            return "\(subject) is a 'let' constant of a class, which reflection cannot write into an instance safely; declare it 'var', list it in ignoredProperties, or make the model a struct."
        case .noEmptyValue(let type):
            return "\(subject) has type \(type), which has no empty value; a struct with 'let' properties is built in fresh memory from empty values and its record, so give the property an optional or storable type, or declare the model's properties 'var'."
        case .nonStrongReference:
            return "\(subject) is a weak or unowned reference, which MirrorStore does not store; list it in ignoredProperties."
        case .subclassInstance(let declared, let actual):
            return "\(subject) is declared as \(declared) but holds a \(actual); MirrorStore stores a property's declared class only."
        case .wrongRecordType(let expected, let found):
            return "\(subject) expects a record of \(expected), but the record describes \(found)."
        case .unknownPropertyName(let role):
            return "\(subject) is named in \(role), but \(modelType) has no stored property by that name."
        case .unsupportedPrimaryKey(let type):
            return "\(subject) is the primary key, but its type \(type) cannot be one; use an integer, String or UUID."
        case .unsupportedModel(let reason):
            return "\(subject) cannot be mapped: \(reason)."
        case .nestingTooDeep(let levels):
            return "\(subject) links or embeds models \(levels) levels deep, more than this thread's stack can follow; nothing was converted. Convert on a thread with a larger stack, or split the chain."
        case .inverseWithoutPrimaryKey(let source, let property):
            return "\(subject) is the inverse of \(source).\(property), but \(modelType) has no primary key for links to point at; give \(modelType) a primary key."
        case .inverseOfMissingProperty(let source, let property):
            return "\(subject) is the inverse of \(source).\(property), but \(source) stores no property named \(property); name a link property of \(source) that points at \(modelType)."
        case .inverseOfNonLink(let source, let property, let kind):
            return "\(subject) is the inverse of \(source).\(property), but that property is a \(kind), not a link to \(modelType) (\(modelType)?, [\(modelType)] or Set<\(modelType)>); name a link property of \(source) that points at \(modelType)."
        case .inverseOfOtherLink(let source, let property, let linked):
            return "\(subject) is the inverse of \(source).\(property), but that property links to \(linked), not to \(modelType); name a link property of \(source) that points at \(modelType)."
        }
    }
}
