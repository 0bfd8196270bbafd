import Foundation
import MirrorStoreEngine

/// Conditions compiled to run on a record's stored bytes where they lie: comparisons of the
/// record's own single-value properties, or of arithmetic on its numeric ones
/// (`$0.price * 2 > 10`, `$0.a - $0.b < 0`), with constants or constant ranges, tests of one
/// array or set of single values (`isEmpty`, `count`, `contains`, and `==` with a constant, for a
/// set in whatever order either side lists its elements), and a string property, folded
/// (``TextFolding``) or not, equal to or starting with a constant (a ``TextMatch``,
/// `starts(with:)`), joined by `&&`, `||` and `!`.
///
/// A scan then tests each record in the file's memory mapping with no copy, no projection and no
/// value built per record, as SQLite tests a column in its page; an index range's candidates are
/// tested the same way. An optional property is compared with `==`, `!=`, or behind
/// `?? constant`. Anything else (links, optional or nested containers, `contains` on text, a
/// property after a container in the record) keeps the general path:
/// ``init(conditions:schema:)`` returns nil. The answers are those of the general evaluator:
/// strings compare as Swift's `String` does (bytes only when both sides are ASCII, where the two
/// agree), doubles as Swift's operators do (NaN matches no comparison), and arithmetic computes
/// through ``QueryNumber`` as the record evaluator does, throwing where Swift traps.
final class ByteConditions {
    /// A test tree as the compiler builds it.
    private indirect enum Test {
        /// `whenNil`: for an optional property, the outcome when it holds nil (known when the
        /// condition is compiled: `nil == x` is false, `(nil ?? fallback) < x` is `fallback < x`).
        case compare(position: Int, Comparison, Constant, whenNil: Bool?)
        /// A value computed in `number` from stored values and constants, compared with a constant.
        case computed(Term, QueryNumber, Comparison, Constant)
        /// A test of the array or set stored at `position`.
        case container(position: Int, ContainerTest)
        /// A string property folded as `folding` says (not at all when empty) equal to the constant
        /// (`comparison` is `.equal` or `.notEqual`), or starting with it (`isPrefix`, `.equal`).
        case text(position: Int, folding: TextOptions, isPrefix: Bool, Comparison, String)
        case and(Test, Test)
        case or(Test, Test)
        case not(Test)
    }

    /// A computed value as the compiler builds it.
    private indirect enum Term {
        case stored(position: Int)
        /// A constant's bits (see ``QueryNumber``).
        case constant(UInt64)
        case compute(Term, ArithmeticOperation, Term)
        case negate(Term)
    }

    private enum Comparison {
        case equal, notEqual
        case ordered(QueryComparison)
    }

    /// What a test asks of an array's or a set's elements.
    private enum ContainerTest {
        /// Their count compared with a constant (`isEmpty` is `count == 0`).
        case count(Comparison, Int64)
        /// One of them is equal to the constant.
        case contains(Constant)
        /// As many as the constants, each equal to one of them: a set's `==`, in any order.
        case sameElements([Constant])
        /// As many as the constants, each equal to the one in its place: an array's `==`.
        case elementsEqual([Constant])
    }

    private enum Constant {
        case bool(Bool)
        case int(Int64)
        case uint(UInt64)
        /// Floats, doubles and dates: compared as `Double`, which holds a `Float` exactly.
        case double(Double)
        case string(String)
    }

    /// One comparison of the compiled program. `&&`, `||` and `!` are compiled away into where
    /// each outcome leads (`whenTrue`, `whenFalse`: the next comparison, or ``accept`` or
    /// ``reject``), so testing a record is a loop over comparisons in Swift's order of evaluation,
    /// with no recursion, as SQLite runs a condition. Trivial and small, like everything the
    /// per-record loop touches.
    private struct Node {
        enum Operation: UInt8 {
            /// A stored value of the kind named compared with the node's constant.
            case bool, int, uint, double, string
            /// A computed value compared with the node's constant (`double` or `int`/`uint` bits).
            case computedSigned, computedUnsigned, computedDouble
            /// A stored array's or set's count compared with the node's constant (`int` bits).
            case containerCount
            /// A stored array's or set's elements against the element nodes `first..<second`
            /// (in `elements`), as ``ContainerTest`` says.
            case containerContains, containerSameElements, containerElementsEqual
            /// A stored string, folded as `folding` says, equal to the constant or starting with
            /// it: ``Order/equal`` when it is, ``Order/less`` when not.
            case foldedEqual, prefix
        }
        let operation: Operation
        /// The orders that satisfy the comparison (``Order``).
        let accepts: UInt8
        /// For a text match: the raw ``TextOptions`` the stored string is folded with.
        let folding: UInt8
        /// For a string: whether the constant is ASCII.
        let isASCII: Bool
        /// For a stored value: whether it may be nil (``Order/null``), as an optional's is.
        let isOptional: Bool
        /// For a stored value: which read value. 16 bits, so that a node stays 32 bytes: the
        /// scan walks nodes for every record, and a 40-byte one made it slower at the same
        /// instruction count.
        let slot: Int16
        /// For a computed value, the steps a record runs (in `steps`, `first...second`, the last
        /// giving the value; `second` alone, before `first`, for a constant); for a string, its span of `text`; for a container's elements, the span of
        /// `elements` holding the constants.
        let first: Int32
        let second: Int32
        /// A number's bits (see ``QueryNumber``), a bool as 0 or 1, a string's index in `strings`.
        let bits: UInt64
        /// The next node (index in `nodes`) for each outcome, or ``accept`` or ``reject``.
        let whenTrue: Int32
        let whenFalse: Int32
    }

    private static let accept: Int32 = -1, reject: Int32 = -2

    /// How a value stands to a constant, as one bit each, so a comparison is a mask of them.
    private enum Order {
        static let less: UInt8 = 1, equal: UInt8 = 2, greater: UInt8 = 4
        /// NaN against anything: only `!=` holds, as Swift's operators answer.
        static let unordered: UInt8 = 8
        /// A stored nil, accepted or not as the comparison's `whenNil` says.
        static let null: UInt8 = 16

        static func accepted(by comparison: Comparison) -> UInt8 {
            switch comparison {
            case .equal: equal
            case .notEqual: less | greater | unordered
            case .ordered(.lessThan): less
            case .ordered(.lessThanOrEqual): less | equal
            case .ordered(.greaterThan): greater
            case .ordered(.greaterThanOrEqual): greater | equal
            }
        }

