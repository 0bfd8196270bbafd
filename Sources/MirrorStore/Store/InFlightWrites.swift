import MirrorStoreEngine

/// The write transactions submitted to the engine and not yet durable, oldest first.
///
/// The next transaction reads through their writes instead of waiting for their sync, so
/// transactions from many threads run while earlier ones sync, and the engine writes the waiting
/// batches behind one shared sync (group commit). Each entry leaves once its commit is finished:
/// by then the engine has published it (or refused it), and a new snapshot shows what it wrote.
final class InFlightWrites: Sendable {
    private struct Entry: @unchecked Sendable {
        // @unchecked: the writes belong to a transaction that has ended; nothing changes them again.
        let ticket: CommitTicket
        let writes: PendingWrites
    }

    private let entries = Lock<[Entry]>([])

    /// The writes still in flight, oldest first, and the ticket of the newest: a transaction
    /// that reads them depends on it. Take this before the snapshot it is laid over, so that a
    /// commit finishing in between is in the snapshot (writes read twice are the same writes).
    ///
    /// Only the finished entries before the first unfinished one leave. Tickets finish in commit
    /// order, but while a group is being finished this check can see an earlier entry still
    /// running and a later one done; dropping the later one would lay the earlier, older writes
    /// over a snapshot that already has the newer ones. Kept, it is simply read twice.
    func current() -> (writes: [PendingWrites], newest: CommitTicket?) {
        entries.withLock { entries in
            entries.removeFirst(entries.firstIndex { !$0.ticket.isFinished } ?? entries.count)
            return (entries.map(\.writes), entries.last?.ticket)
        }
    }

    /// Lets the writes `writes` names, whose commit the engine has just published, leave now with
    /// those before them (published with or before them, or refused), rather than at the next
    /// `current()`: every snapshot taken from now on shows them, and a transaction that read
    /// through them holds them itself. A streamed transaction's table of where its records lie is
    /// so freed before the checkpoint that follows its commit, instead of lying beside the
    /// engine's copy of the same keys until the next transaction.
    func published(_ writes: ObjectIdentifier) {
        entries.withLock { entries in
            guard let position = entries.firstIndex(where: { ObjectIdentifier($0.writes) == writes }) else { return }
            entries.removeFirst(position + 1)
        }
    }

    func add(_ ticket: CommitTicket, writes: PendingWrites) {
        entries.withLock { $0.append(Entry(ticket: ticket, writes: writes)) }
    }
}
