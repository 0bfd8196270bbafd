import BenchmarkSupport
import Foundation
import GRDB
import MirrorStore

/// An integer-heavy shape: a sensor reading, eight integer and Boolean fields of several widths
/// beside the key and one short string.
final class Reading: StoreShape {
    var id = 0
    var sensor: Int32 = 0
    var sequence: Int64 = 0
    var value = 0
    var minimum: Int16 = 0
    var maximum: Int16 = 0
    var flags: UInt8 = 0
    var valid = false
    var calibrated = false
    var unit = ""

    init() {}

    static var primaryKey: String? { "id" }
    static let databaseTableName = "reading"
    static let shapeName = "integers"
    static let shapeSummary = "Reading: Int key, Int32, Int64, Int, 2 × Int16, UInt8, 2 × Bool, a 1–3 byte unit"

    private static let units = ["C", "hPa", "%", "lx", "ppm", "dB"]

    static func fixture(id: Int, seed: UInt64) -> Reading {
        var random = SplitMix64.object(id: id, seed: seed, salt: 1)
        let reading = Reading()
        reading.id = id
        reading.sensor = Int32(random.next(in: 1...500))
        reading.sequence = 1_700_000_000_000 + Int64(id) * 1_000 + Int64(random.next(in: 0...999))
        reading.value = random.next(in: -100_000...100_000)
        reading.minimum = Int16(random.next(in: -400...0))
        reading.maximum = Int16(random.next(in: 0...2_000))
        reading.flags = UInt8(random.next(in: 0...255))
        reading.valid = random.next() % 10 != 0
        reading.calibrated = random.next() % 2 == 0
        reading.unit = units[random.next(in: 0...(units.count - 1))]
        return reading
    }

    static func key(id: Int, seed: UInt64) -> Int { id }

    var storedKey: Int { id }

    static func createTable(_ db: Database) throws {
        try db.create(table: databaseTableName) { table in
            table.primaryKey("id", .integer)
            table.column("sensor", .integer).notNull()
            table.column("sequence", .integer).notNull()
            table.column("value", .integer).notNull()
            table.column("minimum", .integer).notNull()
            table.column("maximum", .integer).notNull()
            table.column("flags", .integer).notNull()
            table.column("valid", .boolean).notNull()
            table.column("calibrated", .boolean).notNull()
            table.column("unit", .text).notNull()
        }
    }

    func differences(from other: Reading) -> [String] {
        var result = FieldComparison()
        result.compare("id", id, other.id)
        result.compare("sensor", sensor, other.sensor)
        result.compare("sequence", sequence, other.sequence)
        result.compare("value", value, other.value)
        result.compare("minimum", minimum, other.minimum)
        result.compare("maximum", maximum, other.maximum)
        result.compare("flags", flags, other.flags)
        result.compare("valid", valid, other.valid)
        result.compare("calibrated", calibrated, other.calibrated)
        result.compare("unit", unit, other.unit)
        return result.differences
    }
}
