import FlowEngine
import FlowProtocol
import FlowStore

/// The sessions held in memory: a bounded, least-recently-used cache over the
/// store, so memory does not grow with the number of stored sessions.
///
/// A session that holds secure answers is never evicted: those answers exist
/// only in memory, and dropping them would make the person type them again.
/// Such sessions are bounded by the per-user and total session limits.
struct SessionCache {
    /// A class, so that marking a use or reading one field changes or copies
    /// nothing else: every call of the D-Bus API reads its session twice (to
    /// authorize, then to act), and a `FlowSession` is a value of some twenty
    /// references.
    private final class Entry {
        var session: FlowSession
        /// The session's property values as clients last heard them (or as
        /// they were when it was loaded or made), as digests: the "before"
        /// of its next change, so a change works out its "after" only.
        var announced: PropertyDigests?
        var lastUse: UInt64
        /// Which ``SessionCache/put(_:announced:)`` stored this value: digests
        /// worked out later for it are kept only if it is still the same.
        var version: UInt64
        /// Where the store keeps the session's row, when known: its next
        /// save finds the row by it (``SessionStore/upsert(_:row:)``).
        var row: StoredRow?

        init(session: FlowSession, announced: PropertyDigests?, lastUse: UInt64, version: UInt64) {
            self.session = session
            self.announced = announced
            self.lastUse = lastUse
            self.version = version
        }
    }

    private var entries: [String: Entry] = [:]
    private var tick: UInt64 = 0
    private var puts: UInt64 = 0
    /// How many sessions are kept before the least recently used are dropped.
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    var count: Int { entries.count }

    /// The cached session, marking it used.
    mutating func get(_ id: String) -> FlowSession? {
        guard let entry = entries[id] else { return nil }
        tick &+= 1
        entry.lastUse = tick
        return entry.session
    }

    /// The owner of cached session `id`, without copying the session or
    /// marking it used (the call that asks goes on to ``get(_:)``).
    func owner(of id: String) -> UInt32? { entries[id]?.session.record.owner }

    /// The state of cached session `id`, without copying the session.
    func state(of id: String) -> SessionState? { entries[id]?.session.record.state }

    /// The cached session without marking it used.
    func peek(_ id: String) -> FlowSession? { entries[id]?.session }

    /// The digests of session `id`'s announced values, if known.
    func announced(of id: String) -> PropertyDigests? { entries[id]?.announced }

    /// Where the store keeps cached session `id`'s row, when known.
    func row(of id: String) -> StoredRow? { entries[id]?.row }

    /// Keeps `row` as where the store keeps cached session `id`'s row;
    /// false when `id` is not cached.
    @discardableResult
    func setRow(_ row: StoredRow?, of id: String) -> Bool {
        guard let entry = entries[id] else { return false }
        entry.row = row
        return true
    }

    /// Stores `session` (with `announced`, the digests of its values, when
    /// the caller has them), evicting the least recently used unpinned
    /// sessions when over capacity. Returns the version of the stored value
    /// (``setAnnounced(_:of:version:)``).
    @discardableResult
    mutating func put(_ session: FlowSession, announced: PropertyDigests? = nil) -> UInt64 {
        tick &+= 1
        puts &+= 1
        if let entry = entries[session.record.id] {
            entry.session = session
            entry.announced = announced
            entry.lastUse = tick
            entry.version = puts
            return puts
        }
        entries[session.record.id] = Entry(session: session, announced: announced, lastUse: tick, version: puts)
        if entries.count > capacity { evict() }
        return puts
    }

    /// Keeps `announced` as the digests of session `id`'s values when the
    /// cache still holds the value `version` was returned for (a later
    /// change made them stale), without marking it used.
    func setAnnounced(_ announced: PropertyDigests, of id: String, version: UInt64) {
        guard let entry = entries[id], entry.version == version else { return }
        entry.announced = announced
    }

    /// Works out the values of session `id` with `values` and keeps their
    /// digests, when the cache still holds the value of `version` and knows
    /// none yet (a session just loaded or made).
    func settle(_ id: String, version: UInt64, values: (FlowSession) -> SessionProperties) {
        guard let entry = entries[id], entry.version == version, entry.announced == nil else { return }
        entry.announced = PropertyDigests(values(entry.session))
    }

    mutating func remove(_ id: String) {
        entries[id] = nil
    }

    /// Every cached id (for reload and shutdown).
    var ids: [String] { Array(entries.keys) }

    /// Drops about a tenth of the capacity at once, oldest first, so the sort
    /// is paid once per many inserts.
    private mutating func evict() {
        let target = capacity - max(1, capacity / 10)
        let candidates = entries.filter { !$0.value.session.holdsSecureAnswers && $0.value.session.state != .submitting }
            .sorted { $0.value.lastUse < $1.value.lastUse }
        var excess = entries.count - target
        for (id, _) in candidates where excess > 0 {
            entries[id] = nil
            excess -= 1
        }
    }
}
