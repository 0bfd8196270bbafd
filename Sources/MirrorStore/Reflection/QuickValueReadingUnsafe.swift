import Foundation
import MirrorStoreEngine

extension RawCursor {
    /// Reads a stored value of one of the commonest types (``DirectStep/QuickRead``), tag first,
    /// into its field (of that type, or of its optional for the optional kinds) inline in the
    /// direct fill's loop, and moves past it; `false`, without moving, for anything else —
    /// another tag, bytes that end or do not decode, a NaN date, `null` in a required field —
    /// which the general call (``StoredValueType/decode(tag:from:into:optional:)``) then reads
    /// from the same place and judges. What this stores is what that call would store for the
    /// same bytes: a call per value cost more than reading the value.
    ///
    /// One `switch` on the step's kind, optional or not, each case the code of exactly that
    /// field's type: a kind and a separate optional flag were two dispatches per value, and
    /// the function (too large to inline with every type behind both) a call per value.
    ///
    /// `field` is a field of the instance being filled, initialised, of the kind's type.
    @_transparent
    mutating func readQuickly(_ quick: DirectStep.QuickRead, into field: UnsafeMutableRawPointer) -> Bool {
        guard quick != .none else { return false }
        var probe = self
        guard let tag = probe.byte() else { return false }
        let null = ValueTag.null.rawValue
        let read: Bool
        switch quick {
        case .none: return false
        case .int: read = Self.put(probe.quickInt(tag), into: field)
        case .optionalInt: read = tag == null ? Self.putNil(Int.self, into: field) : Self.putSome(probe.quickInt(tag), into: field)
        case .double: read = Self.put(probe.quickDouble(tag), into: field)
        case .optionalDouble: read = tag == null ? Self.putNil(Double.self, into: field) : Self.putSome(probe.quickDouble(tag), into: field)
        case .date: read = Self.put(probe.quickDate(tag), into: field)
        case .optionalDate: read = tag == null ? Self.putNil(Date.self, into: field) : Self.putSome(probe.quickDate(tag), into: field)
        case .string: read = probe.quickString(tag, into: field, optional: false)
        case .optionalString: read = tag == null ? Self.putNil(String.self, into: field) : probe.quickString(tag, into: field, optional: true)
        case .bool: read = Self.put(Self.quickBool(tag), into: field)
        case .optionalBool: read = tag == null ? Self.putNil(Bool.self, into: field) : Self.putSome(Self.quickBool(tag), into: field)
        }
        guard read else { return false }
        self = probe
        return true
    }

    /// The body of an `Int` tagged `tag`, or nil when the tag is another or the body does not decode.
    @inline(__always)
    private mutating func quickInt(_ tag: UInt8) -> Int? {
        guard tag == ValueTag.int.rawValue, let bits = skipVarint() else { return nil }
        return Int(exactly: RawCursor.unzigzag(bits))
    }

    @inline(__always)
    private mutating func quickDouble(_ tag: UInt8) -> Double? {
        guard tag == ValueTag.double.rawValue, let bits = uint64() else { return nil }
        return Double(bitPattern: bits)
    }

    @inline(__always)
    private mutating func quickDate(_ tag: UInt8) -> Date? {
        guard tag == ValueTag.date.rawValue, let bits = uint64() else { return nil }
        return StoredValues.date(bits)
    }

    /// Reads a `String` tagged `tag` into `field`, a `String` (or a `String?` when `optional`).
    /// With the small-string proof the cursor's maker took, short ASCII text is stored as the two
    /// words of its small string, and an empty string in the field (as a new instance holds) is
    /// overwritten without a release: each of those was a call into the runtime per string.
    @_transparent
    private mutating func quickString(_ tag: UInt8, into field: UnsafeMutableRawPointer, optional: Bool) -> Bool {
        guard tag == ValueTag.string.rawValue, case .success(let utf8) = lengthPrefixed() else { return false }
        guard let smallStrings = takenSmallStrings else {
            guard let value = string(utf8) else { return false }
            return optional ? Self.putSome(value, into: field) : Self.put(value, into: field)
        }
        // `String` and `String?` hold a string in the same two words (`nil` is a pattern no
        // string has), so the words of a string are that value of either type.
        let holdsEmpty = field.load(as: (UInt64, UInt64).self) == UTF8Text.emptyStringBits(smallStrings)
        if let bits = UTF8Text.smallStringBits(utf8.assumingMemoryBound(to: UInt8.self), smallStrings) {
            if !holdsEmpty {
                if optional {
                    field.assumingMemoryBound(to: String?.self).deinitialize(count: 1)
                } else {
                    field.assumingMemoryBound(to: String.self).deinitialize(count: 1)
                }
            }
            field.storeBytes(of: bits.0, as: UInt64.self)
            field.storeBytes(of: bits.1, toByteOffset: 8, as: UInt64.self)
            return true
        }
        guard let value = string(utf8) else { return false }
        switch (optional, holdsEmpty) {
        case (false, false): field.assumingMemoryBound(to: String.self).pointee = value
        case (false, true): field.initializeMemory(as: String.self, to: value)
        case (true, false): field.assumingMemoryBound(to: String?.self).pointee = value
        case (true, true): field.initializeMemory(as: String?.self, to: value)
        }
        return true
    }

    @inline(__always)
    private static func quickBool(_ tag: UInt8) -> Bool? {
        guard tag == ValueTag.true.rawValue || tag == ValueTag.false.rawValue else { return nil }
        return tag == ValueTag.true.rawValue
    }

    /// Assigns `value`, when there is one, to the field of its type; whether there was.
    @inline(__always)
    private static func put<Value>(_ value: Value?, into field: UnsafeMutableRawPointer) -> Bool {
        guard let value else { return false }
        field.assumingMemoryBound(to: Value.self).pointee = value
        return true
    }

    /// ``put(_:into:)`` into a field of the value's optional.
    @inline(__always)
    private static func putSome<Value>(_ value: Value?, into field: UnsafeMutableRawPointer) -> Bool {
        guard let value else { return false }
        field.assumingMemoryBound(to: Value?.self).pointee = value
        return true
    }

    @inline(__always)
    private static func putNil<Value>(_: Value.Type, into field: UnsafeMutableRawPointer) -> Bool {
        field.assumingMemoryBound(to: Value?.self).pointee = nil
        return true
    }
}
