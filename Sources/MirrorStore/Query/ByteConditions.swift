import Foundation
import MirrorStoreEngine

/// Conditions compiled to run on a record's stored bytes where they lie: comparisons of the
/// record's own single-value properties, or of arithmetic on its numeric ones
/// (`$0.price * 2 > 10`, `$0.a - $0.b < 0`), with constants or constant ranges, joined by `&&`,
/// `||` and `!`.
///
/// A scan then tests each record in the file's memory mapping with no copy, no projection and no
/// value built per record, as SQLite tests a column in its page. Anything else (links, optionals,
/// containers, text search, a property after a container in the record) keeps the general path:
/// ``init(conditions:schema:)`` returns nil. The answers are those of the general evaluator:
/// strings compare as Swift's `String` does (bytes only when both sides are ASCII, where the two
/// agree), doubles as Swift's operators do (NaN matches no comparison), and arithmetic computes
/// through ``QueryNumber`` as the record evaluator does, throwing where Swift traps.
final class ByteConditions {
    /// A test tree as the compiler builds it.
    private indirect enum Test {
        case compare(position: Int, Comparison, Constant)
        /// A value computed in `number` from stored values and constants, compared with a constant.
        case computed(Term, QueryNumber, Comparison, Constant)
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

    private enum Constant {
        case bool(Bool)
        case int(Int64)
        case uint(UInt64)
        /// Floats, doubles and dates: compared as `Double`, which holds a `Float` exactly.
        case double(Double)
        case string(String)
    }

    /// One node of the flattened tree. Trivial, like everything the per-record loop touches, so
    /// evaluating retains nothing.
    private struct Node {
        enum Operation { case compare, computed, and, or, not }
        let operation: Operation
        /// Children (indices in `nodes`) of `and`, `or` (both) and `not` (`first`); for
        /// `computed`, the step (in `steps`) that gives the value compared.
        let first: Int
        let second: Int
        /// For `compare`: which read value, how, and against which constant.
        let slot: Int
        let comparison: Comparison
        let constant: Int
    }

    /// One step of computing a value, trivially: a stored value read, a constant, or an
    /// operation on earlier steps.
    private struct Step {
        enum Operation { case load, constant, compute, negate }
        let operation: Operation
        let arithmetic: ArithmeticOperation
        let number: QueryNumber
        /// Operands (indices in `steps`) of `compute` (both) and `negate` (`first`).
        let first: Int
        let second: Int
        /// For `load`: which read value.
        let slot: Int
        /// For `constant`: its bits.
        let bits: UInt64
    }

    /// A constant, trivially: numbers as bit patterns, strings as a span of `text`.
    private struct Operand {
        enum Kind { case bool, int, uint, double, string }
        let kind: Kind
        let bits: UInt64
        let text: Range<Int>
        let isASCII: Bool
    }

    // Buffers of their own rather than arrays, so that testing a record retains nothing.
    private let nodes: UnsafeMutableBufferPointer<Node>
    private let steps: UnsafeMutableBufferPointer<Step>
    private let operands: UnsafeMutableBufferPointer<Operand>
    /// The UTF-8 of every string constant, one after another.
    private let text: UnsafeMutableBufferPointer<UInt8>
    /// The string constants themselves, for stored text that is not ASCII.
    private let strings: [Int: String]
    /// The schema positions the tests read, ascending; a node's `slot` indexes this.
    private let positions: UnsafeMutableBufferPointer<Int>
    private let propertyCount: Int
    private let typeName: String

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
        // Properties up to the last one read are skipped by their tag alone, which single values allow.
        guard let last = positions.last,
              schema.properties[...last].allSatisfy({ Compiler.isSingleValue($0.kind) }) else { return nil }
        var flattener = Flattener(slots: Dictionary(uniqueKeysWithValues: positions.enumerated().map { ($1, $0) }))
        _ = flattener.add(combined)
        nodes = Self.buffer(flattener.nodes)
        steps = Self.buffer(flattener.steps)
        operands = Self.buffer(flattener.operands)
        text = Self.buffer(flattener.text)
        strings = flattener.strings
        self.positions = Self.buffer(positions)
        propertyCount = schema.properties.count
        typeName = schema.typeName
    }

