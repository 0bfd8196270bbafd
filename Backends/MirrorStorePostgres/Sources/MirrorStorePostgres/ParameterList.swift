import NIOCore
import PostgresNIO

/// Where single values are bound: a statement's `PostgresBindings` (writes), or the list of
/// `PostgresData` a query's ``SQLParameters`` keep, which a prepared statement runs with and
/// from which an unprepared one takes its bindings (``PreparedStatements``).
protocol ParameterList {
    mutating func bindNull()
    mutating func bind<Value: PostgresNonThrowingEncodable>(_ value: Value)
    mutating func bind<Value: PostgresEncodable>(throwing value: Value) throws
}

extension PostgresBindings: ParameterList {
    mutating func bindNull() { appendNull() }
    mutating func bind<Value: PostgresNonThrowingEncodable>(_ value: Value) { append(value) }
    mutating func bind<Value: PostgresEncodable>(throwing value: Value) throws { try append(value) }
}

extension [PostgresData]: ParameterList {
    mutating func bindNull() { append(PostgresData(type: .null, formatCode: .binary, value: nil)) }

    mutating func bind<Value: PostgresNonThrowingEncodable>(_ value: Value) {
        var buffer = ByteBuffer()
        value.encode(into: &buffer, context: .default)
        append(PostgresData(type: value.psqlType, formatCode: value.psqlFormat, value: buffer))
    }

    mutating func bind<Value: PostgresEncodable>(throwing value: Value) throws {
        var buffer = ByteBuffer()
        try value.encode(into: &buffer, context: .default)
        append(PostgresData(type: value.psqlType, formatCode: value.psqlFormat, value: buffer))
    }
}
