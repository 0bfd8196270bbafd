import MirrorStoreEngine

/// Why record bytes could not be read. The store adds the type and key and reports it as a
/// ``StoreError``. (Writing fails with a ``StoreError`` directly: the encoder knows the type.)
struct RecordCodingFailure: Error, Equatable {
    enum Kind: Equatable {
        /// The bytes do not decode as the schema says they should.
        case malformed(offset: Int, reason: String)
        /// A record refers to a type whose schema the store does not have.
        case unknownType(String)
    }

    let kind: Kind

    init(_ kind: Kind) { self.kind = kind }

    init(_ failure: DecodeFailure) {
        kind = .malformed(offset: failure.offset, reason: failure.reason)
    }

    static func malformed(_ reader: ByteReader, _ reason: String) -> RecordCodingFailure {
        RecordCodingFailure(.malformed(offset: reader.position, reason: reason))
    }

    var reason: String {
        switch kind {
        case .malformed(let offset, let reason): "byte \(offset) of the record: \(reason)"
        case .unknownType(let typeName): "the record refers to \(typeName), whose schema the store does not have"
        }
    }
}
