/// The type names of one log file, numbered densely from 0 in the order the log defines them,
/// so records carry a small varint instead of repeating the name.
struct TypeTable: Sendable {
    private(set) var names: [String] = []
    private(set) var ids: [String: UInt32] = [:]

    var count: Int { names.count }

    func id(of name: String) -> UInt32? {
        ids[name]
    }

    func name(of id: UInt64) -> String? {
        id < UInt64(names.count) ? names[Int(id)] : nil
    }

    /// Adds `name` with the next id and returns it.
    @discardableResult
    mutating func define(_ name: String) -> UInt32 {
        let id = UInt32(names.count)
        names.append(name)
        ids[name] = id
        return id
    }
}
