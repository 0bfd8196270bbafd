/// A key envelope as bytes (docs/FILE_FORMAT.md, "Encryption"). Little-endian:
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 4 | format tag `MSKE` |
/// | 4 | 1 | envelope version, 1 |
/// | 5 | 1 | derivation: 0 raw key, 1 PBKDF2-HMAC-SHA256 |
/// | 6 | 4 | iterations: 0 for a raw key, else within `PBKDF2.iterationRange` |
/// | 10 | 1 | salt length *s*: 0 for a raw key, else within `KeyEnvelope.saltByteRange` |
/// | 11 | *s* | salt |
/// | 11 + *s* | 12 | nonce |
/// | 23 + *s* | 48 | wrapped data key, then its tag |
/// | 71 + *s* | 4 | masked CRC32C of everything before |
///
/// Bytes 0..<11 + *s* are the wrap's associated data. The checksum tells damage (`corrupted`)
/// from a wrong passphrase (`wrongKey`, when the wrap's tag fails on intact bytes).
extension KeyEnvelope {
    /// `MSKE`: MirrorStore key envelope.
    static let formatTag: [UInt8] = [0x4D, 0x53, 0x4B, 0x45]
    static let currentVersion: UInt8 = 1
    /// Tag, version, derivation, iterations and salt length: the bytes before the salt.
    static let fixedHeaderByteCount = 11
    /// The smallest envelope: a raw-key one (no salt).
    static let minimumByteCount = fixedHeaderByteCount + AES256GCM.nonceByteCount + wrappedKeyByteCount + 4

    private enum DerivationID: UInt8 {
        case rawKey = 0
        case pbkdf2SHA256 = 1
    }

    /// The envelope's bytes.
    package func encoded() -> [UInt8] {
        var writer = ByteWriter()
        writer.bytes = Self.parameterBytes(derivation)
        writer.bytes.append(contentsOf: nonce)
        writer.bytes.append(contentsOf: wrappedKey)
        writer.uint32(CRC32C.mask(CRC32C.checksum(writer.bytes)))
        return writer.bytes
    }

    /// The bytes before the nonce, which the wrap authenticates: changing the derivation or its
    /// parameters makes the wrap fail.
    static func parameterBytes(_ derivation: Derivation) -> [UInt8] {
        var writer = ByteWriter()
        writer.bytes.append(contentsOf: formatTag)
        writer.byte(currentVersion)
        switch derivation {
        case .rawKey:
            writer.byte(DerivationID.rawKey.rawValue)
            writer.uint32(0)
            writer.byte(0)
        case .pbkdf2SHA256(let iterations, let salt):
            writer.byte(DerivationID.pbkdf2SHA256.rawValue)
            writer.uint32(iterations)
            writer.byte(UInt8(truncatingIfNeeded: salt.count))
            writer.bytes.append(contentsOf: salt)
        }
        return writer.bytes
    }

    /// Parses and checks an envelope that is exactly `bytes`, which start at `fileOffset` in the
    /// store at `path`. Any defect (a short or long envelope, a bad checksum, an unknown version
    /// or derivation, a salt length or iteration count out of range) is `corrupted` with the
    /// offset of the bad field; nothing here traps or allocates more than `bytes` holds.
    package static func decode(_ bytes: [UInt8], path: String, fileOffset: UInt64 = 0) throws(StorageError) -> KeyEnvelope {
        do throws(DecodeFailure) {
            return try parse(bytes)
        } catch {
            throw StorageError(.corrupted(path: path, offset: fileOffset &+ UInt64(error.offset), reason: error.reason))
        }
    }

    private static func parse(_ bytes: [UInt8]) throws(DecodeFailure) -> KeyEnvelope {
        guard bytes.count >= formatTag.count, Array(bytes[0..<formatTag.count]) == formatTag else {
            throw DecodeFailure(offset: 0, reason: "the key envelope does not start with its format tag")
        }
        guard bytes.count >= minimumByteCount else {
            throw DecodeFailure(offset: 0, reason: "the key envelope is \(bytes.count) bytes long, shorter than the \(minimumByteCount) of the smallest one")
        }
        // The checksum first, so that a flipped bit in any field reads as damage, not as an
        // unknown version or a wrong key.
        let checked = bytes.count - 4
        var checksumReader = ByteReader(bytes, from: checked)
        let stored = try checksumReader.uint32()
        let computed = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<checked])) }
        guard CRC32C.unmask(stored) == computed else {
            throw DecodeFailure(offset: checked, reason: "the key envelope's checksum does not match")
        }

        var reader = ByteReader(bytes, from: formatTag.count, to: fixedHeaderByteCount)
        let version = try reader.byte()
        guard version == currentVersion else {
            throw DecodeFailure(offset: 4, reason: "the key envelope has version \(version), which this MirrorStore does not know")
        }
        let derivationID = try reader.byte()
        let iterations = try reader.uint32()
        let saltLength = Int(try reader.byte())
        let saltStart = fixedHeaderByteCount
        switch DerivationID(rawValue: derivationID) {
        case .rawKey:
            guard iterations == 0 else {
                throw DecodeFailure(offset: 6, reason: "a raw-key envelope gives an iteration count (\(iterations))")
            }
            guard saltLength == 0 else {
                throw DecodeFailure(offset: 10, reason: "a raw-key envelope gives a salt (\(saltLength) bytes)")
            }
        case .pbkdf2SHA256:
            guard PBKDF2.iterationRange.contains(iterations) else {
                throw DecodeFailure(offset: 6, reason: "the key envelope's iteration count \(iterations) is outside \(PBKDF2.iterationRange.lowerBound)...\(PBKDF2.iterationRange.upperBound)")
            }
            guard saltByteRange.contains(saltLength) else {
                throw DecodeFailure(offset: 10, reason: "the key envelope's salt length \(saltLength) is outside \(saltByteRange.lowerBound)...\(saltByteRange.upperBound)")
            }
        case nil:
            throw DecodeFailure(offset: 5, reason: "the key envelope names key derivation \(derivationID), which this MirrorStore does not know")
        }
        // Every length is known now: the envelope must be exactly that long.
        let nonceStart = saltStart + saltLength
        let wrappedStart = nonceStart + AES256GCM.nonceByteCount
        let end = wrappedStart + wrappedKeyByteCount + 4
        guard bytes.count == end else {
            throw DecodeFailure(offset: min(end, bytes.count), reason: "the key envelope is \(bytes.count) bytes long where its salt length makes it \(end)")
        }
        let salt = Array(bytes[saltStart..<nonceStart])
        let derivation: Derivation = derivationID == DerivationID.rawKey.rawValue
            ? .rawKey : .pbkdf2SHA256(iterations: iterations, salt: salt)
        return KeyEnvelope(
            derivation: derivation,
            nonce: Array(bytes[nonceStart..<wrappedStart]),
            wrappedKey: Array(bytes[wrappedStart..<(wrappedStart + wrappedKeyByteCount)]))
    }
}
