import DBus
import FlowEngine
import FlowProtocol
import FlowStore
import FlowdSystem
import Logging
import Reactor

/// The D-Bus side of the daemon: the connection, the Manager object and the
/// session tree (``ManagerInterface``, ``SessionInterface``), who each caller
/// is (``CallerRule``), the calls waiting for a deferred reply, and turning
/// the service's events into signals (``SignalAudience``).
///
/// Every handler runs on the loop thread in the same order: parse the
/// arguments → validate them against ``limits`` (``Inbound``) → authorize
/// (the registration's authorizer runs the member's ``CallerRule`` before
/// the handler) → act (the service) → reply → emit the signals the action
/// queued (after the reply, as docs/dbus-api.md promises).
///
/// Loop-bound: the objects the tables serve reach it through a
/// ``LoopBound``, which checks that every use is on the loop.
final class BusFrontEnd: DaemonComponent {
    /// What the front end serves, fixed for the daemon's run.
    struct Settings {
        var bus: BusChoice
        /// `Version` on the Manager.
        var version: String
        /// `ListPlugins` entries now (plugins load once, at start; an
        /// isolated one whose process crashed since is shown disabled).
        var plugins: @Sendable () -> [PluginSummary]
        /// How long polkit may take; nil when polkit is never asked (the
        /// per-user flowd, a private bus). The system service asks it.
        var polkit: PolkitAuthority.Timeouts?
    }

    let loop: any EventLoopProtocol
    let service: FlowService
    let logger: Logger
    let settings: Settings
    /// The bounds every argument a caller sends is checked against: the
    /// configuration's, replaced by ``apply(limits:)`` when it is reloaded.
    private(set) var limits: SessionLimits
    /// `Reload`: re-reads the configuration; a failure says why.
    let reload: () -> Result<Void, FlowdError>
    /// `GetStatus`: what the daemon reports about itself.
    let status: () -> DaemonStatus
    /// Called once when the bus connection is lost while serving.
    private let busLost: () -> Void

    private var link: Link?
    private var audience: SignalAudience
    /// Calls whose reply waits for plugins, answered by ``stop()`` if still waiting.
    private var waiting: [ObjectIdentifier: MethodInvocation] = [:]
    private var stopped = false
    /// The object path of the session last called or whose signals went
    /// out last, kept: a change's signals (`PropertiesChanged`,
    /// `Announcement`, `StepCompleted`) all come from the session the call
    /// was made to, whose path the resolver has just read (making it again
    /// from the id cost 1.6 k per change; docs/performance.md, N2).
    private var recentPath: (id: String, path: ObjectPath)?

    /// flowd's own uid, read once (every authorization compares with it).
    private let serviceUID = CurrentProcess.userID

    /// The connection and what serves on it, from ``start()`` on.
    private struct Link {
        let connection: Connection
        let server: ObjectServer
        let users: UnixUserCache
        /// polkit, when ``Settings/polkit`` says to ask it.
        let polkit: PolkitAuthority?
        var nameWatch: SignalSubscription?
    }

    init(
        loop: any EventLoopProtocol, service: FlowService, logger: Logger, settings: Settings, limits: SessionLimits,
        reload: @escaping () -> Result<Void, FlowdError>, status: @escaping () -> DaemonStatus,
        busLost: @escaping () -> Void
    ) {
        self.loop = loop
        self.service = service
        self.logger = logger
        self.settings = settings
        self.limits = limits
        self.reload = reload
        self.status = status
        self.busLost = busLost
        // Only a per-user session bus is one user's alone: anywhere else another
        // user must not see someone's answers go by. A bus given with
        // `--address` is asked at start (``start()``).
        self.audience = SignalAudience(delivery: settings.bus == .session ? .broadcast : .callers)
    }

    // MARK: - Start and stop