    deinit {
        nodes.deallocate()
        steps.deallocate()
        operands.deallocate()
        text.deallocate()
        positions.deallocate()
    }

    private static func buffer<Element>(_ elements: [Element]) -> UnsafeMutableBufferPointer<Element> {
        let buffer = UnsafeMutableBufferPointer<Element>.allocate(capacity: elements.count)
        _ = buffer.initialize(from: elements)
        return buffer
    }

    /// Lays a test tree out in arrays; the root is the last node.
    private struct Flattener {
        let slots: [Int: Int]
        var nodes: [Node] = []
        var steps: [Step] = []
        var operands: [Operand] = []
        var text: [UInt8] = []
        var strings: [Int: String] = [:]

        mutating func add(_ test: Test) -> Int {
            switch test {
            case .compare(let position, let comparison, let constant):
                nodes.append(Node(operation: .compare, first: 0, second: 0, slot: slots[position] ?? 0,
                                  comparison: comparison, constant: operand(constant)))
            case .computed(let term, let number, let comparison, let constant):
                let value = add(term, number)
                nodes.append(Node(operation: .computed, first: value, second: 0, slot: 0, comparison: comparison, constant: operand(constant)))
            case .and(let lhs, let rhs):
                let (first, second) = (add(lhs), add(rhs))
                nodes.append(Node(operation: .and, first: first, second: second, slot: 0, comparison: .equal, constant: 0))
            case .or(let lhs, let rhs):
                let (first, second) = (add(lhs), add(rhs))
                nodes.append(Node(operation: .or, first: first, second: second, slot: 0, comparison: .equal, constant: 0))
            case .not(let wrapped):
                let first = add(wrapped)
                nodes.append(Node(operation: .not, first: first, second: 0, slot: 0, comparison: .equal, constant: 0))
            }
            return nodes.count - 1
        }

        private mutating func add(_ term: Term, _ number: QueryNumber) -> Int {
            func step(_ operation: Step.Operation, _ arithmetic: ArithmeticOperation = .add, first: Int = 0, second: Int = 0,
                      slot: Int = 0, bits: UInt64 = 0) -> Int {
                steps.append(Step(operation: operation, arithmetic: arithmetic, number: number, first: first, second: second, slot: slot, bits: bits))
                return steps.count - 1
            }
            switch term {
            case .stored(let position): return step(.load, slot: slots[position] ?? 0)
            case .constant(let bits): return step(.constant, bits: bits)
            case .compute(let lhs, let arithmetic, let rhs):
                let (first, second) = (add(lhs, number), add(rhs, number))
                return step(.compute, arithmetic, first: first, second: second)
            case .negate(let wrapped):
                let first = add(wrapped, number)
                return step(.negate, first: first)
            }
        }

        private mutating func operand(_ constant: Constant) -> Int {
            let none = 0..<0
            switch constant {
            case .bool(let value): operands.append(Operand(kind: .bool, bits: value ? 1 : 0, text: none, isASCII: true))
            case .int(let value): operands.append(Operand(kind: .int, bits: UInt64(bitPattern: value), text: none, isASCII: true))
            case .uint(let value): operands.append(Operand(kind: .uint, bits: value, text: none, isASCII: true))
            case .double(let value): operands.append(Operand(kind: .double, bits: value.bitPattern, text: none, isASCII: true))
            case .string(let value):
                let start = text.count
                text.append(contentsOf: value.utf8)
                strings[operands.count] = value
                operands.append(Operand(kind: .string, bits: 0, text: start..<text.count, isASCII: value.utf8.allSatisfy { $0 < 0x80 }))
            }
            return operands.count - 1
        }
    }

