import Foundation

/// The operators of a predicate's `Arithmetic`, `IntDivision`, `IntRemainder` and
/// `FloatDivision` expressions.
enum ArithmeticOperation: Sendable {
    case add, subtract, multiply, divide, remainder

    var symbol: String {
        switch self {
        case .add: "+"
        case .subtract: "-"
        case .multiply: "*"
        case .divide: "/"
        case .remainder: "%"
        }
    }
}

/// The numeric type a predicate computes in, and its arithmetic as Swift's operators do it:
/// integers in their own width, `Float` and `Double` in IEEE arithmetic of their own precision,
/// one operation at a time in the predicate's order. Where Swift's operator traps (an integer
/// overflow, a division by zero), the answer is nil: the store reports it instead of trapping.
///
/// Both evaluators (on records and on stored bytes) compute through ``apply(_:_:_:)`` and
/// ``negate(_:)``, on values held as 64 bits: signed integers as their `Int64` bit pattern,
/// unsigned ones as `UInt64`, and `Float` and `Double` as a `Double`'s bits (a `Double` holds
/// every `Float` exactly, and each `Float` operation is done in `Float`).
enum QueryNumber: Sendable, Equatable {
    case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float, double

    /// The number type of a predicate's `Output`: the stored numeric types, nothing else (a
    /// `Decimal` computes through ``DecimalArithmetic``, a `CGFloat` is left to the models).
    init?(type: Any.Type) {
        guard let primitive = type as? any RecordPrimitive.Type else { return nil }
        self.init(kind: primitive.propertyKind)
    }

    init?(kind: PropertyKind) {
        switch kind {
        case .int: self = .int
        case .int8: self = .int8
        case .int16: self = .int16
        case .int32: self = .int32
        case .int64: self = .int64
        case .uint: self = .uint
        case .uint8: self = .uint8
        case .uint16: self = .uint16
        case .uint32: self = .uint32
        case .uint64: self = .uint64
        case .float: self = .float
        case .double: self = .double
        default: return nil
        }
    }

    var kind: PropertyKind {
        switch self {
        case .int: .int
        case .int8: .int8
        case .int16: .int16
        case .int32: .int32
        case .int64: .int64
        case .uint: .uint
        case .uint8: .uint8
        case .uint16: .uint16
        case .uint32: .uint32
        case .uint64: .uint64
        case .float: .float
        case .double: .double
        }
    }

    /// How its values are held and computed.
    enum Representation {
        case signed(min: Int64, max: Int64)
        case unsigned(max: UInt64)
        case float, double
    }

    var representation: Representation {
        switch self {
        case .int, .int64: .signed(min: .min, max: .max)
        case .int8: .signed(min: Int64(Int8.min), max: Int64(Int8.max))
        case .int16: .signed(min: Int64(Int16.min), max: Int64(Int16.max))
        case .int32: .signed(min: Int64(Int32.min), max: Int64(Int32.max))
        case .uint, .uint64: .unsigned(max: .max)
        case .uint8: .unsigned(max: UInt64(UInt8.max))
        case .uint16: .unsigned(max: UInt64(UInt16.max))
        case .uint32: .unsigned(max: UInt64(UInt32.max))
        case .float: .float
        case .double: .double
        }
    }

    /// Whether Swift's operators on it can trap.
    var isInteger: Bool {
        switch self {
        case .float, .double: false
        default: true
        }
    }

