/// Where the raw values of a property's enums lie inside its record value.
///
/// The store records every raw value it writes for each enum property, so that opening it can
/// tell whether the models' enums still have a case for each (see `StoredEnumValues`): a read
/// then never meets a raw value without a case, which it could only report by failing.
indirect enum EnumShape {
    /// The value is an enum's raw value.
    case rawValue(EnumCases)
    /// Each element of a list or set.
    case elements(EnumShape)
    /// Each value of a dictionary.
    case values(EnumShape)
    /// An embedded record of this plan, whose own enum fields apply.
    case embedded(TypePlan)
}

/// Tells which raw values an enum type has a case for.
struct EnumCases {
    /// The enum's type, for messages.
    let enumType: String
    let accepts: (RecordValue) -> Bool
}

extension AnyValueCodec {
    var enumShape: EnumShape? { nil }
}

extension RawValueCodec {
    var enumShape: EnumShape? {
        let raw = raw
        return .rawValue(EnumCases(enumType: "\(Value.self)") { record in
            var context = DecodingContext()
            guard let rawValue = try? raw.decode(record, in: &context) else { return false }
            return Value(rawValue: rawValue) != nil
        })
    }
}

extension OptionalCodec {
    var enumShape: EnumShape? { wrapped.enumShape }
}

extension ArrayCodec {
    var enumShape: EnumShape? { element.enumShape.map(EnumShape.elements) }
}

extension SetCodec {
    var enumShape: EnumShape? { element.enumShape.map(EnumShape.elements) }
}

extension DictionaryCodec {
    var enumShape: EnumShape? { value.enumShape.map(EnumShape.values) }
}

extension ModelCodec {
    /// A linked model is a record of its own, whose enums are recorded when it is written.
    var enumShape: EnumShape? { plan.schema.primaryKey == nil ? .embedded(plan) : nil }
}

extension ModelArrayCodec {
    var enumShape: EnumShape? { element.enumShape.map(EnumShape.elements) }
}
