/// The uid behind each sender, looked up once per client with
/// `GetConnectionUnixUser` and forgotten when the client disconnects
/// (`NameOwnerChanged` with no new owner).
///
/// This is what the daemon needs to authorize calls by uid without a bus round
/// trip per call: the first call of a client waits for one lookup, the rest
/// are answered from the cache synchronously. Concurrent lookups of one name
/// share a single bus call. Unique names are never reused, so an entry can
/// only be stale for a client that is already gone.
///
/// Loop thread only (the connection must be attached).
package final class UnixUserCache: @unchecked Sendable {
    private let connection: Connection
    private var users: [BusName: UInt32] = [:]
    private var waiting: [BusName: [@Sendable (Result<UInt32, DBusError>) -> Void]] = [:]
    private var goneWhileWaiting: Set<BusName> = []
    private var subscription: SignalSubscription?

    /// Starts watching `NameOwnerChanged` on `connection`.
    package init(connection: Connection) {
        self.connection = connection
        subscription = connection.onNameOwnerChanged { [weak self] change in
            guard let self, change.isClientGone else { return }
            self.users[change.name] = nil
            if self.waiting[change.name] != nil { self.goneWhileWaiting.insert(change.name) }
        }
    }

    deinit {
        subscription?.cancel()
    }

    /// How many senders are cached.
    package var count: Int { users.count }

    /// The cached uid of `sender`, without asking the bus.
    package func cachedUnixUser(of sender: BusName) -> UInt32? {
        users[sender]
    }

    /// The uid of `sender`. When cached, `completion` runs **synchronously**
    /// before this returns (the fast path of a method handler); otherwise on
    /// the loop thread once the bus answers. Errors are not cached: fail
    /// closed and let the next call ask again.
    package func unixUser(of sender: BusName, completion: @escaping @Sendable (Result<UInt32, DBusError>) -> Void) {
        connection.requireLoopThread()
        if let uid = users[sender] {
            completion(.success(uid))
            return
        }
        if waiting[sender] != nil {
            waiting[sender]?.append(completion)
            return
        }
        waiting[sender] = [completion]
        connection.unixUser(of: sender) { [weak self] result in
            guard let self else { return }
            let waiters = self.waiting.removeValue(forKey: sender) ?? []
            let gone = self.goneWhileWaiting.remove(sender) != nil
            if case .success(let uid) = result, !gone, sender.isUnique { self.users[sender] = uid }
            for waiter in waiters { waiter(result) }
        }
    }

    /// Drops what is cached about `sender`.
    package func forget(_ sender: BusName) {
        users[sender] = nil
    }
}
