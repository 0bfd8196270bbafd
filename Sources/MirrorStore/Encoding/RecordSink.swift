import MirrorStoreEngine

/// Where ``RecordDecoder`` delivers a record's values, property by property, in schema order.
///
/// A sink that knows where a value goes (a model's field) reads it straight from the bytes, with
/// no ``RecordValue`` in between; for the others the decoder builds the value and hands it over.
protocol RecordSink {
    /// Reads the value of property `index` from `reader`, which stands at the value's tag (`tag`
    /// nil) or, in a tagless record, at its body (`tag` the one the schema implies), and returns
    /// `true`; or returns `false`, having read anything or nothing, to let the decoder read the
    /// value again from the same place as a ``RecordValue`` and pass it to ``take(_:_:)``.
    mutating func readDirectly(_ index: Int, tag: UInt8?, from reader: inout ByteReader) throws -> Bool

    /// Receives the value of property `index`.
    mutating func take(_ index: Int, _ value: RecordValue) throws
}
