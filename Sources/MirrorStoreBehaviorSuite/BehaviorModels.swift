import Foundation
import MirrorStore

// The models the behaviour suite writes. Their type names start with `Behavior` so that the
// suite's tables on a shared database meet no other test's.

/// A publisher heroes link to.
public struct BehaviorPublisher: Persistable, Hashable, Sendable {
    /// The primary key.
    public var id = 0
    /// A name.
    public var name = ""
    /// A country, which observers of heroes' publishers' names do not watch.
    public var country = ""
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, name: String, country: String = "") {
        self.id = id
        self.name = name
        self.country = country
    }
}

/// The model most checks use: numbers, a string, an optional, a list and a to-one link.
public struct BehaviorHero: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = 0
    /// A name.
    public var name = ""
    /// An age, indexed.
    public var age = 0
    /// Whether the hero is active.
    public var isActive = false
    /// A nickname, when there is one.
    public var nickname: String?
    /// Tags, in order.
    public var tags: [String] = []
    /// The publisher, a to-one link.
    public var publisher: BehaviorPublisher?
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// `name` and `age`.
    public static var indexedProperties: [String] { ["name", "age"] }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, name: String, age: Int, isActive: Bool = false, nickname: String? = nil, tags: [String] = [],
                publisher: BehaviorPublisher? = nil) {
        self.id = id
        self.name = name
        self.age = age
        self.isActive = isActive
        self.nickname = nickname
        self.tags = tags
        self.publisher = publisher
    }
}

/// An account whose email is unique.
public struct BehaviorAccount: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = 0
    /// The email, unique among accounts.
    public var email = ""
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// `email`.
    public static var uniqueProperties: [String] { ["email"] }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, email: String) {
        self.id = id
        self.email = email
    }
}

/// A seat: its row and number together are unique, and so are its code, its price and its
/// holder (a link to a label, keyed by a string), so unique violations name values of several
/// kinds, which every store spells alike.
public struct BehaviorSeat: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = 0
    /// The row.
    public var row = ""
    /// The number within its row.
    public var number = 0
    /// A code, unique; wide enough to pass `Int64.max`.
    public var code: UInt64 = 0
    /// A price, unique.
    public var price = 0.0
    /// Who holds the seat, unique.
    public var holder: BehaviorLabel?
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// `code`, `price` and `holder`.
    public static var uniqueProperties: [String] { ["code", "price", "holder"] }
    /// `row` and `number` together.
    public static var compoundIndexes: [CompoundIndex] { [.unique("row", "number")] }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, row: String, number: Int, code: UInt64, price: Double, holder: BehaviorLabel? = nil) {
        self.id = id
        self.row = row
        self.number = number
        self.code = code
        self.price = price
        self.holder = holder
    }
}

/// A type the suite never opens a store with.
public struct BehaviorUnregistered: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = 0
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// An empty instance, as reflection makes them.
    public init() {}
}

/// Schema version 1 of `BehaviorPerson`.
public struct BehaviorPersonOne: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = 0
    /// A name.
    public var name = ""
    /// A note, which version 2 removes.
    public var note = ""
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// Both versions are stored as `BehaviorPerson`.
    public static var persistedTypeName: String { "BehaviorPerson" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, name: String, note: String) {
        self.id = id
        self.name = name
        self.note = note
    }
}

/// Schema version 2 of `BehaviorPerson`: `name` renamed to `fullName`, `age` added, `note` removed.
public struct BehaviorPersonTwo: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = 0
    /// The name of version 1, renamed.
    public var fullName = ""
    /// Added in version 2: migrated objects take this value.
    public var age = 42
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// Both versions are stored as `BehaviorPerson`.
    public static var persistedTypeName: String { "BehaviorPerson" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, fullName: String, age: Int) {
        self.id = id
        self.fullName = fullName
        self.age = age
    }
}

/// Schema version 1 of a contact, which version 2 renames to `BehaviorFriend`.
public struct BehaviorContactOne: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = 0
    /// A first name, which version 2 joins with `lastName` into `fullName`.
    public var firstName = ""
    /// A last name.
    public var lastName = ""
    /// A note, which version 2 removes; the migration deletes contacts whose note is "gone".
    public var note = ""
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// Stored as `BehaviorContact`.
    public static var persistedTypeName: String { "BehaviorContact" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, firstName: String, lastName: String, note: String) {
        self.id = id
        self.firstName = firstName
        self.lastName = lastName
        self.note = note
    }
}