    /// Connects to the bus, exports the Manager and the session tree, and
    /// owns ``FlowBus/name``.
    func start() throws(StartFailure) {
        let bus = settings.bus
        let connection: Connection
        do {
            connection = try Connection(bus.connectionBus, logger: logger)
            try connection.attach(to: loop)
        } catch {
            throw StartFailure(status: .unavailable, message: "cannot connect to the \(bus.description) bus: \(error.message)")
        }
        // Privacy is decided by the bus, not by the option: a bus whose
        // daemon runs as flowd's own user is that user's (a per-user session
        // bus, a private test bus) and gets broadcasts; any other (the system
        // bus's socket given with --address, say) only owner-only signals.
        if case .address = bus, (try? connection.unixUser(of: "org.freedesktop.DBus")) == CurrentProcess.userID {
            audience = SignalAudience(delivery: .broadcast)
        }
        var link = Link(
            connection: connection, server: ObjectServer(connection: connection), users: UnixUserCache(connection: connection),
            polkit: settings.polkit.map { PolkitAuthority(connection: connection, timeouts: $0) })
        let front = LoopBound(self, loop: loop)
        do {
            try link.server.export(
                ManagerObject(bound: front), at: FlowBus.managerPath,
                interfaces: [ManagerInterface.table, ObjectManagerInterface.table],
                authorize: { manager, call in manager.front.verdict(call, CallerRule.manager(call.member)) })
            try link.server.exportTree(
                under: FlowBus.sessionPrefix, interfaces: [SessionInterface.table],
                authorize: { session, call in session.front.verdict(call, .sessionOwner(session.id)) },
                children: { path, caller, done in front.value.sessionNodes(under: path, caller: caller, done) },
                resolve: { path in
                    guard let id = FlowBus.sessionID(of: path) else { return nil }
                    front.value.recentPath = (id, path)
                    return SessionObject(id: id, bound: front)
                })
            if audience.delivery == .callers {
                link.nameWatch = connection.onNameOwnerChanged { change in
                    guard change.isClientGone else { return }
                    front.value.audience.forget(change.name)
                }
            }
            self.link = link
            switch try connection.requestName(FlowBus.name, flags: [.doNotQueue]) {
            case .primaryOwner, .alreadyOwner: break
            case .exists, .inQueue:
                throw StartFailure(
                    status: .unavailable, message: "another process owns \(FlowBus.name.rawValue) on the \(bus.description) bus")
            }
        } catch let error as StartFailure {
            throw error
        } catch {
            throw StartFailure(status: .unavailable, message: "cannot serve \(FlowBus.name.rawValue): \(error)")
        }
        connection.onDisconnect {
            front.loop.execute {
                let front = front.value
                guard !front.stopped else { return }
                front.busLost()
            }
        }
    }

    /// Answers every call still waiting for plugins (`Cancelled`: flowd is
    /// stopping), emits what is queued, sends it all and closes the
    /// connection.
    func stop() {
        stopped = true
        for (_, call) in waiting.sorted(by: { $0.key < $1.key }) {
            call.fail(FlowdError(.cancelled, "flowd is stopping"))
        }
        waiting.removeAll()
        flush()
        link?.nameWatch?.cancel()
        link?.connection.flush()
        link?.connection.close()
    }

    /// A reload changed the configuration: its bounds apply from the next call.
    func apply(limits: SessionLimits) {
        self.limits = limits
    }

    // MARK: - Acting and replying

    /// Runs `body` with the service, on the loop thread (no task, no hop).
    func withService<T: Sendable>(_ body: @Sendable (isolated FlowService) throws(FlowdError) -> T) throws(FlowdError) -> T {
        try service.assumeIsolatedOnLoop(body)
    }

    /// Runs `body` with the service, on the loop thread: an operation that
    /// answers through a ``Reply``.
    func act(_ body: @Sendable (isolated FlowService) -> Void) {
        service.assumeIsolatedOnLoop(body)
    }

    /// Replies (or fails) and then emits what the call caused.
    func finish(_ call: MethodInvocation, _ result: Result<Void, FlowdError>) {
        switch result {
        case .success: call.reply()
        case .failure(let error): call.fail(error)
        }
        flush()
    }