    /// `a op b`, or nil where Swift's operator traps (or for `%` on floating point, which Swift
    /// does not define).
    @inline(__always)
    func apply(_ operation: ArithmeticOperation, _ a: UInt64, _ b: UInt64) -> UInt64? {
        switch representation {
        case .float:
            let (x, y) = (Float(Double(bitPattern: a)), Float(Double(bitPattern: b)))
            let result: Float
            switch operation {
            case .add: result = x + y
            case .subtract: result = x - y
            case .multiply: result = x * y
            case .divide: result = x / y
            case .remainder: return nil
            }
            return Double(result).bitPattern
        case .double:
            let (x, y) = (Double(bitPattern: a), Double(bitPattern: b))
            switch operation {
            case .add: return (x + y).bitPattern
            case .subtract: return (x - y).bitPattern
            case .multiply: return (x * y).bitPattern
            case .divide: return (x / y).bitPattern
            case .remainder: return nil
            }
        case .unsigned(let max):
            let (result, overflow) = switch operation {
            case .add: a.addingReportingOverflow(b)
            case .subtract: a.subtractingReportingOverflow(b)
            case .multiply: a.multipliedReportingOverflow(by: b)
            case .divide: a.dividedReportingOverflow(by: b)
            case .remainder: a.remainderReportingOverflow(dividingBy: b)
            }
            return overflow || result > max ? nil : result
        case .signed(let min, let max):
            let (x, y) = (Int64(bitPattern: a), Int64(bitPattern: b))
            // `min % -1` traps in Swift at every width; in 64 bits it is 0 for a narrower type.
            if operation == .remainder, x == min, y == -1 { return nil }
            let (result, overflow) = switch operation {
            case .add: x.addingReportingOverflow(y)
            case .subtract: x.subtractingReportingOverflow(y)
            case .multiply: x.multipliedReportingOverflow(by: y)
            case .divide: x.dividedReportingOverflow(by: y)
            case .remainder: x.remainderReportingOverflow(dividingBy: y)
            }
            return overflow || result < min || result > max ? nil : UInt64(bitPattern: result)
        }
    }

    /// `-a`, or nil where Swift's prefix `-` traps (the least value of a signed integer type).
    @inline(__always)
    func negate(_ a: UInt64) -> UInt64? {
        switch representation {
        // The sign bit flips, as Swift's `-` does (`-0.0` from `0.0`, NaN stays NaN).
        case .float, .double: (-Double(bitPattern: a)).bitPattern
        case .unsigned: nil
        case .signed(let min, _): Int64(bitPattern: a) == min ? nil : UInt64(bitPattern: 0 &- Int64(bitPattern: a))
        }
    }

    /// The bits of a value of this type, or nil when `value` is not one (a value out of an
    /// integer type's range, which only a damaged record holds, is not one either).
    func bits(of value: QueryValue) -> UInt64? {
        switch (representation, value) {
        case (.signed(let min, let max), .int(let x)): x < min || x > max ? nil : UInt64(bitPattern: x)
        case (.unsigned(let max), .uint(let x)): x > max ? nil : x
        case (.float, .float(let x)): Double(x).bitPattern
        case (.double, .double(let x)): x.bitPattern
        default: nil
        }
    }

    /// The value whose bits are `bits`.
    func value(_ bits: UInt64) -> QueryValue {
        switch representation {
        case .signed: .int(Int64(bitPattern: bits))
        case .unsigned: .uint(bits)
        case .float: .float(Float(Double(bitPattern: bits)))
        case .double: .double(Double(bitPattern: bits))
        }
    }

    /// `a op b` on query values: nil when they are not numbers of this type (a part only the
    /// model decides).
    ///
    /// - Throws: ``ArithmeticTrap`` where Swift's operator traps.
    func apply(_ operation: ArithmeticOperation, _ a: QueryValue, _ b: QueryValue) throws(ArithmeticTrap) -> QueryValue? {
        guard let x = bits(of: a), let y = bits(of: b) else { return nil }
        guard let result = apply(operation, x, y) else { throw trap(operation, x, y) }
        return value(result)
    }

    /// `-a` on a query value: nil when it is not a number of this type.
    ///
    /// - Throws: ``ArithmeticTrap`` where Swift's prefix `-` traps.
    func negate(_ a: QueryValue) throws(ArithmeticTrap) -> QueryValue? {
        guard let x = bits(of: a) else { return nil }
        guard let result = negate(x) else { throw negationTrap(x) }
        return value(result)
    }

    func trap(_ operation: ArithmeticOperation, _ a: UInt64, _ b: UInt64) -> ArithmeticTrap {
        ArithmeticTrap(expression: "\(text(a)) \(operation.symbol) \(text(b))", type: kind.description)
    }

