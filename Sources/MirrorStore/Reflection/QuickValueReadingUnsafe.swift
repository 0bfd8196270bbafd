import Foundation
import MirrorStoreEngine

extension RawCursor {
    /// Reads a stored value of one of the commonest types (``DirectStep/QuickRead``), tag first,
    /// into its field (of that type, or of its optional when `optional`) inline in the direct
    /// fill's loop, and moves past it; `false`, without moving, for anything else — another
    /// tag, bytes that end or do not decode, a NaN date, `null` in a required field — which the
    /// general call (``StoredValueType/decode(tag:from:into:optional:)``) then reads from the same
    /// place and judges. What this stores is what that call would store for the same bytes: a
    /// call per value cost more than reading the value.
    ///
    /// `field` is a field of the instance being filled, initialised, of the step's type.
    @inline(__always)
    mutating func readQuickly(_ quick: DirectStep.QuickRead, optional: Bool, into field: UnsafeMutableRawPointer) -> Bool {
        var probe = self
        guard let tag = probe.byte() else { return false }
        if tag == ValueTag.null.rawValue {
            guard optional else { return false }
            switch quick {
            case .none: return false
            case .int: field.assumingMemoryBound(to: Int?.self).pointee = nil
            case .double: field.assumingMemoryBound(to: Double?.self).pointee = nil
            case .date: field.assumingMemoryBound(to: Date?.self).pointee = nil
            case .string: field.assumingMemoryBound(to: String?.self).pointee = nil
            case .bool: field.assumingMemoryBound(to: Bool?.self).pointee = nil
            }
            self = probe
            return true
        }
        switch quick {
        case .none:
            return false
        case .int:
            guard tag == ValueTag.int.rawValue, let bits = probe.skipVarint(), let value = Int(exactly: RawCursor.unzigzag(bits)) else { return false }
            Self.put(value, field, optional)
        case .double:
            guard tag == ValueTag.double.rawValue, let bits = probe.uint64() else { return false }
            Self.put(Double(bitPattern: bits), field, optional)
        case .date:
            guard tag == ValueTag.date.rawValue, let bits = probe.uint64(), let value = StoredValues.date(bits) else { return false }
            Self.put(value, field, optional)
        case .string:
            // Made with the small-string proof the cursor's maker took (`string(_:)`): the
            // global's once-only check was a call into the runtime for each string.
            guard tag == ValueTag.string.rawValue, case .success(let utf8) = probe.lengthPrefixed(),
                  let value = probe.string(utf8) else { return false }
            Self.put(value, field, optional)
        case .bool:
            guard tag == ValueTag.true.rawValue || tag == ValueTag.false.rawValue else { return false }
            Self.put(tag == ValueTag.true.rawValue, field, optional)
        }
        self = probe
        return true
    }

    @inline(__always)
    private static func put<Value>(_ value: Value, _ field: UnsafeMutableRawPointer, _ optional: Bool) {
        if optional {
            field.assumingMemoryBound(to: Value?.self).pointee = value
        } else {
            field.assumingMemoryBound(to: Value.self).pointee = value
        }
    }
}
