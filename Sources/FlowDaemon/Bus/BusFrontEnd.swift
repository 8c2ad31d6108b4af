import DBus
import FlowEngine
import FlowKit
import FlowProtocol
import Reactor
import Logging

/// The D-Bus side of the daemon: the Manager object, the session object tree,
/// caller identity, and turning the service's events into signals.
///
/// Every handler runs on the event loop thread and follows the same order:
/// parse the arguments → check their bounds → authorize the caller (the
/// registration's authorizer, before the handler) → act (the service) →
/// reply → emit the signals the action queued.
///
/// Loop-confined: created, used and destroyed on the loop thread.
final class BusFrontEnd: @unchecked Sendable {
    /// Who receives a session's signals.
    enum SignalDelivery {
        /// Everyone on the bus (a per-user session bus has one user anyway).
        case broadcast
        /// Unicast to the connections of the session's owner (and root) that
        /// have called the session: on the system bus, another user must not
        /// see someone's answers go by.
        case callers
    }

    let connection: Connection
    let server: ObjectServer
    let users: UnixUserCache
    let service: FlowService
    let loop: EventLoop
    let logger: Logger
    let delivery: SignalDelivery
    let version: String
    /// `ListPlugins` entries, fixed at start (plugins load once).
    let plugins: [PluginSummary]
    /// Called for `Reload`: re-reads the configuration files; returns the
    /// problem as text when they are bad (the old configuration then stays).
    let reloadConfiguration: () -> Result<Void, FlowdError>

    /// Session id → connections that called it (only with `.callers`).
    private var watchers: [String: Set<BusName>] = [:]
    /// Connection → sessions it watches, to forget it when it disconnects.
    private var watching: [BusName: Set<String>] = [:]
    private var nameWatch: SignalSubscription?

    init(
        connection: Connection, loop: EventLoop, service: FlowService, logger: Logger, delivery: SignalDelivery,
        version: String, plugins: [PluginSummary], reloadConfiguration: @escaping () -> Result<Void, FlowdError>
    ) {
        self.connection = connection
        self.loop = loop
        self.server = ObjectServer(connection: connection)
        self.users = UnixUserCache(connection: connection)
        self.service = service
        self.logger = logger
        self.delivery = delivery
        self.version = version
        self.plugins = plugins
        self.reloadConfiguration = reloadConfiguration
    }

    /// Exports the Manager and the session tree.
    func export() throws(DBusError) {
        try server.export(
            ManagerObject(front: self), at: FlowBus.managerPath, interfaces: [ManagerInterface.table],
            authorize: { object, call, proceed in object.front.identify(call, proceed) })
        try server.exportTree(
            under: FlowBus.sessionPrefix, interfaces: [SessionInterface.table],
            authorize: { object, call, proceed in object.front.authorize(object, call, proceed) },
            children: { _ in [] },
            resolve: { [weak self] path in
                guard let self, let id = FlowBus.sessionID(of: path) else { return nil }
                return SessionObject(id: id, front: self)
            })
        if delivery == .callers {
            nameWatch = connection.onNameOwnerChanged { [weak self] change in
                guard let self, change.isClientGone else { return }
                self.forgetWatcher(change.name)
            }
        }
    }

    // MARK: - Caller identity and authorization

    /// Manager calls: look up the caller's uid (cached after the first call),
    /// refusing when it cannot be read.
    private func identify(_ call: MethodInvocation, _ proceed: @escaping @Sendable (DBusError?) -> Void) {
        guard let sender = call.sender else {
            proceed(FlowdError.accessDenied("the caller has no bus name").dbusError)
            return
        }
        users.unixUser(of: sender) { result in
            switch result {
            case .success: proceed(nil)
            case .failure(let error):
                proceed(FlowdError.accessDenied("cannot determine the caller's uid: \(error.message)").dbusError)
            }
        }
    }

    /// Session calls: the caller must own the session or be root.
    private func authorize(
        _ object: SessionObject, _ call: MethodInvocation, _ proceed: @escaping @Sendable (DBusError?) -> Void
    ) {
        guard let sender = call.sender else {
            proceed(FlowdError.accessDenied("the caller has no bus name").dbusError)
            return
        }
        // A known caller (every call after its first) is decided here,
        // without handing a completion to the uid cache.
        if let uid = users.cachedUnixUser(of: sender) {
            decide(object, sender: sender, uid: uid, proceed)
            return
        }
        users.unixUser(of: sender) { [self] result in
            switch result {
            case .failure(let error):
                proceed(FlowdError.accessDenied("cannot determine the caller's uid: \(error.message)").dbusError)
            case .success(let uid):
                decide(object, sender: sender, uid: uid, proceed)
            }
        }
    }

    /// The end of ``authorize(_:_:_:)`` once the caller's uid is known.
    private func decide(
        _ object: SessionObject, sender: BusName, uid: UInt32, _ proceed: @Sendable (DBusError?) -> Void
    ) {
        do {
            try service.assumeIsolated { try $0.authorize(object.id, uid: uid) }
            addWatcher(sender, of: object.id)
            proceed(nil)
        } catch let error as FlowdError {
            proceed(error.dbusError)
        } catch {
            proceed(FlowdError.accessDenied("cannot authorize the call").dbusError)
        }
    }