    /// Whether the record stored as `bytes` satisfies every condition.
    ///
    /// - Throws: ``StoreError`` naming the record when its bytes do not decode.
    func matches(_ bytes: UnsafeRawBufferPointer, key: StorageKey) throws -> Bool {
        do {
            return try withUnsafeTemporaryAllocation(of: Int.self, capacity: positions.count) { offsets in
                var cursor = RawCursor(bytes)
                let count = try cursor.varint()
                guard count == UInt64(propertyCount) else {
                    throw DecodeFailure(offset: 0, reason: "\(count) values for the \(propertyCount) properties of \(typeName)")
                }
                var slot = 0
                var position = 0
                while slot < positions.count {
                    if position == positions[slot] {
                        offsets[slot] = cursor.position
                        slot += 1
                        // The last value tested is read by its test, which checks its bounds.
                        if slot == positions.count { break }
                    }
                    try cursor.skipSingleValue()
                    position += 1
                }
                let reading = Reading(bytes: bytes, offsets: offsets, nodes: UnsafeBufferPointer(nodes), steps: UnsafeBufferPointer(steps),
                                      operands: UnsafeBufferPointer(operands), text: UnsafeRawBufferPointer(text))
                return try reading.evaluate(nodes.count - 1, strings: strings)
            }
        } catch let failure as DecodeFailure {
            throw StoreError(RecordCodingFailure(failure), typeName: typeName, key: key.description)
        } catch let failure as TestFailure {
            switch failure {
            case .decode(let failure): throw StoreError(RecordCodingFailure(failure), typeName: typeName, key: key.description)
            case .trap(let trap): throw QueryError(trap, typeName: typeName, key: key)
            }
        }
    }

    /// What testing a record can fail with: bytes that do not decode, or arithmetic on which
    /// Swift traps.
    private enum TestFailure: Error {
        case decode(DecodeFailure)
        case trap(ArithmeticTrap)
    }

    /// What evaluating one record reads, as buffers.
    private struct Reading {
        let bytes: UnsafeRawBufferPointer
        let offsets: UnsafeMutableBufferPointer<Int>
        let nodes: UnsafeBufferPointer<Node>
        let steps: UnsafeBufferPointer<Step>
        let operands: UnsafeBufferPointer<Operand>
        let text: UnsafeRawBufferPointer

        func evaluate(_ index: Int, strings: [Int: String]) throws(TestFailure) -> Bool {
            let node = nodes[index]
            switch node.operation {
            case .and:
                guard try evaluate(node.first, strings: strings) else { return false }
                return try evaluate(node.second, strings: strings)
            case .or:
                if try evaluate(node.first, strings: strings) { return true }
                return try evaluate(node.second, strings: strings)
            case .not:
                return try !evaluate(node.first, strings: strings)
            case .compare:
                var cursor = RawCursor(bytes, at: offsets[node.slot])
                do {
                    return try compare(&cursor, node.comparison, operands[node.constant], constant: node.constant, strings: strings)
                } catch {
                    throw .decode(error)
                }
            case .computed:
                return holds(node.comparison, bits: try value(of: node.first), operands[node.constant])
            }
        }

        /// The value step `index` computes, as bits (see ``QueryNumber``): operands left to
        /// right, as Swift evaluates them.
        private func value(of index: Int) throws(TestFailure) -> UInt64 {
            let step = steps[index]
            switch step.operation {
            case .constant:
                return step.bits
            case .load:
                var cursor = RawCursor(bytes, at: offsets[step.slot])
                do {
                    return try Self.load(&cursor, step.number)
                } catch {
                    throw .decode(error)
                }
            case .negate:
                let value = try value(of: step.first)
                guard let result = step.number.negate(value) else { throw .trap(step.number.negationTrap(value)) }
                return result
            case .compute:
                let (lhs, rhs) = (try value(of: step.first), try value(of: step.second))
                guard let result = step.number.apply(step.arithmetic, lhs, rhs) else { throw .trap(step.number.trap(step.arithmetic, lhs, rhs)) }
                return result
            }
        }

