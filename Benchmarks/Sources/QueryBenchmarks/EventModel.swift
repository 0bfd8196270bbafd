import BenchmarkSupport
import Foundation
import GRDB
import MirrorStore

/// Where an event takes place: no primary key, so MirrorStore embeds it in the event; GRDB's
/// table holds its fields as columns of the event's row (`venueName`, `venueCity`,
/// `venueCapacity`).
struct Venue: Persistable, Equatable {
    var name = ""
    var city = ""
    var capacity = 0

    init() {}
}

/// The model of the second shape (`--shape events`), unlike `Customer` in every way the query
/// path cares about: a `String` primary key in random order, a unique index on an `Int`
/// (`sequence`), an index on an `Int` with about 10 events per value (`kind`), an index on a
/// `String` with a skewed distribution (`category`, 40 values, the first about 23% of the events
/// and the last about 0.6%), an index on a `Date` (`startsAt`, all distinct), optionals and an
/// embedded struct. SQLite has the same indexes (`CREATE UNIQUE INDEX event_sequence`, `CREATE
/// INDEX event_kind`, `event_category`, `event_startsAt`); GRDB maps rows by hand, column by
/// column, the fastest record mapping it offers.
final class Event: Persistable, FetchableRecord, PersistableRecord {
    var code = ""
    var sequence = 0
    var kind = 0
    var category = ""
    var startsAt = Date(timeIntervalSince1970: 0)
    var endsAt: Date?
    var title = ""
    var price = 0.0
    var attendees: Int?
    var cancelled = false
    var notes: String?
    var venue = Venue()

    init() {}

    static var primaryKey: String? { "code" }
    static var uniqueProperties: [String] { ["sequence"] }
    static var indexedProperties: [String] { ["kind", "category", "startsAt"] }
    /// GRDB's table.
    static let databaseTableName = "event"

    init(row: Row) throws {
        code = row["code"]
        sequence = row["sequence"]
        kind = row["kind"]
        category = row["category"]
        startsAt = row["startsAt"]
        endsAt = row["endsAt"]
        title = row["title"]
        price = row["price"]
        attendees = row["attendees"]
        cancelled = row["cancelled"]
        notes = row["notes"]
        venue.name = row["venueName"]
        venue.city = row["venueCity"]
        venue.capacity = row["venueCapacity"]
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["code"] = code
        container["sequence"] = sequence
        container["kind"] = kind
        container["category"] = category
        container["startsAt"] = startsAt
        container["endsAt"] = endsAt
        container["title"] = title
        container["price"] = price
        container["attendees"] = attendees
        container["cancelled"] = cancelled
        container["notes"] = notes
        container["venueName"] = venue.name
        container["venueCity"] = venue.city
        container["venueCapacity"] = venue.capacity
    }

    /// A plain copy of the fields, for comparing results.
    var fields: EventFields {
        EventFields(code: code, sequence: sequence, kind: kind, category: category, startsAt: startsAt, endsAt: endsAt, title: title,
                    price: price, attendees: attendees, cancelled: cancelled, notes: notes, venue: venue)
    }
}

/// An event's stored fields as a value, so results compare with `==`.
struct EventFields: Equatable {
    var code: String
    var sequence: Int
    var kind: Int
    var category: String
    var startsAt: Date
    var endsAt: Date?
    var title: String
    var price: Double
    var attendees: Int?
    var cancelled: Bool
    var notes: String?
    var venue: Venue
}

/// The events' data set: event `id` (1…) of `objects` is a pure function of `(id, objects,
/// seed)`, so every process builds the same events and can compute what a query must return.
enum EventFixtures {
    /// 40 categories; category `i` is drawn with weight 1 / (i + 1).
    static let categories: [String] = (0..<40).map { "category-\($0 < 10 ? "0" : "")\($0)" }
    static let kinds = 10_000
    /// 2017-07-14 02:40:00 UTC, as the customers' dates.
    static let firstDate = 1_500_000_000.0
    static let dateSpan = 8.0 * 365 * 86_400
    private static let venues = ["Hall", "Arena", "Club", "Theatre", "Park", "Stadium", "Church", "Gallery"]
    private static let words = ["Spring", "Night", "Jazz", "Open", "Grand", "Final", "Winter", "Rock", "Folk", "Late",
                                "Summer", "Early", "Big", "Little", "Live", "Session", "Festival", "Show", "Tour", "Party"]

