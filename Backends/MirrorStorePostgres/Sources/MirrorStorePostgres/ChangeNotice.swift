import Foundation

/// What one committed write changed: the type names it wrote and, where it knows them, the keys.
/// A write block sends it with `pg_notify` before its `COMMIT`, so PostgreSQL delivers it to
/// every listener only once the transaction commits, and never when it rolls back.
///
/// The payload is JSON, a type name to its changed keys (as text) or to `null` when any object of
/// the type may have changed (`deleteAll`, `delete(_:where:)`): `{"Hero":["1455"],"Publisher":null}`.
/// PostgreSQL refuses payloads of 8000 bytes or more, so a notice too long with its keys is sent
/// with types only, and one too long even then as `{"*":null}`: everything may have changed.
struct ChangeNotice: Sendable, Equatable {
    /// Changed keys by type name; `nil` for every object of the type.
    private(set) var types: [String: Set<String>?] = [:]
    /// Whether anything at all may have changed (a payload this backend did not write).
    private(set) var isEverything = false

    /// The longest payload sent, under PostgreSQL's limit of 8000 bytes.
    static let payloadLimit = 7_900

    var isEmpty: Bool { types.isEmpty && !isEverything }

    /// Notes that the object of `type` under `key` changed, or every object of it when `key` is `nil`.
    mutating func note(_ type: String, key: String?) {
        guard let key else {
            types[type] = .some(nil)
            return
        }
        switch types[type] {
        case .none: types[type] = .some([key])
        case .some(.none): break
        case .some(.some(var keys)):
            // Taken out first, so the insert changes the set in place instead of copying it.
            types[type] = nil
            keys.insert(key)
            // Past this many keys (3 bytes each at least in JSON) the payload cannot name them.
            types[type] = keys.count > Self.payloadLimit / 3 ? .some(nil) : .some(keys)
        }
    }

    /// Whether every object of `type` is already noted as changed, so a key adds nothing.
    func coversEvery(_ type: String) -> Bool {
        if case .some(.none) = types[type] { return true }
        return isEverything
    }

    /// Whether the change may concern the object of `type` under `key`, or any object of `type`
    /// when `key` is `nil`.
    func touches(_ type: String, key: String? = nil) -> Bool {
        if isEverything { return true }
        guard let keys = types[type] else { return false }
        guard let key, let keys else { return true }
        return keys.contains(key)
    }

    /// The notification's payload: with keys when it fits, else types only, else everything.
    var payload: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let withKeys = types.mapValues { $0.map { $0.sorted() } }
        if let data = try? encoder.encode(withKeys), data.count <= Self.payloadLimit {
            return String(decoding: data, as: UTF8.self)
        }
        let typesOnly = types.mapValues { _ in [String]?.none }
        if let data = try? encoder.encode(typesOnly), data.count <= Self.payloadLimit {
            return String(decoding: data, as: UTF8.self)
        }
        return #"{"*":null}"#
    }

    /// The payload of a notice of one change, the object of `type` under `key` or every object
    /// of it when `key` is `nil`: what ``payload`` gives for such a notice, spelled without an
    /// encoder, since one goes with each of a transaction's first write statements.
    static func payload(of type: String, key: String?) -> String {
        let typeOnly = "{" + jsonString(type) + ":null}"
        guard let key else { return typeOnly }
        let withKey = "{" + jsonString(type) + ":[" + jsonString(key) + "]}"
        if withKey.utf8.count <= payloadLimit { return withKey }
        return typeOnly.utf8.count <= payloadLimit ? typeOnly : #"{"*":null}"#
    }

    /// `text` as a JSON string: quotes, backslashes and control characters escaped.
    private static func jsonString(_ text: String) -> String {
        var json = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": json += "\\\""
            case "\\": json += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                json += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: json.unicodeScalars.append(scalar)
            }
        }
        return json + "\""
    }

    init() {}

    /// The notice a payload describes; a payload that is not this backend's JSON (someone else's
    /// `NOTIFY` on the channel) counts as everything, so no observer misses a change.
    init(payload: String) {
        guard let decoded = try? JSONDecoder().decode([String: [String]?].self, from: Data(payload.utf8)),
              decoded["*"] == nil else {
            isEverything = true
            return
        }
        types = decoded.mapValues { $0.map(Set.init) }
    }
}