        /// A stored value of `number`'s type, as bits.
        private static func load(_ cursor: inout RawCursor, _ number: QueryNumber) throws(DecodeFailure) -> UInt64 {
            let start = cursor.position
            let tag = try cursor.byte()
            switch number.representation {
            case .signed(let min, let max):
                guard tag == ValueTag.int.rawValue else { break }
                let value = ByteWriter.unzigzag(try cursor.varint())
                guard value >= min, value <= max else { throw DecodeFailure(offset: start, reason: "\(value) is out of the range of \(number.kind)") }
                return UInt64(bitPattern: value)
            case .unsigned(let max):
                guard tag == ValueTag.uint.rawValue else { break }
                let value = try cursor.varint()
                guard value <= max else { throw DecodeFailure(offset: start, reason: "\(value) is out of the range of \(number.kind)") }
                return value
            case .float:
                guard tag == ValueTag.float.rawValue else { break }
                return Double(Float(bitPattern: try cursor.uint32())).bitPattern
            case .double:
                guard tag == ValueTag.double.rawValue else { break }
                return try cursor.uint64()
            }
            throw DecodeFailure(offset: start, reason: "a value tagged \(tag) where the schema asks for \(number.kind)")
        }

        /// Whether a computed value (`bits`) and a constant of its kind are in `comparison`.
        private func holds(_ comparison: Comparison, bits: UInt64, _ operand: Operand) -> Bool {
            let order: ComparisonResult
            switch operand.kind {
            case .int:
                let (value, constant) = (Int64(bitPattern: bits), Int64(bitPattern: operand.bits))
                order = value < constant ? .orderedAscending : (value == constant ? .orderedSame : .orderedDescending)
            case .uint:
                order = bits < operand.bits ? .orderedAscending : (bits == operand.bits ? .orderedSame : .orderedDescending)
            case .bool, .string:
                // No computed value has these kinds: the compiler makes numbers only.
                return false
            case .double:
                let (value, constant) = (Double(bitPattern: bits), Double(bitPattern: operand.bits))
                // NaN is neither equal nor ordered: only `!=` holds, as Swift's operators answer.
                if value.isNaN || constant.isNaN {
                    if case .notEqual = comparison { return true }
                    return false
                }
                order = value < constant ? .orderedAscending : (value == constant ? .orderedSame : .orderedDescending)
            }
            return holds(comparison, order)
        }

        private func compare(
            _ cursor: inout RawCursor, _ comparison: Comparison, _ operand: Operand, constant: Int, strings: [Int: String]
        ) throws(DecodeFailure) -> Bool {
            let start = cursor.position
            let tag = try cursor.byte()
            func mismatch() -> DecodeFailure {
                DecodeFailure(offset: start, reason: "a value tagged \(tag) where the schema asks for another kind")
            }
            switch operand.kind {
            case .bool:
                guard tag == ValueTag.true.rawValue || tag == ValueTag.false.rawValue else { throw mismatch() }
                return holds(comparison, (tag == ValueTag.true.rawValue) == (operand.bits == 1) ? .orderedSame : .orderedAscending)
            case .int:
                guard tag == ValueTag.int.rawValue else { throw mismatch() }
                let stored = ByteWriter.unzigzag(try cursor.varint())
                let value = Int64(bitPattern: operand.bits)
                return holds(comparison, stored < value ? .orderedAscending : (stored == value ? .orderedSame : .orderedDescending))
            case .uint:
                guard tag == ValueTag.uint.rawValue else { throw mismatch() }
                let stored = try cursor.varint()
                return holds(comparison, stored < operand.bits ? .orderedAscending : (stored == operand.bits ? .orderedSame : .orderedDescending))
            case .double:
                let stored: Double
                switch tag {
                case ValueTag.double.rawValue, ValueTag.date.rawValue: stored = Double(bitPattern: try cursor.uint64())
                case ValueTag.float.rawValue: stored = Double(Float(bitPattern: try cursor.uint32()))
                default: throw mismatch()
                }
                let value = Double(bitPattern: operand.bits)
                // NaN is neither equal nor ordered: only `!=` holds, as Swift's operators answer.
                if stored.isNaN || value.isNaN {
                    if case .notEqual = comparison { return true }
                    return false
                }
                return holds(comparison, stored < value ? .orderedAscending : (stored == value ? .orderedSame : .orderedDescending))
            case .string:
                guard tag == ValueTag.string.rawValue else { throw mismatch() }
                let stored = try cursor.lengthPrefixed()
                if operand.isASCII, let order = Self.asciiOrder(stored, UnsafeRawBufferPointer(rebasing: text[operand.text])) {
                    return holds(comparison, order)
                }
                guard let stored = String(validating: stored, as: UTF8.self) else {
                    throw DecodeFailure(offset: start, reason: "a string is not valid UTF-8")
                }
                let value = strings[constant] ?? ""
                return holds(comparison, stored < value ? .orderedAscending : (stored == value ? .orderedSame : .orderedDescending))
            }
        }

