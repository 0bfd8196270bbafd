import Foundation
import MirrorStoreEngine

// How a model comes into being without running an `init()`: every stored property is
// initialised, one by one, in memory no value has used yet, with its type's empty value, then
// filled from the record. A struct value is then moved out as one value; a class instance is
// allocated by the runtime first (`FreshObjectUnsafe.swift`). docs/ARCHITECTURE.md ("Models
// without init()") explains why this is sound where writing into an instance that already exists
// is not, and when a class qualifies.

/// Initialises one stored property with its type's empty value, in uninitialised memory.
struct EmptyField {
    let offset: Int
    let initialize: (UnsafeMutableRawPointer) -> Void
}

/// Every stored property of a struct type, each with the way to give it its empty value.
///
/// The closures only copy empty values captured when the recipe was made (or call a model's
/// `init()`), and are never changed afterwards, which is why the unchecked `Sendable` is sound.
struct EmptyRecipe: @unchecked Sendable {
    let fields: [EmptyField]

    func initialize(_ base: UnsafeMutableRawPointer) {
        for field in fields { field.initialize(base + field.offset) }
    }
}

/// A stored property whose type has no empty value, so a value holding it cannot be built.
struct NoEmptyValue: Error {
    let property: String
    let typeName: String
}

enum EmptyInstance {
    private static let recipes = Lock<[ObjectIdentifier: EmptyRecipe]>([:])

    /// The recipe for a struct type, or the first property that has no empty value. Classes have
    /// none here: `objectRecipe(for:fields:)` decides whether one can be made without `init()`.
    static func recipe(for type: Any.Type) -> Result<EmptyRecipe, NoEmptyValue> {
        let identifier = ObjectIdentifier(type)
        if let recipe = recipes.withLock({ $0[identifier] }) { return .success(recipe) }
        guard !(type is AnyClass), let stored = FieldLayout.storedFields(of: type) else {
            return .failure(NoEmptyValue(property: "", typeName: "\(type)"))
        }
        var fields: [EmptyField] = []
        for field in stored {
            guard let initialize = EmptyValue.initializer(for: field.type) else {
                return .failure(NoEmptyValue(property: field.declaredName, typeName: "\(field.type)"))
            }
            fields.append(EmptyField(offset: field.offset, initialize: initialize))
        }
        // Built outside the lock: making a recipe may run user code (`allCases`, `init(rawValue:)`).
        let recipe = EmptyRecipe(fields: fields)
        recipes.withLock { $0[identifier] = recipe }
        return .success(recipe)
    }

    /// A value of `Model` whose properties are initialised by `recipe` and then changed by `fill`.
    /// If `fill` throws, the half-filled value is destroyed (every property holds a valid value at
    /// every moment, so destroying it releases exactly what it holds) and the error passes on.
    static func construct<Model, Failure: Error>(
        _ type: Model.Type, recipe: EmptyRecipe, fill: (UnsafeMutableRawPointer) throws(Failure) -> Void
    ) throws(Failure) -> Model {
        let memory = UnsafeMutablePointer<Model>.allocate(capacity: 1)
        defer { memory.deallocate() }
        let base = UnsafeMutableRawPointer(memory)
        recipe.initialize(base)
        do {
            try fill(base)
        } catch {
            memory.deinitialize(count: 1)
            throw error
        }
        return memory.move()
    }

    /// How to make instances of the class `type` without its `init()`, given all its stored
    /// properties, inherited ones included (`FieldLayout.storedFields(of:)`); `nil` when one of
    /// them is not a strong `var` or has no empty value, when the class is an actor, or when the
    /// runtime's description of the class does not confirm that these are all it stores.
    static func objectRecipe(for type: AnyClass, fields stored: [StoredField]) -> FreshObjectRecipe? {
        // An actor's instances hold state of the runtime's own that only its initialiser sets up.
        guard !(type is any Actor.Type) else { return nil }
        var fields: [EmptyField] = []
        for field in stored {
            guard field.isVar, field.isStrong, !field.isLazyStorage,
                  let initialize = EmptyValue.initializer(for: field.type) else { return nil }
            fields.append(EmptyField(offset: field.offset, initialize: initialize))
        }
        return FreshObjectRecipe(type: type, fields: stored, empty: fields)
    }