        /// For numbers; NaN is neither less, equal nor greater.
        @inline(__always)
        static func of<Value: Comparable>(_ value: Value, _ constant: Value) -> UInt8 {
            value < constant ? less : (value == constant ? equal : (value > constant ? greater : unordered))
        }
    }

    /// One step of computing a value, trivially: a stored value read, a constant, or an
    /// operation on earlier steps. A value's steps are laid out constants first, whose values
    /// are set once per pass, then the others operands first, so computing it for a record is
    /// one pass over those, in Swift's order of evaluation.
    private struct Step {
        enum Operation { case load, constant, compute, negate }
        let operation: Operation
        let arithmetic: ArithmeticOperation
        let number: QueryNumber
        /// `number.representation`, worked out once: a load read it per record through a call.
        let representation: QueryNumber.Representation
        /// Operands (indices in `steps`) of `compute` (both) and `negate` (`first`).
        let first: Int
        let second: Int
        /// For `load`: which read value.
        let slot: Int
        /// For `constant`: its bits.
        let bits: UInt64
    }

    // Buffers of their own rather than arrays, so that testing a record retains nothing.
    private let nodes: UnsafeMutableBufferPointer<Node>
    /// The node tested first.
    private let entry: Int
    private let steps: UnsafeMutableBufferPointer<Step>
    /// The constants containers' elements are compared with, as nodes with nowhere to lead.
    private let elements: UnsafeMutableBufferPointer<Node>
    /// The UTF-8 of every string constant, one after another.
    private let text: UnsafeMutableBufferPointer<UInt8>
    /// The string constants themselves, for stored text that is not ASCII.
    private let strings: [String]
    /// For each value the tests read (a node's `slot`, in schema order), how many values to
    /// skip from the one read before it (from the first value for slot 0) to reach it: the
    /// walk counts down instead of comparing each position it passes.
    private let skips: UnsafeMutableBufferPointer<Int>
    private let propertyCount: Int
    /// For a type whose records may be tagless (``TaglessLayout``): each property's code, a tag
    /// or a `Bool`'s bit, copied out of the layout so that testing a record retains nothing.
    private let taglessCodes: UnsafeMutableBufferPointer<UInt8>
    private let taglessBitmap: TaglessLayout.Bitmap?
    /// The records' schema: its type name and how its keys are spelled name a record that fails.
    private let schema: ObjectSchema

    /// The compiled form of `conditions` (all of which must hold) on records of `schema`, or nil
    /// when one of them needs more than this evaluator reads.
    init?(conditions: [(QueryNode, PredicateExpressions.VariableID)], schema: ObjectSchema) {
        var compiler = Compiler(schema: schema)
        var combined: Test?
        for (node, root) in conditions {
            guard let test = compiler.compile(node, root: root) else { return nil }
            combined = combined.map { .and($0, test) } ?? test
        }
        guard let combined else { return nil }
        let positions = compiler.positions.sorted()
        // Properties before the last one read are skipped by their tag alone, which single values
        // allow; a container can only be that last one, which its tests read themselves.
        guard let last = positions.last, compiler.containers.allSatisfy({ $0 == last }),
              schema.properties[..<last].allSatisfy({ Compiler.isSingleValue($0.kind) }) else { return nil }
        var flattener = Flattener(slots: positions)
        entry = Int(flattener.add(combined, whenTrue: Self.accept, whenFalse: Self.reject))
        nodes = Self.buffer(flattener.nodes)
        steps = Self.buffer(flattener.steps)
        elements = Self.buffer(flattener.elements)
        text = Self.buffer(flattener.text)
        strings = flattener.strings
        skips = Self.buffer(positions.indices.map { $0 == 0 ? positions[0] : positions[$0] - positions[$0 - 1] })
        propertyCount = schema.properties.count
        taglessCodes = Self.buffer(schema.taglessLayout?.codes ?? [])
        taglessBitmap = schema.taglessLayout?.bitmap
        self.schema = schema
    }

    deinit {
        nodes.deallocate()
        steps.deallocate()
        elements.deallocate()
        text.deallocate()
        skips.deallocate()
        taglessCodes.deallocate()
    }

    private static func buffer<Element>(_ elements: [Element]) -> UnsafeMutableBufferPointer<Element> {
        let buffer = UnsafeMutableBufferPointer<Element>.allocate(capacity: elements.count)
        _ = buffer.initialize(from: elements)
        return buffer
    }

    /// Lays a test tree out as a program of comparisons, last first (so that where each one
    /// leads is known when it is laid out), and the steps of computed values.
    private struct Flattener {
        /// The positions read, ascending: a position's slot is its index here (a query reads a
        /// few, so a search costs less than a dictionary).
        let slots: [Int]
        var nodes: [Node] = []
        var steps: [Step] = []
        var elements: [Node] = []
        var text: [UInt8] = []
        var strings: [String] = []
        /// The steps of the constants of the term being laid out, in the order `add` meets them.
        var laidOutConstants: ArraySlice<Int> = []

