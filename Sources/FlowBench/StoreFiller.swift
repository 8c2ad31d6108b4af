import FlowDaemon
import FlowEngine
import FlowKit
import FlowProtocol
import FlowStore
import FlowdSystem

/// Writes stored sessions straight into flowd's SQLite store, as the
/// daemon's rows (`SessionRepository.stored`), while flowd is not running.
///
/// Much faster than `StartSession` calls for 100,000 sessions, and the rows
/// are indistinguishable from the daemon's own: flowd decodes and restores
/// them like any other.
struct StoreFiller {
    /// The flow every filled session runs.
    let flow: FlowDefinition
    /// The uid that owns them (the benchmark's own, so it may call them).
    let owner: UInt32
    let databasePath: String

    /// A clock fixed at the real time, so `createdAt`/`updatedAt` look recent
    /// (idle expiry must not delete the sessions during the run).
    private let clock: FixedClock
    /// The same clock `idleAge` earlier, for the sessions filled as idle.
    private let idleClock: FixedClock

    /// How long before the fill the sessions filled as idle were last
    /// written: four times what keeps a session's idle-period entry in
    /// place (about 67 minutes), far below flowd's idle timeout (7 days).
    static let idleAge = 4 * SessionStore.idleEntryStays

    init(flow: FlowDefinition, owner: UInt32, databasePath: String) {
        self.flow = flow
        self.owner = owner
        self.databasePath = databasePath
        guard let today = CivilDate(year: 2025, month: 1, day: 1) else { preconditionFailure("2025-01-01 is a date") }
        clock = FixedClock(now: WallClock.microsecondsSinceEpoch(), today: today)
        idleClock = FixedClock(now: clock.now - Self.idleAge, today: today)
    }

    /// The time the sessions are filled at (µs since the epoch): their
    /// `updatedAt`, except the idle ones'.
    var filledAt: Int64 { clock.now }

    /// Adds sessions until the store holds `total`; returns the ids of the
    /// sessions added. Sessions sit on the flow's first step; every other one
    /// has its first field answered, so payloads differ a little as in life.
    /// The sessions added at the positions in `idle` (counted among those
    /// added) were last written ``idleAge`` before the others.
    func fill(to total: Int, idle: Range<Int> = 0..<0, generator: inout some RandomNumberGenerator) throws(BenchError) -> [String] {
        let store: SessionStore
        do {
            store = try SessionStore(path: databasePath)
        } catch {
            throw .store("cannot open \(databasePath): \(error.message)")
        }
        defer { try? store.close() }
        let existing: Int
        do {
            existing = try store.count()
        } catch {
            throw .store("cannot count the stored sessions: \(error.message)")
        }
        let firstField = flow.steps.first?.fields.first
        var ids: [String] = []
        ids.reserveCapacity(max(0, total - existing))
        var batch: [StoredSession] = []
        var index = existing
        while index < total {
            let id = SessionID.make(using: &generator)
            var session: FlowSession
            do {
                let sessionClock = idle.contains(index - existing) ? idleClock : clock
                session = try FlowSession(flow: flow, id: id, owner: owner, locale: "en", clock: sessionClock)
                if index % 2 == 1, let field = firstField, let option = field.options.first {
                    _ = try session.setAnswers([field.id: .text(option.id)], now: sessionClock.now)
                }
            } catch {
                throw .store("cannot make a session of \(flow.id): \(error.message)")
            }
            do {
                batch.append(try SessionRepository.stored(session.record))
            } catch {
                throw .store(error.message)
            }
            ids.append(id)
            index += 1
            if batch.count == 2000 || index == total {
                let rows = batch
                do {
                    try store.transaction { tx throws(StoreError) in
                        for row in rows { try tx.upsert(row) }
                    }
                } catch {
                    throw .store("cannot write sessions: \(error.message)")
                }
                batch.removeAll(keepingCapacity: true)
            }
        }
        do {
            // Leave a small WAL behind, as a daemon that ran a while would.
            try store.checkpoint()
        } catch {
            throw .store("cannot checkpoint the store: \(error.message)")
        }
        return ids
    }
}