        private func holds(_ comparison: Comparison, _ order: ComparisonResult) -> Bool {
            switch comparison {
            case .equal: order == .orderedSame
            case .notEqual: order != .orderedSame
            case .ordered(let ordering): ordering.holds(order)
            }
        }

        /// Byte order, which is `String` order for ASCII text; nil when the stored text is not
        /// ASCII (the constant is), where bytes and `String` may disagree.
        ///
        /// Text is ASCII only as far as the answer goes: at the first differing byte, the next
        /// stored byte must be ASCII too, since a combining mark there (`"E\u{301}"`) makes the
        /// differing letter another one (`"É"`), which `String` orders after every ASCII letter.
        private static func asciiOrder(_ stored: UnsafeRawBufferPointer, _ constant: UnsafeRawBufferPointer) -> ComparisonResult? {
            let common = min(stored.count, constant.count)
            var index = 0
            while index < common {
                let (a, b) = (stored[index], constant[index])
                if a >= 0x80 { return nil }
                if a != b {
                    if index + 1 < stored.count, stored[index + 1] >= 0x80 { return nil }
                    return a < b ? .orderedAscending : .orderedDescending
                }
                index += 1
            }
            while index < stored.count {
                if stored[index] >= 0x80 { return nil }
                index += 1
            }
            return stored.count == constant.count ? .orderedSame : (stored.count < constant.count ? .orderedAscending : .orderedDescending)
        }
    }

    /// Turns query nodes into tests, collecting the positions they read.
    private struct Compiler {
        let schema: ObjectSchema
        var positions = Set<Int>()

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
            case .equal(let lhs, let rhs):
                return leaf(lhs, rhs, root: root) { _ in .equal }
            case .notEqual(let lhs, let rhs):
                return leaf(lhs, rhs, root: root) { _ in .notEqual }
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
            if let number = Self.number(computedBy: member) {
                guard let term = term(member, number, root: root), let bits = number.bits(of: value) else { return nil }
                let constant: Constant = switch number.representation {
                case .signed: .int(Int64(bitPattern: bits))
                case .unsigned: .uint(bits)
                case .float, .double: .double(Double(bitPattern: bits))
                }
                return .computed(term, number, comparison(swapped), constant)
            }
            guard let position = storedPosition(member, root: root),
                  let constant = Self.constant(value, for: schema.properties[position].kind) else { return nil }
            let comparison = comparison(swapped)
            if case .bool = constant, case .ordered = comparison { return nil }
            positions.insert(position)
            return .compare(position: position, comparison, constant)
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
                positions.insert(position)
                return .stored(position: position)
            }
        }

        /// The constant as the property's stored values compare with it, when they can.
        private static func constant(_ value: QueryValue, for kind: PropertyKind) -> Constant? {
            switch (kind, value) {
            case (.bool, .bool(let value)): .bool(value)
            case (.int, .int(let value)), (.int8, .int(let value)), (.int16, .int(let value)),
                 (.int32, .int(let value)), (.int64, .int(let value)): .int(value)
            case (.uint, .uint(let value)), (.uint8, .uint(let value)), (.uint16, .uint(let value)),
                 (.uint32, .uint(let value)), (.uint64, .uint(let value)): .uint(value)
            case (.double, .double(let value)): .double(value)
            case (.float, .float(let value)): .double(Double(value))
            case (.date, .date(let value)): .double(value.timeIntervalSinceReferenceDate)
            case (.string, .string(let value)): .string(value)
            default: nil
            }
        }

        /// Kinds whose stored values are a tag and a payload the tag sizes, so a reader can skip them.
        static func isSingleValue(_ kind: PropertyKind) -> Bool {
            switch kind {
            case .optional(let wrapped): isSingleValue(wrapped)
            case .bool, .int, .int8, .int16, .int32, .int64, .uint, .uint8, .uint16, .uint32, .uint64,
                 .float, .double, .string, .data, .date, .uuid, .decimal, .url: true
            default: false
            }
        }
    }
}