/// Schema version 2 of `BehaviorContactOne`, under a type name of its own.
public struct BehaviorFriend: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = 0
    /// The contact's first and last name, joined by the migration.
    public var fullName = ""
    /// Added in version 2: migrated objects take this value.
    public var visits = 1
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, fullName: String, visits: Int) {
        self.id = id
        self.fullName = fullName
        self.visits = visits
    }
}

/// A member of teams, which link to members from arrays.
public struct BehaviorMember: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = 0
    /// A name.
    public var name = ""
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, name: String) {
        self.id = id
        self.name = name
    }
}

/// A team: links inside containers, each kind of them, with delete rules.
public struct BehaviorTeam: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = 0
    /// A name.
    public var name = ""
    /// Members, in order; deleting the team deletes them (`.cascade`).
    public var members: [BehaviorMember] = []
    /// Reserves, in order, `nil` where a place is open.
    public var reserves: [BehaviorMember?] = []
    /// Sponsors, which cannot be deleted while the team links to them (`.deny`).
    public var sponsors: Set<BehaviorPublisher> = []
    /// Former members, `nil` for a new team.
    public var formerMembers: [BehaviorMember]?
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// `members` cascade, `sponsors` deny.
    public static var deleteRules: [String: DeleteRule] { ["members": .cascade, "sponsors": .deny] }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, name: String, members: [BehaviorMember] = [], reserves: [BehaviorMember?] = [],
                sponsors: Set<BehaviorPublisher> = [], formerMembers: [BehaviorMember]? = nil) {
        self.id = id
        self.name = name
        self.members = members
        self.reserves = reserves
        self.sponsors = sponsors
        self.formerMembers = formerMembers
    }
}

/// A coach, whom squads link to: its inverses list them.
public struct BehaviorCoach: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = 0
    /// A name.
    public var name = ""
    /// The squads whose `coaches` hold this coach.
    public var squads = LinkingObjects<BehaviorSquad>(property: "coaches")
    /// The squads this coach heads.
    public var headed = LinkingObjects<BehaviorSquad>(property: "head")
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, name: String) {
        self.id = id
        self.name = name
    }
}

/// A squad linking to coaches, to-many and to-one.
public struct BehaviorSquad: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = 0
    /// Coaches, in order.
    public var coaches: [BehaviorCoach] = []
    /// The head coach.
    public var head: BehaviorCoach?
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, coaches: [BehaviorCoach] = [], head: BehaviorCoach? = nil) {
        self.id = id
        self.coaches = coaches
        self.head = head
    }
}

/// A city, which addresses and customers link to from inside embedded models and containers.
public struct BehaviorCity: Persistable, Hashable, Sendable {
    /// The primary key.
    public var id = 0
    /// A name.
    public var name = ""
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, name: String) {
        self.id = id
        self.name = name
    }
}

/// An address: a model without a primary key, so embedded in its parent, that links to cities.
public struct BehaviorAddress: Persistable, Equatable, Sendable {
    /// A street.
    public var street = ""
    /// The city, a to-one link inside an embedded model.
    public var city: BehaviorCity?
    /// Cities nearby, an array of links inside an embedded model.
    public var nearby: [BehaviorCity] = []
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(street: String, city: BehaviorCity? = nil, nearby: [BehaviorCity] = []) {
        self.street = street
        self.city = city
        self.nearby = nearby
    }
}

/// A customer: links inside an embedded model, an array of them, dictionaries and nested arrays.
public struct BehaviorCustomer: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = 0
    /// A name.
    public var name = ""
    /// The home address, embedded.
    public var home = BehaviorAddress()
    /// Former addresses, embedded, in order.
    public var former: [BehaviorAddress] = []
    /// Offices by name, links in a dictionary.
    public var offices: [String: BehaviorCity] = [:]
    /// Branches by name, `nil` where a branch has no city yet.
    public var branches: [String: BehaviorCity?] = [:]
    /// Routes, each an array of cities: links in nested arrays.
    public var routes: [[BehaviorCity]] = []
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, name: String, home: BehaviorAddress = BehaviorAddress(), former: [BehaviorAddress] = [],
                offices: [String: BehaviorCity] = [:], branches: [String: BehaviorCity?] = [:], routes: [[BehaviorCity]] = []) {
        self.id = id
        self.name = name
        self.home = home
        self.former = former
        self.offices = offices
        self.branches = branches
        self.routes = routes
    }
}

