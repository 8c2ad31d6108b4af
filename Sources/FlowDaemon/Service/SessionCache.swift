import FlowEngine

/// The sessions held in memory: a bounded, least-recently-used cache over the
/// store, so memory does not grow with the number of stored sessions.
///
/// A session that holds secure answers is never evicted: those answers exist
/// only in memory, and dropping them would make the person type them again.
/// Such sessions are bounded by the per-user and total session limits.
struct SessionCache {
    private struct Entry {
        var session: FlowSession
        /// The session's property values as last announced, when known: the
        /// "before" of its next change, so a change computes them once.
        var properties: SessionProperties?
        var lastUse: UInt64
    }

    private var entries: [String: Entry] = [:]
    private var tick: UInt64 = 0
    /// How many sessions are kept before the least recently used are dropped.
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    var count: Int { entries.count }

    /// The cached session, marking it used.
    mutating func get(_ id: String) -> FlowSession? {
        guard var entry = entries[id] else { return nil }
        tick &+= 1
        entry.lastUse = tick
        entries[id] = entry
        return entry.session
    }

    /// The cached session without marking it used.
    func peek(_ id: String) -> FlowSession? { entries[id]?.session }

    /// The property values stored with session `id` by ``put(_:properties:)``, if any.
    func properties(of id: String) -> SessionProperties? { entries[id]?.properties }

    /// Stores `session` (with `properties`, its values, when the caller has
    /// them), evicting the least recently used unpinned sessions when over
    /// capacity.
    mutating func put(_ session: FlowSession, properties: SessionProperties? = nil) {
        tick &+= 1
        entries[session.record.id] = Entry(session: session, properties: properties, lastUse: tick)
        if entries.count > capacity { evict() }
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