    /// The ``Reply`` of `call`: `encode` writes a success, an error fails the
    /// call, and what the call caused is emitted after either. A call whose
    /// answer waits for plugins is remembered until then, so that ``stop()``
    /// can answer it.
    func reply<Value: Sendable>(
        to call: MethodInvocation, _ encode: @escaping @Sendable (Value, MethodInvocation) -> Void
    ) -> Reply<Value> {
        let front = LoopBound(self, loop: loop)
        let key = ObjectIdentifier(call)
        return Reply(
            deferring: {
                let front = front.value
                front.flush()
                front.waiting[key] = call
            },
            { result in
                let front = front.value
                if !front.waiting.isEmpty { front.waiting[key] = nil }
                guard !call.isCompleted else { return }  // answered by stop()
                switch result {
                case .success(let value): encode(value, call)
                case .failure(let error): call.fail(error)
                }
                front.flush()
            })
    }

    /// The ``Reply`` of a submit that does not wait (`SubmitWithOptions`
    /// with `wait` false): the call is answered as soon as the action
    /// starts, before the `State` `submitting` it caused goes out; what ends
    /// the action is only emitted (`PropertiesChanged`, `Submitted`,
    /// `SubmitFailed`). A submit that ends before waiting for a plugin (a
    /// refusal, an unfinished step, a flow without action) answers as
    /// `Submit` does.
    func replyOnceStarted(to call: MethodInvocation) -> Reply<Void> {
        let front = LoopBound(self, loop: loop)
        return Reply(
            deferring: {
                if !call.isCompleted { call.reply() }
                front.value.flush()
            },
            { result in
                if !call.isCompleted {
                    switch result {
                    case .success: call.reply()
                    case .failure(let error): call.fail(error)
                    }
                }
                front.value.flush()
            })
    }

    // MARK: - Events

    /// Emits every event the service queued, in order.
    func flush() {
        var events = service.assumeIsolatedOnLoop { $0.takeEvents() }
        // Moved out one by one, oldest first: reading an element (by index,
        // or through a buffer) copies the event out, some fifteen
        // references for a `PropertiesChanged`, and destroys the copy; so
        // do an array's `reverse()` and `removeFirst()`. A buffer's
        // `reverse()` moves.
        events.withUnsafeMutableBufferPointer { $0.reverse() }
        while let event = events.popLast() { emit(event) }
    }

    private func emit(_ event: ServiceEvent) {
        guard let server = link?.server else { return }
        do throws(DBusError) {
            switch event {
            case .sessionNew(let id):
                let session = try? withService { service throws(FlowdError) in try service.read(id) { SessionProperties($0) } }
                if let session { audience.adopt(id, owner: session.owner) }
                try managerSignal(.sessionNew(id: id), server)
                if let session { try objectManagerSignal(.interfacesAdded(session), server) }
            case .sessionRemoved(let id):
                try managerSignal(.sessionRemoved(id: id), server)
                try objectManagerSignal(.interfacesRemoved(id: id), server)
                audience.remove(session: id)
            case .sessionCountChanged:
                let count = service.assumeIsolatedOnLoop { $0.sessionCount }
                try server.emitPropertiesChanged(
                    path: FlowBus.managerPath, interface: FlowBus.managerInterface,
                    changed: [ManagerProperty.sessionCount.rawValue: .uint32(UInt32(clamping: count))])
            case .propertiesChanged(let id, let names, let now):
                guard !names.isEmpty, let path = sessionPath(of: id) else { return }
                // Written straight from the typed values, in the order
                // the change names them (declaration order).
                for destination in audience.destinations(of: id) {
                    try server.emitPropertiesChanged(path: path, interface: FlowBus.sessionInterface, destination: destination) {
                        (entries) throws(DBusError) in
                        try entries.write { (writer) throws(DBusError) in
                            for name in names { try now.writeEntry(name, into: &writer) }
                        }
                    }
                }
            case .stepCompleted(let id, let step, let answers):
                try sessionSignal(id, .stepCompleted(step: step, answers: WireValue.answers(answers)), server)
            case .submitted(let id, let receipt):
                try sessionSignal(id, .submitted(receipt: WireValue.json(receipt)), server)
            case .submitFailed(let id, let message):
                try sessionSignal(id, .submitFailed(message: message), server)
            case .announcement(let id, let text):
                guard !text.isEmpty else { return }
                try sessionSignal(id, .announcement(text: text), server)
            case .log(let entry):
                entry.write(to: logger)
            }
        } catch {
            logger.error("cannot emit a signal: \(error.message)")
        }
    }