/// Unique arrays and sets: no element may belong to two objects (one object may repeat it).
public struct BehaviorBadge: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = 0
    /// Codes, unique across badges element by element.
    public var codes: [Int] = []
    /// Names, unique across badges element by element, as Swift's `==` compares strings.
    public var names: Set<String> = []
    /// Optional numbers: a `nil` element is no value, so many badges may hold one.
    public var slots: [Int?] = []
    /// Cities, links unique across badges by their target.
    public var cities: [BehaviorCity] = []
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// Every array and set.
    public static var uniqueProperties: [String] { ["codes", "names", "slots", "cities"] }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, codes: [Int] = [], names: Set<String> = [], slots: [Int?] = [], cities: [BehaviorCity] = []) {
        self.id = id
        self.codes = codes
        self.names = names
        self.slots = slots
        self.cities = cities
    }
}

/// A customer whose delete rule names its embedded home: refused, since rules name links.
public struct BehaviorRuledCustomer: Persistable, Sendable {
    /// The primary key.
    public var id = 0
    /// The home address, embedded: its city link is no link of this model's own.
    public var home = BehaviorAddress()
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// A rule on `home`.
    public static var deleteRules: [String: DeleteRule] { ["home": .cascade] }
    /// An empty instance, as reflection makes them.
    public init() {}
}

/// A city listing the customers whose embedded home links to it: refused, since inverses name
/// a model's own links.
public struct BehaviorListedCity: Persistable, Sendable {
    /// The primary key.
    public var id = 0
    /// The customers whose `home` holds this city.
    public var residents = LinkingObjects<BehaviorCustomer>(property: "home")
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// An empty instance, as reflection makes them.
    public init() {}
}

/// Scores the aggregates check adds up: a signed integer, a narrow one whose sums overflow, a
/// `Double` (NaN and `-0.0` included), a string (canonically equivalent spellings included) and
/// an optional integer.
public struct BehaviorScore: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = 0
    /// Points, indexed.
    public var points = 0
    /// A narrow integer: two of 100 overflow an `Int8` sum.
    public var small: Int8 = 0
    /// A rating.
    public var rating = 0.0
    /// A label.
    public var label = ""
    /// A bonus, when there is one.
    public var bonus: Int?
    /// Twice the points: computed, so no aggregate can read it.
    public var doubled: Int { points * 2 }
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// `points`.
    public static var indexedProperties: [String] { ["points"] }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: Int, points: Int, small: Int8, rating: Double, label: String, bonus: Int?) {
        self.id = id
        self.points = points
        self.small = small
        self.rating = rating
        self.label = label
        self.bonus = bonus
    }
}

/// A label keyed by a string, which pins link to and keep (`.deny`).
public struct BehaviorLabel: Persistable, Hashable, Sendable {
    /// The primary key.
    public var id = ""
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with this key.
    public init(id: String) { self.id = id }
}

/// A device keyed by a UUID, which pins link to and keep (`.deny`).
public struct BehaviorDevice: Persistable, Hashable, Sendable {
    /// The primary key.
    public var id = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with this key.
    public init(id: UUID) { self.id = id }
}

/// A locker keyed by an unsigned integer, which leases link to and keep (`.deny`): keys past
/// `Int64.max` are named as their value.
public struct BehaviorLocker: Persistable, Hashable, Sendable {
    /// The primary key.
    public var id: UInt64 = 0
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with this key.
    public init(id: UInt64) { self.id = id }
}

/// A lease keyed by an unsigned integer, linking to a locker that cannot be deleted while it does.
public struct BehaviorLease: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id: UInt64 = 0
    /// The locker, kept while linked (`.deny`).
    public var locker: BehaviorLocker?
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// `locker` denies.
    public static var deleteRules: [String: DeleteRule] { ["locker": .deny] }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: UInt64, locker: BehaviorLocker?) {
        self.id = id
        self.locker = locker
    }
}

/// A pin keyed by a string, linking to a label and a device that cannot be deleted while it
/// does: the errors name string and UUID keys.
public struct BehaviorPin: Persistable, Equatable, Sendable {
    /// The primary key.
    public var id = ""
    /// A label, kept while linked (`.deny`).
    public var label: BehaviorLabel?
    /// A device, kept while linked (`.deny`).
    public var device: BehaviorDevice?
    /// `id`.
    public static var primaryKey: String? { "id" }
    /// `label` and `device` deny.
    public static var deleteRules: [String: DeleteRule] { ["label": .deny, "device": .deny] }
    /// An empty instance, as reflection makes them.
    public init() {}
    /// An instance with these values.
    public init(id: String, label: BehaviorLabel? = nil, device: BehaviorDevice? = nil) {
        self.id = id
        self.label = label
        self.device = device
    }
}
