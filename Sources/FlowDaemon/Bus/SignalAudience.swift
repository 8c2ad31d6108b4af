import DBus

/// Who receives a session's signals.
struct SignalAudience {
    enum Delivery {
        /// Everyone on the bus (a per-user session bus has one user anyway).
        case broadcast
        /// Unicast to the connections of the session's owner (and root) that
        /// have called the session: on the system bus, another user must not
        /// see someone's answers go by.
        case callers
    }

    let delivery: Delivery
    /// Session id → connections that called it (only with `.callers`).
    private var watchers: [String: Set<BusName>] = [:]
    /// Connection → sessions it watches, to forget it when it disconnects.
    private var watching: [BusName: Set<String>] = [:]
    /// Connections that asked for `GetManagedObjects`, with their uid: they
    /// also watch the sessions their uid starts later (root: every one).
    private var managing: [BusName: UInt32] = [:]

    init(delivery: Delivery) {
        self.delivery = delivery
    }

    /// `sender` was let into session `id`.
    mutating func add(_ sender: BusName, watching id: String) {
        guard delivery == .callers else { return }
        if watchers[id, default: []].insert(sender).inserted {
            watching[sender, default: []].insert(id)
        }
    }

    /// `sender`, of `uid`, asked for the managed objects: it watches
    /// `sessions` (those it was given) and, from now on, every session
    /// its uid starts (``adopt(_:owner:)``).
    mutating func add(manager sender: BusName, uid: UInt32, watching sessions: [String]) {
        guard delivery == .callers else { return }
        managing[sender] = uid
        for id in sessions { add(sender, watching: id) }
    }

    /// Session `id` of `owner` was started: the connections of that uid (or
    /// root's) that manage objects watch it, before its first signal.
    mutating func adopt(_ id: String, owner: UInt32) {
        for (sender, uid) in managing where uid == owner || uid == 0 { add(sender, watching: id) }
    }

    /// `sender` left the bus.
    mutating func forget(_ sender: BusName) {
        managing[sender] = nil
        guard let ids = watching.removeValue(forKey: sender) else { return }
        for id in ids {
            watchers[id]?.remove(sender)
            if watchers[id]?.isEmpty == true { watchers[id] = nil }
        }
    }

    /// Session `id` is gone.
    mutating func remove(session id: String) {
        guard let gone = watchers.removeValue(forKey: id) else { return }
        for sender in gone { watching[sender]?.remove(id) }
    }

    /// The destinations of a session's signals: `[nil]` broadcasts.
    func destinations(of id: String) -> [BusName?] {
        switch delivery {
        case .broadcast: return [nil]
        case .callers: return (watchers[id] ?? []).sorted().map { $0 }
        }
    }
}