        /// Lays out `test`, whose outcomes lead to `whenTrue` and `whenFalse`; returns the node
        /// tested first. Each operand of `&&` and `||` is tested only when Swift evaluates it.
        mutating func add(_ test: Test, whenTrue: Int32, whenFalse: Int32) -> Int32 {
            switch test {
            case .compare(let position, let comparison, let constant, let whenNil):
                let (operation, bits, span, isASCII) = self.constant(constant)
                let accepts = Order.accepted(by: comparison) | (whenNil == true ? Order.null : 0)
                return node(operation, accepts: accepts, isASCII: isASCII, isOptional: whenNil != nil, slot: slots.firstIndex(of: position) ?? 0,
                            first: span.lowerBound, second: span.upperBound, bits: bits, whenTrue: whenTrue, whenFalse: whenFalse)
            case .computed(let term, let number, let comparison, let constant):
                // The term's constants first, set once per pass (``Program``): a record runs only
                // the steps from `firstStep` on, which read it or compute.
                laidOutConstants = []
                addConstants(term, number)
                let firstStep = steps.count
                let value = add(term, number)
                let operation: Node.Operation = switch number.representation {
                case .signed: .computedSigned
                case .unsigned: .computedUnsigned
                case .float, .double: .computedDouble
                }
                return node(operation, accepts: Order.accepted(by: comparison), first: firstStep, second: value, bits: self.constant(constant).bits,
                            whenTrue: whenTrue, whenFalse: whenFalse)
            case .container(let position, let test):
                let slot = slots.firstIndex(of: position) ?? 0
                let operation: Node.Operation, constants: [Constant]
                switch test {
                case .count(let comparison, let count):
                    return node(.containerCount, accepts: Order.accepted(by: comparison), slot: slot, bits: UInt64(bitPattern: count),
                                whenTrue: whenTrue, whenFalse: whenFalse)
                case .contains(let constant): (operation, constants) = (.containerContains, [constant])
                case .sameElements(let all): (operation, constants) = (.containerSameElements, all)
                case .elementsEqual(let all): (operation, constants) = (.containerElementsEqual, all)
                }
                let first = elements.count
                for constant in constants {
                    let (kind, bits, span, isASCII) = self.constant(constant)
                    elements.append(Node(operation: kind, accepts: 0, folding: 0, isASCII: isASCII, isOptional: false, slot: 0,
                                         first: Int32(truncatingIfNeeded: span.lowerBound), second: Int32(truncatingIfNeeded: span.upperBound),
                                         bits: bits, whenTrue: ByteConditions.reject, whenFalse: ByteConditions.reject))
                }
                return node(operation, accepts: 0, slot: slot, first: first, second: elements.count, bits: 0, whenTrue: whenTrue, whenFalse: whenFalse)
            case .text(let position, let folding, let isPrefix, let comparison, let constant):
                let (_, bits, span, isASCII) = self.constant(.string(constant))
                return node(isPrefix ? .prefix : .foldedEqual, accepts: Order.accepted(by: comparison), folding: UInt8(truncatingIfNeeded: folding.rawValue),
                            isASCII: isASCII, slot: slots.firstIndex(of: position) ?? 0, first: span.lowerBound, second: span.upperBound, bits: bits,
                            whenTrue: whenTrue, whenFalse: whenFalse)
            case .and(let lhs, let rhs):
                let right = add(rhs, whenTrue: whenTrue, whenFalse: whenFalse)
                return add(lhs, whenTrue: right, whenFalse: whenFalse)
            case .or(let lhs, let rhs):
                let right = add(rhs, whenTrue: whenTrue, whenFalse: whenFalse)
                return add(lhs, whenTrue: whenTrue, whenFalse: right)
            case .not(let wrapped):
                return add(wrapped, whenTrue: whenFalse, whenFalse: whenTrue)
            }
        }

        private mutating func node(
            _ operation: Node.Operation, accepts: UInt8, folding: UInt8 = 0, isASCII: Bool = true, isOptional: Bool = false, slot: Int = 0,
            first: Int = 0, second: Int = 0, bits: UInt64, whenTrue: Int32, whenFalse: Int32
        ) -> Int32 {
            // Indices and spans of one query's nodes and constants, far below Int32's range.
            nodes.append(Node(operation: operation, accepts: accepts, folding: folding, isASCII: isASCII, isOptional: isOptional,
                              slot: Int16(truncatingIfNeeded: slot),
                              first: Int32(truncatingIfNeeded: first), second: Int32(truncatingIfNeeded: second), bits: bits,
                              whenTrue: whenTrue, whenFalse: whenFalse))
            return Int32(truncatingIfNeeded: nodes.count - 1)
        }

        private mutating func add(_ term: Term, _ number: QueryNumber) -> Int {
            func step(_ operation: Step.Operation, _ arithmetic: ArithmeticOperation = .add, first: Int = 0, second: Int = 0,
                      slot: Int = 0, bits: UInt64 = 0) -> Int {
                steps.append(Step(operation: operation, arithmetic: arithmetic, number: number, representation: number.representation,
                                  first: first, second: second, slot: slot, bits: bits))
                return steps.count - 1
            }
            switch term {
            case .stored(let position): return step(.load, slot: slots.firstIndex(of: position) ?? 0)
            // Laid out by `addConstants` already, in the same order.
            case .constant: return laidOutConstants.popFirst() ?? 0
            case .compute(let lhs, let arithmetic, let rhs):
                let (first, second) = (add(lhs, number), add(rhs, number))
                return step(.compute, arithmetic, first: first, second: second)
            case .negate(let wrapped):
                let first = add(wrapped, number)
                return step(.negate, first: first)
            }
        }

        /// Lays out the steps of `term`'s constants, in the order ``add(_:_:)`` meets them.
        private mutating func addConstants(_ term: Term, _ number: QueryNumber) {
            switch term {
            case .stored: break
            case .constant(let bits):
                steps.append(Step(operation: .constant, arithmetic: .add, number: number, representation: number.representation,
                                  first: 0, second: 0, slot: 0, bits: bits))
                laidOutConstants.append(steps.count - 1)
            case .compute(let lhs, _, let rhs):
                addConstants(lhs, number)
                addConstants(rhs, number)
            case .negate(let wrapped):
                addConstants(wrapped, number)
            }
        }

        /// The node kind of a constant, and its bits or its text.
        private mutating func constant(_ constant: Constant) -> (Node.Operation, bits: UInt64, text: Range<Int>, isASCII: Bool) {
            switch constant {
            case .bool(let value): return (.bool, value ? 1 : 0, 0..<0, true)
            case .int(let value): return (.int, UInt64(bitPattern: value), 0..<0, true)
            case .uint(let value): return (.uint, value, 0..<0, true)
            case .double(let value): return (.double, value.bitPattern, 0..<0, true)
            case .string(let value):
                let start = text.count
                text.append(contentsOf: value.utf8)
                strings.append(value)
                return (.string, UInt64(strings.count - 1), start..<text.count, TextOrder.isASCII(value))
            }
        }
    }

    /// The keys of the objects of `type` in `snapshot` that satisfy every condition, in file
    /// order, with where their records lie.
    ///
    /// - Throws: ``StoreError`` naming a record whose bytes do not decode; ``QueryError`` where
    ///   arithmetic traps in Swift.
    func matchingKeys(type: String, in snapshot: EngineSnapshot) throws -> FoundKeys {
        try withProgram { program in
            var found = FoundKeys.reading()
            try snapshot.forEachValueBatchInPlace(type: type) { batch in
                for index in batch.values.indices where try program.matches(batch.values[index], key: batch.key(at: index)) {
                    found.append(batch.key(at: index), at: batch.location(at: index))
                }
            }
            return found
        }
    }

