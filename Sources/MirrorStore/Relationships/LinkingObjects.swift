/// The objects of another model whose link points at this one: an inverse relationship.
///
/// Declare it as a stored property of the model being linked to, naming the link property of
/// the model that links:
///
/// ```swift
/// final class Dog: Persistable {
///     var identifier = 0
///     var owner: Person?                   // the link: to-one, or to-many as [Person]
///     init() {}
///     static var primaryKey: String? { "identifier" }
/// }
///
/// final class Person: Persistable {
///     var identifier = 0
///     var dogs = LinkingObjects<Dog>(property: "owner")   // the dogs whose owner is this person
///     init() {}
///     static var primaryKey: String? { "identifier" }
/// }
///
/// let person = try store.object(Person.self, primaryKey: 1)
/// person?.dogs.map(\.identifier)           // in primary-key order
/// ```
///
/// It is filled each time the model is read from a ``Store`` (``Store/object(_:primaryKey:)``,
/// ``Results``, ``WriteTransaction/object(_:primaryKey:)``) with the stored `Source` objects whose
/// property links to the model, in primary-key order, so it always agrees with the links. It is
/// never written: it is not part of the model's ``ObjectSchema``, and adding or removing one does
/// not change what a store file holds. A model made in code, or read with
/// ``Persistable/modelInstance(managedObject:)``, has it empty.
///
/// The link property may be a to-one link (`Person` or `Person?`) or a to-many one (`[Person]`,
/// `[Person?]` or `Set<Person>`); a source object linking several times counts once. Only
/// `Source` objects stored on their own are listed: a `Source` without a primary key that is
/// embedded in another model's record is not. The model declaring the inverse needs a primary
/// key, since links point at keys. Anything else is refused with a ``MappingError`` when the
/// model's plan is built (by `Store` or ``Persistable/objectSchema()``), naming the property.
/// Opening a store with the declaring model registers `Source` too.
///
/// The objects listed are read for the inverse: they are not the instances the rest of the read
/// returns, so a class graph read from the store holds no reference cycle through an inverse and
/// is freed as usual. The model being filled, met again inside its own inverse (the owner of one
/// of its dogs), is a copy whose inverse is empty, so reading ends:
/// `person.dogs[0].owner?.identifier == person.identifier`, but not `=== person`.
public struct LinkingObjects<Source: Persistable>: RandomAccessCollection {
    /// The name of the property of `Source` that links to the model declaring this inverse.
    public let property: String
    private let objects: [Source]

    /// An empty inverse of `Source`'s link property named `property`. The plan reads the name
    /// from a model made with `init()`, once per type.
    public init(property: String) {
        self.init(property: property, objects: [])
    }

    init(property: String, objects: [Source]) {
        self.property = property
        self.objects = objects
    }

    /// The first position, always 0.
    public var startIndex: Int { objects.startIndex }

    /// The number of linking objects.
    public var endIndex: Int { objects.endIndex }

    /// The linking object at `position`.
    public subscript(position: Int) -> Source { objects[position] }
}

extension LinkingObjects: Sendable where Source: Sendable {}

extension LinkingObjects: Equatable where Source: Equatable {}

extension LinkingObjects: Hashable where Source: Hashable {}
