import FlowEngine
import FlowProtocol
import FlowStore
import FoundationEssentials
import Logging

/// Where the service's sessions live: the least-recently-used cache
/// (``SessionCache``) over the store, the stored record's encoding and
/// decoding, restoring a session from its record, and marking a submit that
/// a stop interrupted.
///
/// A session is cached from its first call on; the store is read only on a
/// miss. Every write goes to the store first: a change that could not be
/// written is not made.
package struct SessionRepository {
    let store: SessionStore
    private var cache: SessionCache
    private let clock: any EngineClock
    private let logger: Logger
    private let decoder = JSONDecoder()
    /// Sessions cached by a load or made since the last ``settle()``, with
    /// their cache versions: their values are worked out after the reply.
    /// At most ``unsettledLimit``: a call that reads many sessions
    /// (`GetManagedObjects`) leaves the rest to their first change.
    private var unsettled: [(id: String, version: UInt64)] = []
    /// Where the store keeps the row of a session not cached yet (a new one
    /// saved before it is cached, one being loaded), until it is cached.
    private var pendingRow: (id: String, row: StoredRow)?
    private static let unsettledLimit = 64

    /// Whether sessions wait for ``settle()``.
    var hasUnsettled: Bool { !unsettled.isEmpty }

    /// Sessions kept in memory before the least recently used are dropped
    /// (they stay stored and are read back on their next call).
    ///
    /// A session in memory costs about 1 KiB of resident memory (measured
    /// by flowd-bench, docs/performance.md), so 16,384 of them cost about
    /// 16 MiB at most. Fewer made a call to a session outside the cache pay a
    /// store read, a JSON decode and a restore (about 60 µs) whenever more
    /// than a few thousand sessions were in use at once.
    static let defaultCacheCapacity = 16_384

    init(store: SessionStore, clock: any EngineClock, logger: Logger, cacheCapacity: Int = Self.defaultCacheCapacity) {
        self.store = store
        self.cache = SessionCache(capacity: cacheCapacity)
        self.clock = clock
        self.logger = logger
    }

    // MARK: - Reading

    /// The session `id`, from the cache or else the store.
    ///
    /// A stored session found `submitting` was interrupted by a stop (a
    /// session whose submit runs is always cached: the cache never drops
    /// it): it is marked failed "interrupted" and saved, never submitted
    /// again on the daemon's own.
    ///
    /// - Throws: `NotFound` for an unknown id or a session whose flow is no
    ///   longer in `flows`; `Failed` when the store cannot be read.
    mutating func session(_ id: String, flows: FlowCatalog) throws(FlowdError) -> FlowSession {
        if let cached = cache.get(id) { return cached }
        guard SessionID.isValid(id) else { throw .notFound("no session \"\(id)\"") }
        let loaded: (session: StoredSession, row: StoredRow)?
        do {
            loaded = try store.loadRow(id: id)
        } catch {
            throw .failed("cannot read session \(id): \(error)")
        }
        guard let (stored, row) = loaded else { throw .notFound("no session \"\(id)\"") }
        guard let flow = flows.flow(stored.flowID) else {
            throw .notFound("session \(id) runs flow \"\(stored.flowID)\", which is no longer installed")
        }
        let record = try record(from: stored)
        var session: FlowSession
        do {
            session = try FlowSession(restoring: record, flow: flow, clock: clock)
        } catch {
            throw FlowdError(error)
        }
        pendingRow = (id, row)
        if session.state == .submitting {
            session.markInterrupted(now: clock.now)
            try save(session)
            logger.warning(
                "submit of session \(id) was interrupted by a restart", id: .submitFailed,
                metadata: [.session: id, .flow: flow.id])
        }
        let version = cache.put(session)
        adoptPendingRow(of: id)
        if unsettled.count < Self.unsettledLimit { unsettled.append((id, version)) }
        return session
    }

    /// The owner of session `id` when it is cached (nil: not cached).
    func cachedOwner(of id: String) -> UInt32? { cache.owner(of: id) }

    /// The cached session without marking it used.
    func cached(_ id: String) -> FlowSession? { cache.peek(id) }

    /// Every cached id.
    var cachedIDs: [String] { cache.ids }

    /// Where a change of `session`, a value just read, starts.
    ///
    /// `mutating` though it changes nothing, as ``save(_:)``: the service
    /// calls both on its stored repository, and a non-mutating call on an
    /// actor's property first copied the repository (its references
    /// retained and released again, some 450 instructions a call).
    mutating func changeStart(_ session: borrowing FlowSession) -> ChangeStart {
        ChangeStart(session, announced: cache.announced(of: session.record.id))
    }

    /// How many sessions the cache holds at most.
    var cacheCapacity: Int { cache.capacity }

    /// The digests of cached session `id`'s announced values, when known.
    func announced(of id: String) -> PropertyDigests? { cache.announced(of: id) }

    /// Keeps the digests of the values of the sessions loaded or made since
    /// the last call (unless a change since made them known): the "before"
    /// of their first change. Runs after the reply of the call that loaded
    /// them, as the events do, so a session's first change compares with
    /// these instead of working out its values before the change too.
    mutating func settle() {
        guard !unsettled.isEmpty else { return }
        for (id, version) in unsettled { cache.settle(id, version: version) { SessionProperties($0) } }
        unsettled.removeAll(keepingCapacity: true)
    }

    // MARK: - Writing

    /// Writes `session` to the store. Nothing else changes when this throws.
    ///
    /// The store finds the row by where it was (``SessionCache/row(of:)``)
    /// when known, and says where it is now, kept for the next change
    /// (`mutating` for that, and to be called in place: see ``changeStart(_:)``).
    mutating func save(_ session: borrowing FlowSession) throws(FlowdError) {
        let stored = try Self.stored(session.record)
        let known = cache.row(of: stored.id) ?? pendingRow.flatMap { $0.id == stored.id ? $0.row : nil }
        let row: StoredRow?
        do {
            row = try store.upsert(stored, row: known)
        } catch {
            logger.error("cannot save session \(stored.id): \(error.description)", metadata: [.session: stored.id])
            throw .failed("the change could not be saved; it was not made")
        }
        guard row != known else { return }
        if !cache.setRow(row, of: stored.id) { pendingRow = row.map { (stored.id, $0) } }
    }

    /// Gives the cached session `id` the row a save or load learned before
    /// it was cached.
    private mutating func adoptPendingRow(of id: String) {
        guard let pending = pendingRow else { return }
        if pending.id == id { cache.setRow(pending.row, of: id) }
        pendingRow = nil
    }

    /// Makes `session` the cached value (with `announced`, the digests of
    /// its values, when known); returns the version ``keep(_:of:version:)``
    /// takes. A new session (`isNew`) has its values worked out by the next
    /// ``settle()``.
    @discardableResult
    mutating func cache(_ session: FlowSession, announced: PropertyDigests? = nil, isNew: Bool = false) -> UInt64 {
        let version = cache.put(session, announced: announced)
        adoptPendingRow(of: session.record.id)
        if isNew, unsettled.count < Self.unsettledLimit { unsettled.append((session.record.id, version)) }
        return version
    }

    /// Keeps `announced` as the digests of session `id`'s announced values
    /// if the cache still holds the value of `version`.
    func keep(_ announced: PropertyDigests, of id: String, version: UInt64) {
        cache.setAnnounced(announced, of: id, version: version)
    }

    /// Drops session `id` from the cache only (it stays stored).
    mutating func forget(_ id: String) {
        cache.remove(id)
    }

    /// Deletes session `id`. Returns whether it was stored, its owner when
    /// that was known (cached) and whether the cached session was submitted.
    mutating func delete(_ id: String) throws(FlowdError) -> (deleted: Bool, owner: UInt32?, settled: Bool) {
        let deleted: Bool
        do {
            deleted = try store.delete(id: id)
        } catch {
            throw .failed("cannot delete session \(id): \(error)")
        }
        let owner = cache.owner(of: id)
        let settled = cache.state(of: id) == .submitted
        cache.remove(id)
        return (deleted, owner, settled)
    }

    // MARK: - The stored record

    /// The store's row for `record`: its indexed columns, and the record as
    /// JSON (written directly, the JSON `JSONEncoder` would make, at a tenth
    /// of the cost: ``SessionRecord/encodedJSON()``). flowd-bench fills
    /// stores with the same rows.
    package static func stored(_ record: SessionRecord) throws(FlowdError) -> StoredSession {
        let payload: [UInt8]
        do {
            payload = try record.encodedJSON()
        } catch {
            throw .failed("cannot encode session \(record.id): \(error)")
        }
        return StoredSession(
            id: record.id, owner: record.owner, flowID: record.flowID, state: record.state.rawValue,
            createdAt: record.createdAt, updatedAt: record.updatedAt, payload: payload)
    }

    /// The record a stored row holds, the inverse of ``stored(_:)``.
    func record(from stored: StoredSession) throws(FlowdError) -> SessionRecord {
        do {
            return try decoder.decode(SessionRecord.self, from: Data(stored.payload))
        } catch {
            throw .failed("the stored state of session \(stored.id) cannot be read: \(error)")
        }
    }
}