    private func managerSignal(_ signal: ManagerSignal, _ server: ObjectServer) throws(DBusError) {
        guard let arguments = signal.arguments else { return }
        for destination in audience.destinations(of: signal.sessionID) {
            try server.emitSignal(
                signal.member, interface: FlowBus.managerInterface, path: FlowBus.managerPath, arguments: arguments,
                destination: destination)
        }
    }

    /// `InterfacesAdded` (with the session's metadata) or `InterfacesRemoved`
    /// of a session, from the Manager object, to the session's audience.
    private enum ObjectManagerSignal {
        case interfacesAdded(SessionProperties)
        case interfacesRemoved(id: String)
    }

    private func objectManagerSignal(_ signal: ObjectManagerSignal, _ server: ObjectServer) throws(DBusError) {
        switch signal {
        case .interfacesAdded(let session):
            // Written straight from the typed values (``ObjectManagerInterface/writeInterfacesAdded(_:_:into:)``).
            guard let path = sessionPath(of: session.id) else { return }
            for destination in audience.destinations(of: session.id) {
                try server.emitSignal(
                    FlowMember.ObjectManager.interfacesAdded, interface: .objectManager, path: FlowBus.managerPath,
                    signature: ObjectManagerInterface.interfacesAddedSignature, destination: destination
                ) { (body) throws(DBusError) in try ObjectManagerInterface.writeInterfacesAdded(path, session, into: &body) }
            }
        case .interfacesRemoved(let id):
            guard let path = sessionPath(of: id) else { return }
            for destination in audience.destinations(of: id) {
                try server.emitSignal(
                    FlowMember.ObjectManager.interfacesRemoved, interface: .objectManager, path: FlowBus.managerPath,
                    arguments: [.objectPath(path), ObjectManagerInterface.removedInterfaces], destination: destination)
            }
        }
    }

    /// Written straight from the typed values (``SessionSignal/writeArguments(into:)``).
    private func sessionSignal(_ id: String, _ signal: SessionSignal, _ server: ObjectServer) throws(DBusError) {
        guard let path = sessionPath(of: id) else { return }
        for destination in audience.destinations(of: id) {
            try server.emitSignal(
                signal.member, interface: FlowBus.sessionInterface, path: path, signature: signal.signature,
                destination: destination, arguments: signal.writeArguments)
        }
    }

    /// Session `id`'s object path (``FlowBus/sessionPath(of:)``).
    private func sessionPath(of id: String) -> ObjectPath? {
        if let recentPath, recentPath.id == id { return recentPath.path }
        guard let path = FlowBus.sessionPath(of: id) else { return nil }
        recentPath = (id, path)
        return path
    }

    // MARK: - Callers

    /// The caller's uid, known once the authorizer let the call through.
    /// Fails closed.
    func uid(of call: MethodInvocation) throws(FlowdError) -> UInt32 {
        guard let sender = call.sender, let uid = link?.users.cachedUnixUser(of: sender) else {
            throw .accessDenied("cannot determine the caller's uid")
        }
        return uid
    }

    /// Runs `rule` for `call`: `proceed(nil)` lets it through, now or once
    /// the bus told the caller's uid and polkit answered (``verdict(_:_:)``).
    func authorize(_ call: MethodInvocation, _ rule: CallerRule, _ proceed: @escaping @Sendable (DBusError?) -> Void) {
        verdict(call, rule).run(proceed)
    }

