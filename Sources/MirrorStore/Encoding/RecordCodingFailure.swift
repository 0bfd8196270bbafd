import MirrorStoreEngine

/// Why record bytes could not be written or read. The store adds the type and key and reports it
/// as a ``StoreError``.
struct RecordCodingFailure: Error, Equatable {
    enum Kind: Equatable {
        /// The bytes do not decode as the schema says they should.
        case malformed(offset: Int, reason: String)
        /// Models without a primary key are embedded in their parent, so they cannot form a cycle.
        case embeddedCycle(typeName: String)
        /// A linked model's primary key holds no usable value.
        case invalidPrimaryKey(typeName: String, value: String)
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
        case .embeddedCycle(let typeName): "a cycle runs through \(typeName), which has no primary key; only models with a primary key can be linked in cycles"
        case .invalidPrimaryKey(let typeName, let value): "the primary key of \(typeName) holds \(value), which cannot identify a record"
        case .unknownType(let typeName): "the record refers to \(typeName), whose schema the store does not have"
        }
    }
}
