/// The first byte of every encoded value. Values are also read against their property's kind, so
/// a tag that does not fit the kind marks damaged or foreign bytes.
enum ValueTag: UInt8 {
    case null = 0
    case `false` = 1
    case `true` = 2
    case int = 3          // zigzag varint
    case uint = 4         // varint
    case float = 5        // 4 bytes, little-endian IEEE 754 bits
    case double = 6       // 8 bytes, little-endian IEEE 754 bits
    case string = 7       // varint length, UTF-8
    case data = 8         // varint length, bytes
    case date = 9         // 8 bytes: seconds since 2001-01-01 as a Double
    case uuid = 10        // 16 bytes
    case decimal = 11     // varint length, the decimal's canonical text
    case url = 12         // varint length, the absolute URL string
    case embedded = 13    // the linked record's values, in its schema's order
    case reference = 14   // the linked record's primary key
    case list = 15        // varint count, then the elements
    case dictionary = 16  // varint count, then key text and value per entry
}
