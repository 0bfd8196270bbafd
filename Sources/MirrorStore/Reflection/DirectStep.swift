/// How one field's stored value can be read from a record's bytes straight into the field's
/// place, with no `RecordValue` in between; a field with none is read through its accessor.
enum DirectRead {
    /// A single value, or its optional.
    case value(StoredValueType, optional: Bool)
    /// An array of single values.
    case list(StoredValueType)
    /// A set of single values.
    case set(StoredValueType)
    /// A struct model stored inside the record (it has no primary key), filled field by field in
    /// its place when its own plan is read directly (``TypePlan/directSteps``).
    case embedded(TypePlan)
}

/// One step of reading a record's bytes straight into a model's memory (`FlatModelReading.swift`):
/// a plan's fields in schema order, each embedded struct's own steps in its place, so one loop
/// with no recursion fills a model and every struct it embeds. A trivial value, so walking the
/// steps retains nothing.
struct DirectStep: Sendable {
    enum Kind: UInt8, Sendable {
        /// A single value (``isOptional``: or null) into the field at ``offset``.
        case value
        /// An array of ``type`` into the field at ``offset``.
        case list
        /// A set of ``type`` into the field at ``offset``.
        case set
        /// An embedded record's tag and its count of values, ``count``; its values are the
        /// steps that follow.
        case embedded
    }

    let kind: Kind
    /// From the start of the model the steps were made for (the root's fields, or a class
    /// instance's), embedded structs' offsets added.
    let offset: Int
    /// The single value's type, or the element type; unused for `.embedded`.
    let type: StoredValueType
    let isOptional: Bool
    /// For `.embedded`, the count of values its record holds.
    let count: Int
    /// How a `.value` step of the commonest types is read inline in the fill's loop, decided
    /// once here, optional or not, so that the loop's one `switch` reaches code for exactly that
    /// field's type (`QuickValueReadingUnsafe.swift`).
    let quick: QuickRead

    /// The single-value types read inline, each in its own tag only (and null for an optional);
    /// `.none` for the others, and for values in any other form, which the general call reads.
    enum QuickRead: UInt8, Sendable {
        case none
        case int
        case optionalInt
        case double
        case optionalDouble
        case date
        case optionalDate
        case string
        case optionalString
        case bool
        case optionalBool

        init(_ type: StoredValueType, optional: Bool) {
            switch type {
            case .int: self = optional ? .optionalInt : .int
            case .double: self = optional ? .optionalDouble : .double
            case .date: self = optional ? .optionalDate : .date
            case .string: self = optional ? .optionalString : .string
            case .bool: self = optional ? .optionalBool : .bool
            default: self = .none
            }
        }
    }

    /// A step; `isKey` for the primary key's, which is never read quickly: the fill compares
    /// it with the key it was stored under (`readKey`) before anything else.
    init(kind: Kind, offset: Int, type: StoredValueType, isOptional: Bool, count: Int, isKey: Bool = false) {
        self.kind = kind
        self.offset = offset
        self.type = type
        self.isOptional = isOptional
        self.count = count
        quick = kind == .value && !isKey ? QuickRead(type, optional: isOptional) : .none
    }

    /// A plan's steps, and what the plan that embeds it needs to know of them.
    struct Program {
        var steps: [DirectStep] = []
        /// The index of the primary-key field's step, or -1.
        var keyStep = -1
        /// How many embedded records deep the deepest step lies: 0 without embedded structs.
        var nesting = 0
    }

    /// The embedded records a direct read follows inside one another, at most: far below the
    /// record grammar's depth rule (`RecordGrammar.nestsTooDeep(_:)`), so it never refuses a
    /// value the steps read, and nothing in the steps recurses.
    static let maximumNesting = 8

    /// The steps of the fields of a plan, in order, or nil when some field cannot be read
    /// directly. `keyPosition` is the index of the primary-key field.
    static func program(for fields: [any FieldAccessor], keyPosition: Int?) -> Program? {
        var program = Program()
        for (position, field) in fields.enumerated() {
            guard let read = field.directRead else { return nil }
            if position == keyPosition { program.keyStep = program.steps.count }
            let offset = field.slot.offset
            switch read {
            case .value(let type, let optional):
                program.steps.append(DirectStep(kind: .value, offset: offset, type: type, isOptional: optional, count: 0, isKey: position == keyPosition))
            case .list(let type):
                guard type.isReadInLists else { return nil }
                program.steps.append(DirectStep(kind: .list, offset: offset, type: type, isOptional: false, count: 0))
            case .set(let type):
                guard type.isReadInLists else { return nil }
                program.steps.append(DirectStep(kind: .set, offset: offset, type: type, isOptional: false, count: 0))
            case .embedded(let plan):
                guard let inner = plan.embeddableSteps, plan.directNesting < maximumNesting else { return nil }
                program.steps.append(DirectStep(kind: .embedded, offset: offset, type: .bool, isOptional: false, count: plan.fields.count))
                program.steps.append(contentsOf: inner.map { $0.moved(by: offset) })
                program.nesting = max(program.nesting, plan.directNesting + 1)
            }
        }
        return program
    }

    private func moved(by distance: Int) -> DirectStep {
        DirectStep(kind: kind, offset: offset + distance, type: type, isOptional: isOptional, count: count)
    }
}

extension StoredValueType {
    /// Whether arrays and sets of this type are read directly: not decimals and URLs, which are
    /// parsed from text by the general path.
    var isReadInLists: Bool { self != .decimal && self != .url }
}