    /// Decides `rule` for `call`: at once for a known caller (every call
    /// after its first) whom the rule admits or refuses without polkit, the
    /// object server then runs the handler without a completion made for
    /// it; later once the bus told the caller's uid or polkit answered
    /// (``AuthorizationPolicy``). Anything that cannot be determined refuses.
    func verdict(_ call: MethodInvocation, _ rule: CallerRule) -> AuthorizationVerdict {
        guard let sender = call.sender, let users = link?.users else {
            return .refuse(FlowdError.accessDenied("the caller has no bus name").dbusError)
        }
        let interactive = call.message.allowsInteractiveAuthorization
        if let uid = users.cachedUnixUser(of: sender) {
            return decide(rule, sender: sender, caller: .init(uid: uid, allowsInteraction: interactive))
        }
        let front = LoopBound(self, loop: loop)
        return .later { proceed in
            users.unixUser(of: sender) { result in
                switch result {
                case .failure(let error):
                    proceed(FlowdError.accessDenied("cannot determine the caller's uid: \(error.message)").dbusError)
                case .success(let uid):
                    front.value.decide(rule, sender: sender, caller: .init(uid: uid, allowsInteraction: interactive)).run(proceed)
                }
            }
        }
    }

    /// The sessions of `every` a listing shows the caller of `call`, whose
    /// uid is `uid` (``AuthorizationPolicy/listing(_:caller:owner:)``):
    /// `done` gets them at once, or once polkit answered about
    /// ``CallerRule/everySession`` (never interactively); a refusal only
    /// narrows the listing to the caller's own.
    func listing(
        _ call: MethodInvocation, uid: UInt32, of every: [SessionSummary], _ done: @escaping @Sendable ([SessionSummary]) -> Void
    ) {
        switch AuthorizationPolicy.listing(every, caller: uid, owner: \.owner) {
        case .show(let rows): done(rows)
        case .ask(let every, let own): authorize(call, .everySession) { refusal in done(refusal == nil ? every : own) }
        }
    }

    /// Decides `rule` for `caller`: now, or later when polkit is asked.
    private func decide(_ rule: CallerRule, sender: BusName, caller: AuthorizationPolicy.Caller) -> AuthorizationVerdict {
        let requirement: AuthorizationPolicy.Requirement
        // A session loaded for this call has its values worked out after
        // the call ran (and replied, unless it waits for plugins), for its
        // first change to compare with.
        var settle = false
        switch rule {
        case .anyUser:
            return .allow
        case .reload:
            requirement = .reload
        case .startFlow(let id, let action):
            requirement = .startFlow(id: id, action: action)
        case .everySession:
            requirement = .everySession
        case .sessionOwner(let id):
            do {
                let (owner, loaded) = try withService { service throws(FlowdError) in
                    (try service.owner(of: id), service.hasUnsettledSessions)
                }
                requirement = .session(id: id, owner: owner)
                settle = loaded
            } catch {
                return .refuse(error.dbusError)
            }
        }
        let polkit = link?.polkit
        switch AuthorizationPolicy.decide(requirement, caller: caller, polkit: polkit != nil, serviceUID: serviceUID) {
        case .allow:
            admit(sender, under: rule)
            audit(requirement, caller.uid, sender, action: nil, .success(()))
            guard settle else { return .allow }
            // Settled after the call ran: `proceed` runs it.
            let front = LoopBound(self, loop: loop)
            return .later { proceed in
                proceed(nil)
                front.value.service.assumeIsolatedOnLoop { $0.settleLoaded() }
            }
        case .refuse(let refusal):
            audit(requirement, caller.uid, sender, action: nil, .failure(refusal))
            return .refuse(refusal.dbusError)
        case .ask(let query):
            guard let polkit else {
                return .refuse(FlowdError.accessDenied("cannot \(query.purpose): polkit is not asked here").dbusError)
            }
            let front = LoopBound(self, loop: loop)
            return .later { [settle] proceed in
                polkit.check(query.action, subject: sender, interactive: query.interactive) { answer in
                    let front = front.value
                    let result = AuthorizationPolicy.conclude(query, answer)
                    if case .success = result { front.admit(sender, under: rule) }
                    front.audit(requirement, caller.uid, sender, action: query.action, result)
                    switch result {
                    case .success: proceed(nil)
                    case .failure(let refusal): proceed(refusal.dbusError)
                    }
                    if settle { front.service.assumeIsolatedOnLoop { $0.settleLoaded() } }
                }
            }
        }
    }