    /// The caller's uid after the authorizer ran. Fails closed.
    func uid(of call: MethodInvocation) throws(FlowdError) -> UInt32 {
        guard let sender = call.sender, let uid = users.cachedUnixUser(of: sender) else {
            throw .accessDenied("cannot determine the caller's uid")
        }
        return uid
    }

    /// The caller of `StartSession` watches the session it made.
    func noteCreator(_ sender: BusName, of id: String) {
        addWatcher(sender, of: id)
    }

    /// `ListPlugins`.
    func pluginList() -> [PluginSummary] { plugins }

    private func addWatcher(_ sender: BusName, of id: String) {
        guard delivery == .callers else { return }
        if watchers[id, default: []].insert(sender).inserted {
            watching[sender, default: []].insert(id)
        }
    }

    private func forgetWatcher(_ sender: BusName) {
        guard let ids = watching.removeValue(forKey: sender) else { return }
        for id in ids {
            watchers[id]?.remove(sender)
            if watchers[id]?.isEmpty == true { watchers[id] = nil }
        }
    }

    /// The destinations of a session's signals: `[nil]` broadcasts.
    private func audience(of id: String) -> [BusName?] {
        switch delivery {
        case .broadcast: return [nil]
        case .callers: return (watchers[id] ?? []).sorted().map { $0 }
        }
    }

    // MARK: - Finishing calls

    /// Runs `body` with the service on the loop thread.
    func withService<T: Sendable>(_ body: @Sendable (isolated FlowService) throws(FlowdError) -> T) throws(FlowdError) -> T {
        do {
            return try service.assumeIsolated { service in try body(service) }
        } catch let error as FlowdError {
            throw error
        } catch {
            throw .failed("internal error: \(error)")
        }
    }

    /// Replies (or fails) and then emits what the call caused.
    func finish(_ call: MethodInvocation, _ result: Result<Void, FlowdError>) {
        switch result {
        case .success: call.reply()
        case .failure(let error): call.fail(error)
        }
        flush()
    }

    /// Emits every event the service queued, in order. Loop thread.
    func flush() {
        let events = service.assumeIsolated { $0.takeEvents() }
        for event in events { emit(event) }
    }

    private func emit(_ event: ServiceEvent) {
        do throws(DBusError) {
            switch event {
            case .sessionNew(let id):
                try managerSignal(.sessionNew(id: id))
            case .sessionRemoved(let id):
                try managerSignal(.sessionRemoved(id: id))
                if let gone = watchers.removeValue(forKey: id) {
                    for sender in gone { watching[sender]?.remove(id) }
                }
            case .sessionCountChanged:
                let count = service.assumeIsolated { $0.sessionCount }
                try server.emitPropertiesChanged(
                    path: FlowBus.managerPath, interface: FlowBus.managerInterface,
                    changed: [ManagerProperty.sessionCount.rawValue: .uint32(UInt32(clamping: count))])
            case .propertiesChanged(let id, let names, let now):
                guard !names.isEmpty, let path = FlowBus.sessionPath(of: id) else { return }
                var changed: [String: DBusValue] = [:]
                for name in names { changed[name.rawValue] = now.value(of: name) }
                for destination in audience(of: id) {
                    try server.emitPropertiesChanged(
                        path: path, interface: FlowBus.sessionInterface, changed: changed, destination: destination)
                }
            case .stepCompleted(let id, let step, let answers):
                try sessionSignal(id, .stepCompleted(step: step, answers: WireValue.answers(answers)))
            case .submitted(let id, let receipt):
                try sessionSignal(id, .submitted(receipt: WireValue.json(receipt)))
            case .submitFailed(let id, let message):
                try sessionSignal(id, .submitFailed(message: message))
            case .announcement(let id, let text):
                guard !text.isEmpty else { return }
                try sessionSignal(id, .announcement(text: text))
            case .log(let entry):
                entry.write(to: logger)
            }
        } catch {
            logger.error("cannot emit a signal: \(error.message)")
        }
    }

    private func managerSignal(_ signal: ManagerSignal) throws(DBusError) {
        guard let arguments = signal.arguments else { return }
        for destination in audience(of: signal.sessionID) {
            try server.emitSignal(
                signal.member, interface: FlowBus.managerInterface, path: FlowBus.managerPath, arguments: arguments,
                destination: destination)
        }
    }

    private func sessionSignal(_ id: String, _ signal: SessionSignal) throws(DBusError) {
        guard let path = FlowBus.sessionPath(of: id) else { return }
        for destination in audience(of: id) {
            try server.emitSignal(
                signal.member, interface: FlowBus.sessionInterface, path: path, arguments: signal.arguments,
                destination: destination)
        }
    }

    // MARK: - Plugin work off the loop

    /// Runs plugin checks off the loop, then `then` on the loop thread.
    func runChecks(
        _ checks: [PluginCheck], then: @escaping @Sendable (_ front: BusFrontEnd, _ results: [PluginCheckResult]) -> Void
    ) {
        let plugins = service.plugins
        let loop = self.loop
        Task { [self] in
            let results = await checks.run(using: plugins)
            loop.execute { then(self, results) }
        }
    }
}
