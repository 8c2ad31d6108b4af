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

    private var entries: [Key: Entry] = [:]
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
        guard let entry = entries[Key(id)] else { return nil }
        tick &+= 1
        entry.lastUse = tick
        return entry.session
    }

    /// The owner of cached session `id`, without copying the session or
    /// marking it used (the call that asks goes on to ``get(_:)``).
    func owner(of id: String) -> UInt32? { entries[Key(id)]?.session.record.owner }

    /// The state of cached session `id`, without copying the session.
    func state(of id: String) -> SessionState? { entries[Key(id)]?.session.record.state }

    /// The cached session without marking it used.
    func peek(_ id: String) -> FlowSession? { entries[Key(id)]?.session }

    /// The digests of session `id`'s announced values, if known.
    func announced(of id: String) -> PropertyDigests? { entries[Key(id)]?.announced }

    /// Where the store keeps cached session `id`'s row, when known.
    func row(of id: String) -> StoredRow? { entries[Key(id)]?.row }

    /// Keeps `row` as where the store keeps cached session `id`'s row;
    /// false when `id` is not cached.
    @discardableResult
    func setRow(_ row: StoredRow?, of id: String) -> Bool {
        guard let entry = entries[Key(id)] else { return false }
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
        if let entry = entries[Key(session.record.id)] {
            entry.session = session
            entry.announced = announced
            entry.lastUse = tick
            entry.version = puts
            return puts
        }
        entries[Key(session.record.id)] = Entry(session: session, announced: announced, lastUse: tick, version: puts)
        if entries.count > capacity { evict() }
        return puts
    }

    /// Keeps `announced` as the digests of session `id`'s values when the
    /// cache still holds the value `version` was returned for (a later
    /// change made them stale), without marking it used.
    func setAnnounced(_ announced: PropertyDigests, of id: String, version: UInt64) {
        guard let entry = entries[Key(id)], entry.version == version else { return }
        entry.announced = announced
    }

    /// Works out the values of session `id` with `values` and keeps their
    /// digests, when the cache still holds the value of `version` and knows
    /// none yet (a session just loaded or made).
    func settle(_ id: String, version: UInt64, values: (FlowSession) -> SessionProperties) {
        guard let entry = entries[Key(id)], entry.version == version, entry.announced == nil else { return }
        entry.announced = PropertyDigests(values(entry.session))
    }

    mutating func remove(_ id: String) {
        entries[Key(id)] = nil
    }

    /// Every cached id (for reload and shutdown).
    var ids: [String] { entries.keys.map(\.id) }

    /// Drops about a tenth of the capacity at once, oldest first, so the sort
    /// is paid once per many inserts.
    private mutating func evict() {
        let target = capacity - max(1, capacity / 10)
        let candidates = entries.filter { !$0.value.session.holdsSecureAnswers && $0.value.session.state != .submitting }
            .sorted { $0.value.lastUse < $1.value.lastUse }
        var excess = entries.count - target
        for (key, _) in candidates where excess > 0 {
            entries[key] = nil
            excess -= 1
        }
    }

    /// A session id as the cache's key, hashed from its last sixteen bytes
    /// without SipHash.
    ///
    /// A `SetAnswers` finds its session in the cache six times (to authorize,
    /// read, save, cache and announce it), and hashing a whole id (32
    /// characters) through `Hasher` cost about 400 instructions a time.
    /// Ids are 128 random bits as hex, made by flowd itself (a client only
    /// looks ids up, and a miss costs it nothing but the lookup), so the
    /// last sixteen characters carry 64 of those bits and need no keyed hash
    /// against chosen collisions: they are folded into a word and mixed, so
    /// that the table's low bits depend on every character. Other strings
    /// (tests make short ids) are hashed whole. Equality compares whole ids.
    struct Key: Hashable {
        let id: String

        init(_ id: String) { self.id = id }

        static func == (a: Key, b: Key) -> Bool { a.id == b.id }

        func hash(into hasher: inout Hasher) {
            hasher.combine(_rawHashValue(seed: 0))
        }

        /// What `Dictionary` asks for (the hook `Hashable` gives types that
        /// hash faster than `Hasher`); the seed varies the result per table.
        func _rawHashValue(seed: Int) -> Int {
            var id = id
            return id.withUTF8 { bytes -> Int in
                guard bytes.count >= 16 else {
                    var hasher = Hasher()
                    hasher.combine(seed)
                    hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
                    return hasher.finalize()
                }
                let raw = UnsafeRawBufferPointer(bytes)
                let high = raw.loadUnaligned(fromByteOffset: bytes.count - 16, as: UInt64.self)
                let low = raw.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self)
                // A multiply-xorshift mix (as in SplitMix64's finalizer).
                var x = (high &* 0x9E37_79B9_7F4A_7C15) ^ low ^ UInt64(bitPattern: Int64(seed))
                x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
                x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
                return Int(bitPattern: UInt(truncatingIfNeeded: x ^ (x >> 31)))
            }
        }
    }
}