    /// Distinct `startsAt` slots: whole eighths of a second, exact in binary and in GRDB's
    /// millisecond date text.
    static func step(objects: Int) -> Double {
        max(1, (dateSpan / Double(objects) * 8).rounded(.down)) / 8
    }

    static func event(id: Int, objects: Int, seed: UInt64) -> Event {
        var random = SplitMix64(seed: seed ^ 0x4556_454E_54 ^ (UInt64(truncatingIfNeeded: id) &* 0xD1B5_4A32_D192_ED03))
        let event = Event()
        event.code = "ev-" + String(random.next() % 36_000_000_000_000, radix: 36) + "-\(id)"
        event.sequence = 1 + permuted(id, of: objects, salt: seed &+ 5)
        event.kind = Int(random.next() % UInt64(kinds))
        event.category = category(random.next())
        event.startsAt = Date(timeIntervalSince1970: firstDate + Double(permuted(id, of: objects, salt: seed &+ 11)) * step(objects: objects))
        fill(event, &random)
        return event
    }

    /// Event `number` (0…) of those the after-commit cell inserts into a store of `objects`:
    /// its `sequence` and `code` beyond the stored ones, its `startsAt` anywhere in the span but
    /// between two stored ones (half a step off), so it changes the `startsAt` index without
    /// tying with a stored event.
    static func inserted(_ number: Int, objects: Int, seed: UInt64) -> Event {
        var random = SplitMix64(seed: seed ^ 0x494E_5345_5254 ^ (UInt64(truncatingIfNeeded: number) &* 0x9E37_79B9_7F4A_7C15))
        let event = Event()
        event.code = "ev-new-\(number)"
        event.sequence = objects + 1 + number
        event.kind = Int(random.next() % UInt64(kinds))
        event.category = category(random.next())
        let slot = Double(random.next() % UInt64(objects))
        event.startsAt = Date(timeIntervalSince1970: firstDate + (slot + 0.5) * step(objects: objects))
        fill(event, &random)
        return event
    }

    static func events(objects: Int, seed: UInt64) -> [Event] {
        (1...objects).map { event(id: $0, objects: objects, seed: seed) }
    }

    private static func fill(_ event: Event, _ random: inout SplitMix64) {
        let hours = Double(1 + random.next() % 6) * 3_600
        event.endsAt = random.next() % 5 == 0 ? nil : event.startsAt.addingTimeInterval(hours)
        event.title = words[Int(random.next() % UInt64(words.count))] + " " + words[Int(random.next() % UInt64(words.count))]
            + " \(random.next() % 1_000)"
        event.price = Double(random.next() % 20_000) / 100
        event.attendees = random.next() % 3 == 0 ? nil : Int(random.next() % 5_000)
        event.cancelled = random.next() % 20 == 0
        event.notes = random.next() % 4 == 0 ? "Doors open an hour before; bring your ticket #\(random.next() % 100_000)" : nil
        event.venue.name = "The " + venues[Int(random.next() % UInt64(venues.count))]
        event.venue.city = QueryFixtures.cities[Int(random.next() % UInt64(QueryFixtures.cities.count))]
        event.venue.capacity = 50 * Int(1 + random.next() % 400)
    }

    /// A category drawn from the skewed distribution by `draw`.
    private static func category(_ draw: UInt64) -> String {
        let weights = categories.indices.map { 1.0 / Double($0 + 1) }
        var left = Double(draw % 1_000_000) / 1_000_000 * weights.reduce(0, +)
        for (index, weight) in weights.enumerated() {
            left -= weight
            if left < 0 { return categories[index] }
        }
        return categories[categories.count - 1]
    }

    /// Where `id` (1…) goes in `0..<objects`: `(id - 1) * a + b` modulo `objects`, with `a`
    /// drawn from `salt` and prime to `objects`, a permutation.
    private static func permuted(_ id: Int, of objects: Int, salt: UInt64) -> Int {
        var random = SplitMix64(seed: salt)
        var multiplier = 1 + Int(random.next() % UInt64(max(objects - 1, 1)))
        func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
        while gcd(multiplier, objects) != 1 { multiplier += 1 }
        let offset = Int(random.next() % UInt64(objects))
        return ((id - 1) * multiplier % objects + offset) % objects
    }
}