    /// The empty value of a struct type, for the default `init()`.
    static func make<Model>(_ type: Model.Type) -> Model {
        switch recipe(for: type) {
        case .success(let recipe):
            return construct(type, recipe: recipe) { _ in }
        case .failure(let missing):
            // Reached only by calling the default `init()` of a type that cannot have one, a
            // mistake in the program rather than in data: Swift cannot limit a protocol's default
            // initialiser to structs, nor to types whose properties all have empty values.
            if type is AnyClass {
                fatalError("MirrorStore: \(type) is a class without init(); a class model must declare init().")
            }
            fatalError("MirrorStore: \(type) has no init(), and its property '\(missing.property)' of type \(missing.typeName) has no empty value; declare init().")
        }
    }
}

/// The empty value of each type a model's property can have: `0`, `false`, `""`, empty data, the
/// reference date, the all-zero UUID, `nil`, empty containers, a model's `init()` value, and an
/// enum's first case.
enum EmptyValue {
    /// Initialises uninitialised memory of `type` with its empty value, or `nil` if it has none.
    static func initializer(for type: Any.Type) -> ((UnsafeMutableRawPointer) -> Void)? {
        if let primitive = type as? any FieldPrimitive.Type {
            return primitive.emptyInitializer
        }
        if let container = type as? any _MallocContentInstanceProtocol.Type {
            return container.emptyInitializer
        }
        if let model = type as? any _AutoMallocObjectProtocol.Type {
            return model.emptyInitializer
        }
        if let enumeration = type as? any CaseIterable.Type, let first = enumeration.firstCaseInitializer {
            return first
        }
        if let represented = type as? any RawRepresentable.Type, let value = represented.emptyRawValueInitializer {
            return value
        }
        // A payload-free enum's first case has tag zero, so its all-zero bytes are that case.
        if FieldLayout.isEnum(type) {
            return zeroInitializer(type)
        }
        return nil
    }

    private static func zeroInitializer<Value>(_ type: Value.Type) -> ((UnsafeMutableRawPointer) -> Void)? {
        guard _isPOD(type) else { return nil }
        let size = MemoryLayout<Value>.size
        return { $0.initializeMemory(as: UInt8.self, repeating: 0, count: size) }
    }
}

extension FieldPrimitive {
    fileprivate static var emptyInitializer: (UnsafeMutableRawPointer) -> Void {
        let empty = emptyValue
        return { $0.initializeMemory(as: Self.self, to: empty) }
    }
}

extension _MallocContentInstanceProtocol {
    fileprivate static var emptyInitializer: (UnsafeMutableRawPointer) -> Void {
        { $0.initializeMemory(as: Self.self, to: _mallocContent()) }
    }
}

extension _AutoMallocObjectProtocol {
    // A new value each time: a class instance must not be shared between two models.
    fileprivate static var emptyInitializer: (UnsafeMutableRawPointer) -> Void {
        { $0.initializeMemory(as: Self.self, to: Self()) }
    }
}

extension CaseIterable {
    fileprivate static var firstCaseInitializer: ((UnsafeMutableRawPointer) -> Void)? {
        guard let first = allCases.first else { return nil }
        return { $0.initializeMemory(as: Self.self, to: first) }
    }
}

extension RawRepresentable {
    fileprivate static var emptyRawValueInitializer: ((UnsafeMutableRawPointer) -> Void)? {
        guard let raw = RawValue.self as? any FieldPrimitive.Type,
              let emptyRaw = raw.emptyValue as? RawValue,
              let value = Self(rawValue: emptyRaw) else { return nil }
        return { $0.initializeMemory(as: Self.self, to: value) }
    }
}

extension TypePlan {
    /// A new instance of the plan's model for a conversion to fill: made without `init()` when
    /// the plan has a ``freshObject`` recipe, from `init()` otherwise. Every conversion that
    /// fills it writes every field of the plan or throws (a record without one of them is
    /// `MappingError.missingProperty`), so no empty value it starts with reaches the app.
    @inline(__always)
    func newInstance<Model: Persistable>(_ type: Model.Type) -> Model {
        if let unretainedFreshObject { return unretainedFreshObject.make(type) }
        return Model._autoMalloc()
    }
}
