/// The record-side to-many container.
///
/// A model's `[T]` and `Set<T>` properties become a `List` in its ``ManagedObject``. `List` is a
/// full collection (random access, mutable, range-replaceable) and bridges both ways:
///
/// ```swift
/// var tags: List<String> = ["avenger", "genius"]
/// tags.append("billionaire")
/// let array = Array(tags)          // [String]
/// let unique = Set(tags)           // Set<String>
/// let back = List(unique)          // List<String>
/// ```
public struct List<Element>: RandomAccessCollection, MutableCollection, RangeReplaceableCollection {
    @usableFromInline var elements: [Element]

    /// Creates an empty list.
    public init() { elements = [] }

    /// Creates a list with the elements of a sequence, in its order.
    public init<S: Sequence>(_ elements: S) where S.Element == Element {
        self.elements = Array(elements)
    }

    /// Creates a list from an array without copying it.
    public init(_ array: [Element]) { elements = array }

    /// The list's elements as a native array.
    public var array: [Element] { elements }

    /// The position of the first element: always 0.
    @inlinable public var startIndex: Int { elements.startIndex }
    /// The position after the last element: the element count.
    @inlinable public var endIndex: Int { elements.endIndex }

    /// The element at `position`, which must be a valid index.
    @inlinable public subscript(position: Int) -> Element {
        get { elements[position] }
        set { elements[position] = newValue }
    }

    /// Replaces the elements in `subrange` with `newElements`.
    public mutating func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C)
    where C.Element == Element {
        elements.replaceSubrange(subrange, with: newElements)
    }

    /// Makes room for `n` elements without reallocating.
    public mutating func reserveCapacity(_ n: Int) { elements.reserveCapacity(n) }
}

extension List: ExpressibleByArrayLiteral {
    /// Creates a list from an array literal.
    public init(arrayLiteral elements: Element...) { self.elements = elements }
}

extension List: Equatable where Element: Equatable {}
extension List: Hashable where Element: Hashable {}
extension List: Sendable where Element: Sendable {}

extension List: CustomStringConvertible {
    /// The elements, rendered like an array.
    public var description: String { elements.description }
}

extension List where Element: Hashable {
    /// The list's distinct elements as a set.
    public var set: Set<Element> { Set(elements) }
}