    /// Those of `candidates` (keys of `values`' type) whose records satisfy every condition, in
    /// the same order, with where their records lie; a key with no record is left out.
    ///
    /// - Throws: ``StoreError`` naming a record whose bytes do not decode; ``QueryError`` where
    ///   arithmetic traps in Swift.
    func matching(_ candidates: [StorageKey], in values: TypeValues) throws -> FoundKeys {
        try withProgram { program in
            var found = FoundKeys.reading(capacity: candidates.count)
            try values.forEachValueInPlace(of: candidates) { key, location, bytes in
                if try program.matches(bytes, key: key) { found.append(key, at: location) }
            }
            return found
        }
    }

    /// Whether the record stored as `bytes` satisfies every condition.
    ///
    /// - Throws: ``StoreError`` naming the record when its bytes do not decode;
    ///   ``QueryError`` where arithmetic traps in Swift.
    func matches(_ bytes: UnsafeRawBufferPointer, key: StorageKey) throws -> Bool {
        try withProgram { try $0.matches(bytes, key: key) }
    }

    /// Calls `body` with the program and one scratch space for every record it tests.
    private func withProgram<Result>(_ body: (Program) throws -> Result) throws -> Result {
        try withUnsafeTemporaryAllocation(of: Int.self, capacity: skips.count) { offsets in
            try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: skips.count) { tags in
                try withUnsafeTemporaryAllocation(of: UInt64.self, capacity: steps.count) { values in
                    for index in steps.indices where steps[index].operation == .constant { values[index] = steps[index].bits }
                    let reading = Reading(offsets: offsets, tags: UnsafeBufferPointer(tags), nodes: UnsafeBufferPointer(nodes),
                                          steps: UnsafeBufferPointer(steps), elements: UnsafeBufferPointer(elements), values: values,
                                          text: UnsafeRawBufferPointer(text))
                    return try body(Program(offsets: offsets, tags: tags, skips: UnsafeBufferPointer(skips), reading: reading, strings: strings,
                                            entry: entry, propertyCount: propertyCount, taglessCodes: UnsafeBufferPointer(taglessCodes),
                                            taglessBitmap: taglessBitmap, schema: schema))
                }
            }
        }
    }

    /// Everything testing a record reads besides its bytes, gathered once per pass, so that the
    /// test of each record is one inlined loop in the pass's closure, with no call of its own.
    private struct Program {
        /// Where the walk leaves the offset of the body of each value the tests read, and its
        /// tag: the one before the body, or the one a tagless record implies. One shape for both
        /// forms, so that the tests hold no branch per form.
        let offsets: UnsafeMutableBufferPointer<Int>
        let tags: UnsafeMutableBufferPointer<UInt8>
        let skips: UnsafeBufferPointer<Int>
        /// Made once per pass and kept here, so that each record's test passes it where it lies
        /// rather than a copy of it.
        let reading: Reading
        let strings: [String]
        let entry: Int
        let propertyCount: Int
        let taglessCodes: UnsafeBufferPointer<UInt8>
        let taglessBitmap: TaglessLayout.Bitmap?
        let schema: ObjectSchema

        /// `key` is made only to name a record that fails.
        @inline(__always)
        func matches(_ bytes: UnsafeRawBufferPointer, key: @autoclosure () -> StorageKey) throws -> Bool {
            do throws(TestFailure) {
                return try test(bytes)
            } catch {
                throw failure(error, key: key())
            }
        }

        @inline(__always)
        private func test(_ bytes: UnsafeRawBufferPointer) throws(TestFailure) -> Bool {
            var cursor = RawCursor(bytes)
            var tagWidth = 1
            if let bitmap = taglessBitmap, bytes.first == TaglessLayout.marker {
                guard let bitmapStart = cursor.skipTaglessStart(bitmap) else { throw .decode(cursor.taglessStartFailure(bitmap)) }
                tagWidth = 0
                var property = 0
                for slot in skips.indices {
                    var remaining = skips[slot]
                    while remaining > 0 {
                        let start = cursor.position
                        let code = taglessCodes[property]
                        // A `Bool` lies in the bitmap: it has no body to pass.
                        if !TaglessLayout.isBoolean(code), !cursor.skipBodyQuickly(ofTag: code) {
                            throw .decode(RawCursor(bytes, at: start).endFailure())
                        }
                        property += 1
                        remaining -= 1
                    }
                    tags[slot] = TaglessLayout.tag(ofCode: taglessCodes[property]) { bytes[bitmapStart + $0] }
                    offsets[slot] = cursor.position
                }
            } else {
                let count = try cursor.varint().mapError(TestFailure.decode).get()
                guard count == UInt64(propertyCount) else {
                    throw .decode(RecordGrammar.valueCountFailure(count, of: schema.typeName, expected: propertyCount, at: 0))
                }
                // Each value read is left where it stands, its tag read: the next skip passes it,
                // and its test checks its body's bounds.
                for slot in skips.indices {
                    var remaining = skips[slot]
                    while remaining > 0 {
                        let start = cursor.position
                        guard cursor.skipSingleValueQuickly() else { throw .decode(cursor.skipFailure(from: start)) }
                        remaining -= 1
                    }
                    guard cursor.position < bytes.count else { throw .decode(cursor.endFailure()) }
                    tags[slot] = bytes[cursor.position]
                    offsets[slot] = cursor.position + 1
                }
            }
            return try reading.evaluate(TestedRecord(bytes: bytes, tagWidth: tagWidth), from: entry, strings: strings)
        }

        /// The error naming the record that `error` stopped.
        @inline(never)
        private func failure(_ error: TestFailure, key: StorageKey) -> any Error {
            switch error {
            case .decode(let failure): StoreError(RecordCodingFailure(failure), typeName: schema.typeName, key: PrimaryKey.text(key, of: schema))
            case .trap(let trap): QueryError(trap, typeName: schema.typeName, key: PrimaryKey.text(key, of: schema))
            }
        }
    }

    /// What testing a record can fail with: bytes that do not decode, or arithmetic on which
    /// Swift traps.
    private enum TestFailure: Error {
        case decode(DecodeFailure)
        case trap(ArithmeticTrap)
    }

    /// The record a test reads: its bytes, and the bytes of a tag before each value's body (1,
    /// or 0 in a tagless record), only for the offset a failure names, where the value starts.
    private struct TestedRecord {
        let bytes: UnsafeRawBufferPointer
        let tagWidth: Int
    }

    /// What evaluating a record reads besides its bytes, as buffers.
    private struct Reading {
        /// The body of each value read (``Program/offsets``), and its tag.
        let offsets: UnsafeMutableBufferPointer<Int>
        let tags: UnsafeBufferPointer<UInt8>
        let nodes: UnsafeBufferPointer<Node>
        let steps: UnsafeBufferPointer<Step>
        let elements: UnsafeBufferPointer<Node>
        /// The value of each step computed so far.
        let values: UnsafeMutableBufferPointer<UInt64>
        let text: UnsafeRawBufferPointer

        func evaluate(_ record: TestedRecord, from entry: Int, strings: [String]) throws(TestFailure) -> Bool {
            var index = entry
            while true {
                let node = nodes[index]
                let next = try test(node, record, strings: strings) ? node.whenTrue : node.whenFalse
                if next < 0 { return next == ByteConditions.accept }
                index = Int(next)
            }
        }

        /// Whether the node's comparison holds.
        @inline(__always)
        private func test(_ node: Node, _ record: TestedRecord, strings: [String]) throws(TestFailure) -> Bool {
            switch node.operation {
            case .computedSigned:
                return node.accepts & Order.of(Int64(bitPattern: try value(node, record)), Int64(bitPattern: node.bits)) != 0
            case .computedUnsigned:
                return node.accepts & Order.of(try value(node, record), node.bits) != 0
            case .computedDouble:
                return node.accepts & Order.of(Double(bitPattern: try value(node, record)), Double(bitPattern: node.bits)) != 0
            case .bool, .int, .uint, .double, .string, .foldedEqual, .prefix:
                let slot = Int(node.slot)
                var cursor = RawCursor(record.bytes, at: offsets[slot])
                return node.accepts & (try order(&cursor, node, strings: strings, tag: tags[slot], at: offsets[slot] - record.tagWidth).get()) != 0
            case .containerCount:
                let slot = Int(node.slot)
                var cursor = RawCursor(record.bytes, at: offsets[slot])
                let count = try containerCount(&cursor, tag: tags[slot], at: offsets[slot] - record.tagWidth).get()
                return node.accepts & Order.of(count, Int64(bitPattern: node.bits)) != 0
            case .containerContains, .containerSameElements, .containerElementsEqual:
                return try testElements(node, record, strings: strings)
            }
        }

        /// The element count of the array or set whose body is at `cursor`, tagged `tag` (the
        /// value starting at `start`); the cursor is left at its first element.
        private func containerCount(_ cursor: inout RawCursor, tag: UInt8, at start: Int) -> Result<Int64, TestFailure> {
            guard tag == ValueTag.list.rawValue else { return .failure(.decode(Self.notContainer(tag, at: start))) }
            return cursor.varint().mapError(TestFailure.decode).flatMap { count in
                // Each element takes a byte at least: a larger count is damage.
                guard count <= UInt64(cursor.bytes.count - cursor.position) else {
                    return .failure(.decode(DecodeFailure(offset: start, reason: "\(count) elements run past the end of the record")))
                }
                return .success(Int64(count))
            }
        }

        @inline(never)
        private static func notContainer(_ tag: UInt8, at start: Int) -> DecodeFailure {
            DecodeFailure(offset: start, reason: "a value tagged \(tag) where the schema asks for an array or a set")
        }

        /// Whether the container the node reads holds its constants as the node's operation asks.
        /// Each element is read from where it starts once per constant it is compared with.
        private func testElements(_ node: Node, _ record: TestedRecord, strings: [String]) throws(TestFailure) -> Bool {
            let slot = Int(node.slot)
            var cursor = RawCursor(record.bytes, at: offsets[slot])
            let count = try containerCount(&cursor, tag: tags[slot], at: offsets[slot] - record.tagWidth).get()
            let constants = elements[Int(node.first)..<Int(node.second)]
            let isContains = node.operation == .containerContains
            if !isContains, count != Int64(constants.count) { return false }
            for index in 0..<Int(count) {
                let start = cursor.position
                guard let tag = cursor.byte() else { throw .decode(cursor.endFailure()) }
                let body = cursor.position
                var found = false
                // An array's `==` compares each element with the constant in its place only.
                let candidates = node.operation == .containerElementsEqual ? constants[(constants.startIndex + index)...].prefix(1) : constants[...]
                for constant in candidates {
                    cursor = RawCursor(record.bytes, at: body)
                    if try order(&cursor, constant, strings: strings, tag: tag, at: start).get() == Order.equal {
                        found = true
                        break
                    }
                }
                if isContains, found { return true }
                if !isContains, !found { return false }
                // Each read of the element, the last one too, leaves the cursor after it.
            }
            return !isContains
        }

        /// How the stored value whose body is at `cursor`, tagged `tag` (the value starting at
        /// `start`, which a failure names), stands to the node's constant.
        ///
        /// Transparent, so that it is inlined into the loop over the nodes: with
        /// `@inline(__always)` the optimizer left a call per node once the loop grew.
        @_transparent
        private func order(_ cursor: inout RawCursor, _ node: Node, strings: [String], tag: UInt8, at start: Int) -> Result<UInt8, TestFailure> {
            if tag == ValueTag.null.rawValue, node.isOptional { return .success(Order.null) }
            switch node.operation {
            case .bool:
                guard tag == ValueTag.true.rawValue || tag == ValueTag.false.rawValue else { return mismatch(tag, at: start) }
                return .success((tag == ValueTag.true.rawValue) == (node.bits == 1) ? Order.equal : Order.less)
            case .int:
                guard tag == ValueTag.int.rawValue else { return mismatch(tag, at: start) }
                return cursor.varint().map { Order.of(RawCursor.unzigzag($0), Int64(bitPattern: node.bits)) }.mapError(TestFailure.decode)
            case .uint:
                guard tag == ValueTag.uint.rawValue else { return mismatch(tag, at: start) }
                return cursor.varint().map { Order.of($0, node.bits) }.mapError(TestFailure.decode)
            case .double:
                let stored: Double
                switch tag {
                case ValueTag.double.rawValue, ValueTag.date.rawValue:
                    guard let bits = cursor.uint64() else { return .failure(.decode(cursor.endFailure())) }
                    stored = Double(bitPattern: bits)
                case ValueTag.float.rawValue:
                    guard let bits = cursor.uint32() else { return .failure(.decode(cursor.endFailure())) }
                    stored = Double(Float(bitPattern: bits))
                default: return mismatch(tag, at: start)
                }
                return .success(Order.of(stored, Double(bitPattern: node.bits)))
            case .string:
                guard tag == ValueTag.string.rawValue else { return mismatch(tag, at: start) }
                let stored: UnsafeRawBufferPointer
                switch cursor.lengthPrefixed() {
                case .success(let bytes): stored = bytes
                case .failure(let failure): return .failure(.decode(failure))
                }
                if node.isASCII, let order = Self.asciiOrder(stored, UnsafeRawBufferPointer(rebasing: text[Int(node.first)..<Int(node.second)])) {
                    return .success(order)
                }
                return Self.textOrder(stored, strings[Int(node.bits)], at: start)
            case .foldedEqual, .prefix:
                guard tag == ValueTag.string.rawValue else { return mismatch(tag, at: start) }
                let stored: UnsafeRawBufferPointer
                switch cursor.lengthPrefixed() {
                case .success(let bytes): stored = bytes
                case .failure(let failure): return .failure(.decode(failure))
                }
                let isPrefix = node.operation == .prefix
                let folding = TextOptions(rawValue: Int(node.folding))
                if node.isASCII, let holds = Self.asciiMatch(stored, UnsafeRawBufferPointer(rebasing: text[Int(node.first)..<Int(node.second)]),
                                                            lowercased: folding.contains(.caseInsensitive), isPrefix: isPrefix) {
                    return .success(holds ? Order.equal : Order.less)
                }
                return Self.textMatch(stored, strings[Int(node.bits)], folding: folding, isPrefix: isPrefix, at: start)
            default:
                return mismatch(tag, at: start)
            }
        }

        /// Whether ASCII `stored`, lowercased if asked (``TextFolding``'s ASCII path, which both
        /// foldings leave at that), equals `constant` or starts with it, as `String` says; nil
        /// when `stored` is not ASCII. For ASCII text a `Character` is a byte, except `"\r\n"`,
        /// which is one: a prefix ending in `"\r"` is no prefix of text going on with `"\n"`.
        private static func asciiMatch(_ stored: UnsafeRawBufferPointer, _ constant: UnsafeRawBufferPointer, lowercased: Bool, isPrefix: Bool) -> Bool? {
            guard stored.allSatisfy({ $0 < 0x80 }) else { return nil }
            guard isPrefix ? stored.count >= constant.count : stored.count == constant.count else { return false }
            for index in constant.indices {
                let byte = lowercased ? TextFolding.caseFolded(stored[index]) : stored[index]
                if byte != constant[index] { return false }
            }
            if let last = constant.last, last == 0x0D, stored.count > constant.count, stored[constant.count] == 0x0A { return false }
            return true
        }

        /// A text match as the record evaluator decides it, for stored text that is not ASCII
        /// (or a constant that is not).
        @inline(never)
        private static func textMatch(
            _ stored: UnsafeRawBufferPointer, _ constant: String, folding: TextOptions, isPrefix: Bool, at start: Int
        ) -> Result<UInt8, TestFailure> {
            guard let stored = String(validating: stored, as: UTF8.self) else {
                return .failure(.decode(DecodeFailure(offset: start, reason: "a string is not valid UTF-8")))
            }
            let folded = TextFolding.folded(stored, options: folding)
            return .success((isPrefix ? folded.starts(with: constant) : folded == constant) ? Order.equal : Order.less)
        }

        @inline(never)
        private func mismatch(_ tag: UInt8, at start: Int) -> Result<UInt8, TestFailure> {
            .failure(.decode(DecodeFailure(offset: start, reason: "a value tagged \(tag) where the schema asks for another kind")))
        }

        /// `String` order, for text that is not ASCII.
        @inline(never)
        private static func textOrder(_ stored: UnsafeRawBufferPointer, _ constant: String, at start: Int) -> Result<UInt8, TestFailure> {
            guard let stored = String(validating: stored, as: UTF8.self) else {
                return .failure(.decode(DecodeFailure(offset: start, reason: "a string is not valid UTF-8")))
            }
            return .success(stored < constant ? Order.less : (stored == constant ? Order.equal : Order.greater))
        }

        /// The value a computed comparison compares, as bits (see ``QueryNumber``): its steps in
        /// order, operands before the operation on them, as Swift evaluates them.
        private func value(_ node: Node, _ record: TestedRecord) throws(TestFailure) -> UInt64 {
            // From `first` on, no constant (set once per pass); none at all for a constant term.
            var index = Int(node.first)
            while index <= Int(node.second) {
                defer { index += 1 }
                let step = steps[index]
                switch step.operation {
                case .constant:
                    values[index] = step.bits
                case .load:
                    var cursor = RawCursor(record.bytes, at: offsets[step.slot])
                    values[index] = try Self.load(&cursor, step.number, step.representation, tag: tags[step.slot], at: offsets[step.slot] - record.tagWidth)
                        .mapError(TestFailure.decode).get()
                case .negate:
                    let value = values[step.first]
                    guard let result = step.number.negate(value) else { throw .trap(step.number.negationTrap(value)) }
                    values[index] = result
                case .compute:
                    let (lhs, rhs) = (values[step.first], values[step.second])
                    guard let result = step.number.apply(step.arithmetic, lhs, rhs) else { throw .trap(step.number.trap(step.arithmetic, lhs, rhs)) }
                    values[index] = result
                }
            }
            return values[Int(node.second)]
        }

        /// A stored value of `number`'s type (whose representation is `representation`), as bits:
        /// its body at `cursor`, tagged `tag` (the value starting at `start`).
        @inline(__always)
        private static func load(
            _ cursor: inout RawCursor, _ number: QueryNumber, _ representation: QueryNumber.Representation, tag: UInt8, at start: Int
        ) -> Result<UInt64, DecodeFailure> {
            switch representation {
            case .signed(let min, let max):
                guard tag == ValueTag.int.rawValue else { break }
                return cursor.varint().flatMap { bits in
                    let value = RawCursor.unzigzag(bits)
                    guard value >= min, value <= max else { return .failure(outOfRange(value, number, at: start)) }
                    return .success(UInt64(bitPattern: value))
                }
            case .unsigned(let max):
                guard tag == ValueTag.uint.rawValue else { break }
                return cursor.varint().flatMap { value in
                    value <= max ? .success(value) : .failure(outOfRange(value, number, at: start))
                }
            case .float:
                guard tag == ValueTag.float.rawValue else { break }
                guard let bits = cursor.uint32() else { return .failure(cursor.endFailure()) }
                return .success(Double(Float(bitPattern: bits)).bitPattern)
            case .double:
                guard tag == ValueTag.double.rawValue else { break }
                guard let bits = cursor.uint64() else { return .failure(cursor.endFailure()) }
                return .success(bits)
            }
            return .failure(DecodeFailure(offset: start, reason: "a value tagged \(tag) where the schema asks for \(number.kind)"))
        }

        @inline(never)
        private static func outOfRange(_ value: some BinaryInteger, _ number: QueryNumber, at start: Int) -> DecodeFailure {
            DecodeFailure(offset: start, reason: "\(value) is out of the range of \(number.kind)")
        }

        /// Byte order, which is `String` order for ASCII text; nil when the stored text is not
        /// ASCII (the constant is), where bytes and `String` may disagree.
        ///
        /// Text is ASCII only as far as the answer goes: at the first differing byte, the next
        /// stored byte must be ASCII too, since a combining mark there (`"E\u{301}"`) makes the
        /// differing letter another one (`"É"`), which `String` orders after every ASCII letter.
        @inline(__always)
        private static func asciiOrder(_ stored: UnsafeRawBufferPointer, _ constant: UnsafeRawBufferPointer) -> UInt8? {
            let common = min(stored.count, constant.count)
            var index = 0
            while index < common {
                let (a, b) = (stored[index], constant[index])
                if a >= 0x80 { return nil }
                if a != b {
                    if index + 1 < stored.count, stored[index + 1] >= 0x80 { return nil }
                    return a < b ? Order.less : Order.greater
                }
                index += 1
            }
            while index < stored.count {
                if stored[index] >= 0x80 { return nil }
                index += 1
            }
            return stored.count == constant.count ? Order.equal : (stored.count < constant.count ? Order.less : Order.greater)
        }
    }

    /// Turns query nodes into tests, collecting the positions they read.
    private struct Compiler {
        let schema: ObjectSchema
        /// The positions read, each once (a few per query: a list costs less than a set).
        var positions: [Int] = []
        /// The positions of the arrays and sets tests read.
        var containers: [Int] = []

        mutating func compile(_ node: QueryNode, root: PredicateExpressions.VariableID) -> Test? {
            switch node {
            case .and(let lhs, let rhs):
                guard let left = compile(lhs, root: root), let right = compile(rhs, root: root) else { return nil }
                return .and(left, right)
            case .or(let lhs, let rhs):
                guard let left = compile(lhs, root: root), let right = compile(rhs, root: root) else { return nil }
                return .or(left, right)
            case .not(let wrapped):
                return compile(wrapped, root: root).map(Test.not)
            case .equal(.folded(let text, let folding), .constant(.string(let constant))),
                 .equal(.constant(.string(let constant)), .folded(let text, let folding)):
                return textLeaf(text, folding: folding, isPrefix: false, .equal, constant, root: root)
            case .notEqual(.folded(let text, let folding), .constant(.string(let constant))),
                 .notEqual(.constant(.string(let constant)), .folded(let text, let folding)):
                return textLeaf(text, folding: folding, isPrefix: false, .notEqual, constant, root: root)
            case .startsWith(.folded(let text, let folding), .constant(.string(let constant))):
                return textLeaf(text, folding: folding, isPrefix: true, .equal, constant, root: root)
            case .startsWith(let text, .constant(.string(let constant))):
                return textLeaf(text, folding: [], isPrefix: true, .equal, constant, root: root)
            case .equal(let lhs, let rhs):
                if let test = arrayEquality(lhs, rhs, root: root) { return test }
                return leaf(lhs, rhs, root: root) { _ in .equal }
            case .notEqual(let lhs, let rhs):
                if let test = arrayEquality(lhs, rhs, root: root) { return .not(test) }
                return leaf(lhs, rhs, root: root) { _ in .notEqual }
            case .isEmpty(let base):
                return container(base, root: root).map { .container(position: $0.position, .count(.equal, 0)) }
            case .contains(let base, .constant(let value)):
                guard let (position, element) = container(base, root: root), let constant = Self.constant(value, for: element) else { return nil }
                return .container(position: position, .contains(constant))
            case .sameElements(let lhs, let rhs):
                let (member, other) = if case .constant = lhs { (rhs, lhs) } else { (lhs, rhs) }
                guard case .constant(.list(let values)) = other, let (position, element) = container(member, root: root),
                      let constants = Self.constants(values, for: element) else { return nil }
                return .container(position: position, .sameElements(constants))
            case .compare(let lhs, let comparison, let rhs):
                return leaf(lhs, rhs, root: root) { swapped in .ordered(swapped ? comparison.mirrored : comparison) }
            case .inRange(.range(.constant(let lower), .constant(let upper), let isClosed), let element):
                // Two comparisons, as the record evaluator decides a range; only for bounds in
                // order (Swift traps on others, or throws for a half-open range).
                guard case .bool(true)? = ConditionEvaluator.compare(lower, .lessThanOrEqual, upper),
                      let above = leaf(element, .constant(lower), root: root, comparison: { _ in .ordered(.greaterThanOrEqual) }),
                      let below = leaf(element, .constant(upper), root: root, comparison: { _ in .ordered(isClosed ? .lessThanOrEqual : .lessThan) })
                else { return nil }
                return .and(above, below)
            default:
                return nil
            }
        }

        /// A comparison of one of the record's properties with a constant, either way round.
        private mutating func leaf(
            _ lhs: QueryNode, _ rhs: QueryNode, root: PredicateExpressions.VariableID, comparison: (_ swapped: Bool) -> Comparison
        ) -> Test? {
            let (member, other, swapped): (QueryNode, QueryNode, Bool) = if case .constant = lhs { (rhs, lhs, true) } else { (lhs, rhs, false) }
            guard case .constant(let value) = other else { return nil }
            if case .count(let base) = member {
                guard case .int(let count) = value, let (position, _) = container(base, root: root) else { return nil }
                return .container(position: position, .count(comparison(swapped), count))
            }
            if let number = Self.number(computedBy: member) {
                guard let term = term(member, number, root: root), let bits = number.bits(of: value) else { return nil }
                let constant: Constant = switch number.representation {
                case .signed: .int(Int64(bitPattern: bits))
                case .unsigned: .uint(bits)
                case .float, .double: .double(Double(bitPattern: bits))
                }
                return .computed(term, number, comparison(swapped), constant)
            }
            // `x ?? fallback` of an optional property with a constant fallback.
            let (stored, fallback): (QueryNode, QueryValue?) = if case .nilCoalesce(let wrapped, .constant(let fallback)) = member {
                (wrapped, fallback)
            } else {
                (member, nil)
            }
            guard let position = storedPosition(stored, root: root) else { return nil }
            let comparison = comparison(swapped)
            var kind = schema.properties[position].kind
            var whenNil: Bool?
            if case .optional(let wrapped) = kind {
                kind = wrapped
                if let fallback {
                    whenNil = Self.outcome(fallback, comparison, value)
                } else if case .equal = comparison {
                    whenNil = false
                } else if case .notEqual = comparison {
                    whenNil = true
                }
                // Without a fallback, nil has no order: the record evaluator leaves that to the model.
                guard whenNil != nil else { return nil }
            } else if fallback != nil {
                return nil
            }
            guard let constant = Self.constant(value, for: kind) else { return nil }
            if case .bool = constant, case .ordered = comparison { return nil }
            if !positions.contains(position) { positions.append(position) }
            return .compare(position: position, comparison, constant, whenNil: whenNil)
        }

        /// A text match on one of the record's string properties (not optional: the record
        /// evaluator leaves a nil's prefix to the model).
        private mutating func textLeaf(
            _ text: QueryNode, folding: TextOptions, isPrefix: Bool, _ comparison: Comparison, _ constant: String,
            root: PredicateExpressions.VariableID
        ) -> Test? {
            guard let position = storedPosition(text, root: root), schema.properties[position].kind == .string else { return nil }
            if !positions.contains(position) { positions.append(position) }
            return .text(position: position, folding: folding, isPrefix: isPrefix, comparison, constant)
        }

        /// `lhs comparison rhs` of two constants, as the record evaluator decides it; nil when it
        /// leaves it to the model.
        private static func outcome(_ lhs: QueryValue, _ comparison: Comparison, _ rhs: QueryValue) -> Bool? {
            switch comparison {
            case .equal: lhs.isEqual(to: rhs)
            case .notEqual: lhs.isEqual(to: rhs).map { !$0 }
            case .ordered(let ordering):
                if case .bool(let holds)? = ConditionEvaluator.compare(lhs, ordering, rhs) { holds } else { nil }
            }
        }

        /// An array's `==` with a constant array: the same elements in the same order.
        private mutating func arrayEquality(_ lhs: QueryNode, _ rhs: QueryNode, root: PredicateExpressions.VariableID) -> Test? {
            let (member, other) = if case .constant = lhs { (rhs, lhs) } else { (lhs, rhs) }
            guard case .constant(.list(let values)) = other, let position = storedPosition(member, root: root),
                  case .list(let element) = schema.properties[position].kind, let constants = Self.constants(values, for: element),
                  let found = container(member, root: root) else { return nil }
            return .container(position: found.position, .elementsEqual(constants))
        }

        /// The position and element kind of an array or a set of single values that the node
        /// reads from the record itself. Not one of links: the model leaves out links to deleted
        /// objects, which the stored elements keep.
        private mutating func container(_ node: QueryNode, root: PredicateExpressions.VariableID) -> (position: Int, element: PropertyKind)? {
            guard let position = storedPosition(node, root: root) else { return nil }
            switch schema.properties[position].kind {
            case .list(let element), .set(let element):
                guard Self.isSingleValue(element) else { return nil }
                if !positions.contains(position) { positions.append(position) }
                if !containers.contains(position) { containers.append(position) }
                return (position, element)
            default:
                return nil
            }
        }

        private static func constants(_ values: [QueryValue], for kind: PropertyKind) -> [Constant]? {
            var constants: [Constant] = []
            for value in values {
                guard let constant = constant(value, for: kind) else { return nil }
                constants.append(constant)
            }
            return constants
        }

        /// The schema position of a property the node reads from the record itself.
        private func storedPosition(_ node: QueryNode, root: PredicateExpressions.VariableID) -> Int? {
            guard case .member(.variable(let variable), _, let position, let memberType) = node, variable == root,
                  memberType == schema.typeName, schema.properties.indices.contains(position) else { return nil }
            return position
        }

        private static func number(computedBy node: QueryNode) -> QueryNumber? {
            switch node {
            case .compute(_, _, _, let number), .negate(_, let number): number
            default: nil
            }
        }

        /// Arithmetic in `number` on the record's own values of that type and constants.
        private mutating func term(_ node: QueryNode, _ number: QueryNumber, root: PredicateExpressions.VariableID) -> Term? {
            switch node {
            case .constant(let value):
                return number.bits(of: value).map(Term.constant)
            case .compute(let lhs, let operation, let rhs, let type):
                guard type == number, let left = term(lhs, number, root: root), let right = term(rhs, number, root: root) else { return nil }
                return .compute(left, operation, right)
            case .negate(let wrapped, let type):
                guard type == number else { return nil }
                return term(wrapped, number, root: root).map(Term.negate)
            default:
                guard let position = storedPosition(node, root: root),
                      QueryNumber(kind: schema.properties[position].kind) == number else { return nil }
                if !positions.contains(position) { positions.append(position) }
                return .stored(position: position)
            }
        }

        /// The constant as the property's stored values compare with it, when they can.
        private static func constant(_ value: QueryValue, for kind: PropertyKind) -> Constant? {
            guard let type = kind.storedValueType else { return nil }
            return switch (type.tag, value) {
            case (.false, .bool(let value)): .bool(value)
            case (.int, .int(let value)): .int(value)
            case (.uint, .uint(let value)): .uint(value)
            case (.double, .double(let value)): .double(value)
            case (.float, .float(let value)): .double(Double(value))
            case (.date, .date(let value)): .double(value.timeIntervalSinceReferenceDate)
            case (.string, .string(let value)): .string(value)
            default: nil
            }
        }

        /// Kinds whose stored values are a tag and a payload the tag sizes, so a reader can skip them.
        static func isSingleValue(_ kind: PropertyKind) -> Bool {
            if case .optional(let wrapped) = kind { return isSingleValue(wrapped) }
            return kind.storedValueType != nil
        }
    }
}
