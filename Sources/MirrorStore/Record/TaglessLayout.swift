/// How the records of a type whose properties are all required single values may be written
/// without a tag per value: the *tagless form* (docs/FILE_FORMAT.md, "Record encoding").
///
/// Such a type's schema fixes every value's kind, so the tag the tagged form writes before each
/// value says nothing the schema does not, except a `Bool`'s value, which lies in a bitmap. A
/// tagless record is ``marker``, then the bitmap (one bit per `Bool` property, in schema order,
/// from bit 0 of its first byte; the unused high bits zero), then the body of every other value in
/// schema order, as the tagged form writes it after the tag. Readers take both forms: each value
/// read from a tagless record comes with the tag the tagged form would have written
/// (``tag(at:bitmap:)``), so that one reading of the bodies serves both.
struct TaglessLayout: Sendable {
    /// The first byte of a tagless record. The tagged form starts with its value count, which for
    /// a type with fewer than 128 properties (the only ones written tagless) is a byte below 0x80.
    static let marker: UInt8 = 0x80
    /// Types with this many properties or more are always written tagged (their count's varint
    /// may start with ``marker``).
    static let maximumCount = 128

    /// Per property in schema order, one byte: below 0x80, the tag its values are written with
    /// (a value type's, ``StoredValueType/tag``); from 0x80, a `Bool`, whose bit in the bitmap is
    /// the low seven bits. One array, so that a reader holds one reference per record.
    let codes: [UInt8]
    /// The bitmap's shape, apart from the codes: a reader that knows each value's type otherwise
    /// (a model's plan) finds the bodies with it alone.
    let bitmap: Bitmap

    /// The bitmap of the `Bool`s.
    struct Bitmap: Sendable {
        /// Its size in bytes: the `Bool` properties' count, rounded up to bytes.
        let size: Int
        /// The bits of its last byte in use, 0 when all are.
        let usedInLastByte: Int

        /// Whether its unused high bits, which a writer leaves zero, are zero: its last byte given.
        @inline(__always)
        func unusedBitsAreZero(lastByte: UInt8) -> Bool {
            usedInLastByte == 0 || lastByte >> UInt8(usedInLastByte) == 0
        }
    }

    /// The bitmap's size in bytes.
    var bitmapSize: Int { bitmap.size }

    /// The layout of the records of a schema with `properties`, or nil when they are always
    /// tagged: a property is optional, links, holds a container, or there are none or too many.
    init?(_ properties: [ObjectSchema.Property]) {
        guard !properties.isEmpty, properties.count < Self.maximumCount else { return nil }
        var codes: [UInt8] = []
        var booleans: UInt8 = 0
        for property in properties {
            guard let type = property.kind.storedValueType else { return nil }
            if type == .bool {
                codes.append(0x80 | booleans)
                booleans += 1
            } else {
                codes.append(type.tag.rawValue)
            }
        }
        self.codes = codes
        bitmap = Bitmap(size: (Int(booleans) + 7) / 8, usedInLastByte: Int(booleans) % 8)
    }

    /// The bit of property `index` in the bitmap when it is a `Bool`, else nil.
    @inline(__always)
    func bit(at index: Int) -> Int? {
        let code = codes[index]
        return code < 0x80 ? nil : Int(code & 0x7F)
    }

    /// Whether a value tagged `tag` (the byte) is one the property at `index` holds: what the
    /// tagless form can write without its tag.
    func holds(_ tag: UInt8, at index: Int) -> Bool {
        let code = codes[index]
        return code < 0x80 ? tag == code : (tag == ValueTag.false.rawValue || tag == ValueTag.true.rawValue)
    }

    /// The tag the tagged form writes before the value of property `index`, given the bitmap's
    /// byte at an offset from the bitmap's start; a `Bool` reads as its value's tag.
    @inline(__always)
    func tag(at index: Int, bitmap: (Int) -> UInt8) -> UInt8 {
        Self.tag(ofCode: codes[index], bitmap: bitmap)
    }

    /// ``tag(at:bitmap:)`` for a property's code (one of ``codes``), for a reader holding the
    /// codes in a buffer of its own.
    @inline(__always)
    static func tag(ofCode code: UInt8, bitmap: (Int) -> UInt8) -> UInt8 {
        isBoolean(code) ? booleanTag(bit: Int(code & 0x7F), bitmap: bitmap) : code
    }

    /// Whether a property's code is a `Bool`'s, whose value lies in the bitmap (no body).
    @inline(__always)
    static func isBoolean(_ code: UInt8) -> Bool { code >= 0x80 }

    /// The tag of the `Bool` whose bit is `bit`.
    @inline(__always)
    static func booleanTag(bit: Int, bitmap: (Int) -> UInt8) -> UInt8 {
        bitmap(bit >> 3) & (1 << UInt8(bit & 7)) != 0 ? ValueTag.true.rawValue : ValueTag.false.rawValue
    }
}
