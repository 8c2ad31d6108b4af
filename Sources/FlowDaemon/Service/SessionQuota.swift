/// The session limits of the configuration, kept without reading the store
/// at every `StartSession`: the live sessions in all, per uid, and the ones
/// being started (waiting for their providers), so that concurrent starts
/// cannot pass a limit together.
struct SessionQuota {
    /// Live sessions, all uids (the store's count is read once, at start).
    private(set) var total: Int
    /// Sessions being started, per uid.
    private var starting: [UInt32: Int] = [:]
    /// Live sessions per uid, as far as known (``reserve(for:limits:countOwned:)``).
    private var owned: [UInt32: Int] = [:]

    init(total: Int) {
        self.total = total
    }

    /// Takes a slot for a new session of `uid`, refusing it when the daemon
    /// or the uid holds its maximum. Give it back with ``release(for:)`` once
    /// the session was made (``added(for:)``) or not.
    ///
    /// A uid's count comes from `countOwned` the first time (a range count
    /// on the store's owner index, as long as the uid's sessions: a uid with
    /// 100,000 sessions made every `StartSession` scan them), then is kept by
    /// ``added(for:)`` and ``removed(ownedBy:)``.
    mutating func reserve(
        for uid: UInt32, limits: SessionLimits, countOwned: (UInt32) throws(FlowdError) -> Int
    ) throws(FlowdError) {
        let startingTotal = starting.values.reduce(0, +)
        guard total + startingTotal < limits.maxSessions else {
            throw .limitExceeded("the daemon holds its maximum of \(limits.maxSessions) sessions")
        }
        let known: Int
        if let count = owned[uid] {
            known = count
        } else {
            known = try countOwned(uid)
            owned[uid] = known
        }
        guard known + starting[uid, default: 0] < limits.maxSessionsPerUser else {
            throw .limitExceeded("uid \(uid) already has the maximum of \(limits.maxSessionsPerUser) sessions")
        }
        starting[uid, default: 0] += 1
    }

    /// Gives back the slot ``reserve(for:limits:countOwned:)`` took.
    mutating func release(for uid: UInt32) {
        let n = starting[uid, default: 1] - 1
        starting[uid] = n > 0 ? n : nil
    }

    /// A session of `uid` was made.
    mutating func added(for uid: UInt32) {
        total += 1
        if let count = owned[uid] { owned[uid] = count + 1 }
    }

    /// A session was deleted; `owner` is nil when it was not known, and
    /// `counted` says whether it counted toward its owner's limit (a settled
    /// session does not).
    mutating func removed(ownedBy owner: UInt32?, counted: Bool) {
        total = max(0, total - 1)
        if let owner {
            if counted, let count = owned[owner] { owned[owner] = max(0, count - 1) }
        } else {
            owned.removeAll()  // not known here: count again when needed
        }
    }

    /// A session of `owner` settled: it no longer counts toward their limit.
    /// Kept exact rather than forgotten, since counting again reads every one
    /// of the owner's rows (a `StartSession` after each submit paid that).
    mutating func settled(ownedBy owner: UInt32) {
        if let count = owned[owner] { owned[owner] = max(0, count - 1) }
    }

    /// Forgets the per-uid counts (at every expiry pass), so a change made
    /// to the store by hand counts within a minute.
    mutating func forgetOwners() {
        owned.removeAll()
    }
}
