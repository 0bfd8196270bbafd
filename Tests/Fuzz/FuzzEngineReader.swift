// libFuzzer entry point for the engine's log reader. Built by .ci/fuzz-engine.sh together with
// the engine's sources as one module (so it reaches the internal reader); not part of `swift test`.
//
// The first input byte picks how the rest is used:
//   0: the raw file image, header included;
//   1: a valid header followed by the raw bytes (so damage to units is explored directly);
//   2: a valid header followed by units built from the bytes with correct checksums, so the
//      fuzzer reaches the payload decoder, which it could never reach by guessing CRCs.
// For every input the reader must return or throw a StorageError; whatever it recovers must
// be readable, and must survive compaction and a rescan unchanged.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEngineReader(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let mode = input.first else { return 0 }
    let rest = Array(input.dropFirst())
    let image: [UInt8]
    switch mode % 3 {
    case 0: image = rest
    case 1: image = LogHeader().encoded() + rest
    default: image = LogHeader().encoded() + framedUnits(rest)
    }
    checkReader(image)
    return 0
}

/// Splits `bytes` into units: each chunk is a 1-byte length then that many payload bytes.
private func framedUnits(_ bytes: [UInt8]) -> [UInt8] {
    var log: [UInt8] = []
    var index = 0
    var sequence: UInt64 = 1
    while index < bytes.count {
        let length = min(Int(bytes[index]), bytes.count - index - 1)
        let payload = Array(bytes[(index + 1)..<(index + 1 + length)])
        log += LogFrame.encode(sequence: sequence, payload: payload)
        sequence += 1
        index += 1 + length
    }
    return log
}

private func checkReader(_ image: [UInt8]) {
    let log = MemoryLog(image)
    let recovered: RecoveredLog
    do {
        recovered = try Recovery.scan(log)
    } catch is StorageError {
        return
    } catch {
        fatalError("the reader threw a non-StorageError: \(error)")
    }
    let snapshot = EngineSnapshot(index: recovered.index, generation: log, sequence: recovered.lastSequence)
    var counts: [String: Int] = [:]
    for type in snapshot.typeNames {
        counts[type] = snapshot.count(type: type)
        let keys: [StorageKey]
        do {
            keys = try snapshot.keys(type: type)
        } catch is StorageError {
            // A damaged key-run block is found when it is read: a typed error, as the contract allows.
            return
        } catch {
            fatalError("listing keys threw a non-StorageError: \(error)")
        }
        for key in keys {
            do {
                _ = try snapshot.value(type: type, key: key)
            } catch {
                fatalError("a recovered index points outside the log: \(error)")
            }
        }
    }
    guard !recovered.needsHeader else { return }
    do {
        let compacted = try Compaction.compactMemory(index: recovered.index, from: log, lastSequence: recovered.lastSequence)
        let rescanned = try Recovery.scan(compacted.generation)
        guard rescanned.problem == nil, rescanned.lastSequence == recovered.lastSequence else {
            fatalError("a compacted log does not rescan cleanly: \(String(describing: rescanned.problem))")
        }
        let again = EngineSnapshot(index: rescanned.index, generation: compacted.generation, sequence: rescanned.lastSequence)
        for type in snapshot.typeNames {
            guard again.count(type: type) == counts[type], again.schema(type: type) == snapshot.schema(type: type) else {
                fatalError("compaction changed type \(type)")
            }
            for key in try snapshot.keys(type: type) {
                guard try again.value(type: type, key: key) == snapshot.value(type: type, key: key) else {
                    fatalError("compaction changed \(type) \(key)")
                }
            }
        }
    } catch {
        fatalError("compacting a recovered state failed: \(error)")
    }
}