    /// The audit trail: an administrative call allowed (by root or by
    /// polkit) or any refusal, with who, what and under which action. An
    /// owner using their own session is not administrative and not logged.
    private func audit(
        _ requirement: AuthorizationPolicy.Requirement, _ uid: UInt32, _ sender: BusName, action: AuthorizationAction?,
        _ result: Result<Void, AuthorizationPolicy.Refusal>
    ) {
        // Allowed without root or polkit (a flow's action on the session
        // bus): nothing administrative happened.
        if case .success = result, action == nil, uid != 0 { return }
        // An owner (root too) using their own session: nothing to log, so
        // no metadata is made.
        if case .session(_, let owner) = requirement, case .success = result, uid == owner { return }
        var metadata: LogMetadata = [.uid: uid, .sender: sender.rawValue]
        let what: String
        switch requirement {
        case .session(let id, let owner):
            metadata[.session] = id
            what = "session \(id) of uid \(owner)"
        case .reload:
            what = "Reload"
        case .startFlow(let id, _):
            metadata[.flow] = id
            what = "starting flow \(id)"
        case .everySession:
            // A caller not let see the others' sessions still gets their
            // own: not a refusal, and not worth an entry per listing.
            if case .failure = result { return }
            what = "listing every user's sessions"
        }
        if let action { metadata[.action] = action.id }
        switch result {
        case .success:
            let by = action.map { "polkit (\($0.id))" } ?? "root"
            logger.notice("uid \(uid) allowed: \(what), by \(by)", id: .administrativeAccess, metadata: metadata)
        case .failure(let refusal):
            metadata[.error] = refusal.dbusError.name.rawValue
            logger.notice("uid \(uid) refused: \(refusal.message)", id: .authorizationRefused, metadata: metadata)
        }
    }

    /// A caller let into a session watches it (``SignalAudience``).
    private func admit(_ sender: BusName, under rule: CallerRule) {
        if case .sessionOwner(let id) = rule { audience.add(sender, watching: id) }
    }

    /// The session nodes `caller` sees when it introspects the session tree
    /// (`busctl tree`, `gdbus introspect --recurse`): its own sessions, every
    /// one for root, none when its uid cannot be told (fail closed).
    func sessionNodes(under path: ObjectPath, caller: BusName?, _ done: @escaping @Sendable ([String]) -> Void) {
        guard path == FlowBus.sessionPrefix, let caller, let users = link?.users else { return done([]) }
        let front = LoopBound(self, loop: loop)
        users.unixUser(of: caller) { result in
            guard case .success(let uid) = result,
                  let sessions = try? front.value.withService({ service throws(FlowdError) in try service.listSessions(uid: uid) })
            else { return done([]) }
            done(sessions.map(\.id).filter(SessionID.isValid))
        }
    }

    /// The caller of `GetManagedObjects` watches the sessions it was given
    /// and those its uid starts later.
    func noteManager(_ sender: BusName?, uid: UInt32, of sessions: [String]) {
        if let sender { audience.add(manager: sender, uid: uid, watching: sessions) }
    }

    /// The caller of `StartSession` watches the session it made.
    func noteCreator(_ sender: BusName?, of id: String) {
        if let sender { audience.add(sender, watching: id) }
    }
}

extension BusChoice {
    var connectionBus: Connection.Bus {
        switch self {
        case .system: return .system
        case .session: return .session
        case .address(let address): return .address(address)
        }
    }
}