    func negationTrap(_ a: UInt64) -> ArithmeticTrap {
        ArithmeticTrap(expression: "-(\(text(a)))", type: kind.description)
    }

    private func text(_ bits: UInt64) -> String {
        switch value(bits) {
        case .int(let x): "\(x)"
        case .uint(let x): "\(x)"
        case .float(let x): "\(x)"
        case .double(let x): "\(x)"
        default: "\(bits)"
        }
    }
}

/// An operation of a predicate on which Swift's arithmetic traps, met while testing a record:
/// the store turns it into ``QueryError/Kind/arithmeticTrap(typeName:key:expression:type:)``
/// once it knows which record.
struct ArithmeticTrap: Error {
    let expression: String
    let type: String
}

extension QueryNode {
    /// `lhs op rhs` in `number`, computed now when both are constants on which it does not trap.
    static func arithmetic(_ lhs: QueryNode, _ operation: ArithmeticOperation, _ rhs: QueryNode, _ number: QueryNumber) -> QueryNode {
        if case .constant(let a) = lhs, case .constant(let b) = rhs,
           let x = number.bits(of: a), let y = number.bits(of: b), let result = number.apply(operation, x, y) {
            return .constant(number.value(result))
        }
        return .compute(lhs, operation, rhs, number)
    }

    /// `-value` in `number`: a constant when `value` is one that negates without trapping
    /// (`-50` is written as a minus applied to `50`).
    static func negation(_ value: QueryNode, _ number: QueryNumber) -> QueryNode {
        if case .constant(let a) = value, let x = number.bits(of: a), let result = number.negate(x) {
            return .constant(number.value(result))
        }
        return .negate(value, number)
    }
}

/// `Decimal` arithmetic in predicates (`+`, `-`, `*` and a prefix `-`; a predicate has no `/`
/// for them), with Foundation's own operators on the values the models hold (both are read from
/// the same stored text), so the results are the models'. Those operators trap on some operands
/// (an overflow, a NaN), which the store cannot tell beforehand, so it computes only on operands
/// small enough that every result is exact: at most 14 significant digits and an exponent within
/// ±8 (a sum aligns them to at most 30 digits, a product has at most 28, both within the 38 a
/// `Decimal` holds). Any other operand is left to the models, which answer, or trap, as Swift does.
enum DecimalArithmetic {
    static func apply(_ operation: ArithmeticOperation, _ a: Decimal, _ b: Decimal) -> Decimal? {
        guard isSmall(a), isSmall(b) else { return nil }
        switch operation {
        case .add: return a + b
        case .subtract: return a - b
        case .multiply: return a * b
        case .divide, .remainder: return nil
        }
    }

    static func negate(_ a: Decimal) -> Decimal? {
        isSmall(a) ? -a : nil
    }

    private static let largestSignificand = Decimal(99_999_999_999_999)

    private static func isSmall(_ value: Decimal) -> Bool {
        !value.isNaN && (-8...8).contains(value.exponent) && value.significand.magnitude <= largestSignificand
    }
}

extension QueryNode {
    /// `lhs op rhs` on `Decimal`s, computed now when both are constants.
    static func decimalArithmetic(_ lhs: QueryNode, _ operation: ArithmeticOperation, _ rhs: QueryNode) -> QueryNode {
        if case .constant(.decimal(let a)) = lhs, case .constant(.decimal(let b)) = rhs,
           let result = DecimalArithmetic.apply(operation, a, b) {
            return .constant(.decimal(result))
        }
        return .decimalCompute(lhs, operation, rhs)
    }

    /// `-value` of a `Decimal`, computed now for a constant (`-1.5` is a minus applied to `1.5`).
    static func decimalNegation(_ value: QueryNode) -> QueryNode {
        if case .constant(.decimal(let a)) = value, let result = DecimalArithmetic.negate(a) {
            return .constant(.decimal(result))
        }
        return .decimalNegate(value)
    }
}