/// Reads a record's bytes in place, every access checked against their end.
private struct RawCursor {
    let bytes: UnsafeRawBufferPointer
    private(set) var position: Int

    init(_ bytes: UnsafeRawBufferPointer, at position: Int = 0) {
        self.bytes = bytes
        self.position = position
    }

    @inline(__always)
    mutating func byte() throws(DecodeFailure) -> UInt8 {
        guard position < bytes.count else { throw DecodeFailure(offset: position, reason: "the record ends in the middle of a value") }
        defer { position += 1 }
        return bytes[position]
    }

    @inline(__always)
    mutating func varint() throws(DecodeFailure) -> UInt64 {
        let start = position
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try byte()
            guard shift < 63 || (shift == 63 && byte <= 1) else { throw DecodeFailure(offset: start, reason: "a varint overflows 64 bits") }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    @inline(__always)
    mutating func skip(_ count: Int) throws(DecodeFailure) {
        guard count <= bytes.count - position else { throw DecodeFailure(offset: position, reason: "the record ends inside a \(count)-byte value") }
        position += count
    }

    mutating func uint32() throws(DecodeFailure) -> UInt32 {
        let start = position
        try skip(4)
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: UInt32.self))
    }

    mutating func uint64() throws(DecodeFailure) -> UInt64 {
        let start = position
        try skip(8)
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: UInt64.self))
    }

    /// A varint length and that many bytes.
    @inline(__always)
    mutating func lengthPrefixed() throws(DecodeFailure) -> UnsafeRawBufferPointer {
        let start = position
        let length = try varint()
        guard length <= UInt64(bytes.count - position) else {
            throw DecodeFailure(offset: start, reason: "a length of \(length) bytes runs past the end of the record")
        }
        defer { position += Int(length) }
        return UnsafeRawBufferPointer(rebasing: bytes[position..<(position + Int(length))])
    }

    /// Moves past one value of a single-value kind (or its null).
    @inline(__always)
    mutating func skipSingleValue() throws(DecodeFailure) {
        let start = position
        // Raw tag values, compared directly (the optimizer folds them): this runs for every
        // property of every record a scan passes over, where `ValueTag(rawValue:)` was a call.
        switch try byte() {
        case ValueTag.null.rawValue, ValueTag.false.rawValue, ValueTag.true.rawValue: break
        case ValueTag.int.rawValue, ValueTag.uint.rawValue: _ = try varint()
        case ValueTag.float.rawValue: try skip(4)
        case ValueTag.double.rawValue, ValueTag.date.rawValue: try skip(8)
        case ValueTag.uuid.rawValue: try skip(16)
        case ValueTag.string.rawValue, ValueTag.data.rawValue, ValueTag.decimal.rawValue, ValueTag.url.rawValue:
            _ = try lengthPrefixed()
        case let tag: throw DecodeFailure(offset: start, reason: "a value tagged \(tag) where the schema asks for a single value")
        }
    }
}
