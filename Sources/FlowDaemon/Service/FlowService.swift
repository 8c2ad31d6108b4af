import FlowEngine
import FlowKit
import FlowProtocol
import FlowStore
import Logging
import Reactor

/// The daemon's state and every operation of the D-Bus API, with the
/// authorization of session calls.
///
/// An actor whose executor is the event loop: everything here runs on the
/// loop thread, so the bus front end enters it synchronously with
/// ``assumeIsolatedOnLoop(_:)`` (the fast path: no task, no thread hop). An operation
/// that needs plugins answers later through its ``Reply``: the plugin calls
/// start in ``PluginCalls`` and come back here, on the loop.
///
/// Each mutation follows the same steps: load the session
/// (``SessionRepository``), change a copy with the pure engine, write it to
/// the store, and only then make it the cached value and queue its events
/// (``ServiceEvents``). A change that could not be written is not
/// acknowledged and leaves nothing behind.
///
/// A session is never held across a plugin call: afterwards it is looked up
/// again, and the engine ignores plugin results made for answers that
/// changed in the meantime.
actor FlowService: DaemonComponent {
    nonisolated let loop: any EventLoopProtocol
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.unownedExecutor }

    private(set) var catalog: FlowCatalog
    private(set) var configuration: DaemonConfiguration
    /// The capabilities loaded plugins provide (flows are linted against it).
    let capabilities: CapabilityCatalog
    let logger: Logger
    let clock: any EngineClock

    private var repository: SessionRepository
    private var quota: SessionQuota
    private var submits = SubmitRunner()
    private var events: ServiceEvents
    private let calls: PluginCalls

    init(
        loop: any EventLoopProtocol, store: SessionStore, configuration: DaemonConfiguration, plugins: any PluginGateway,
        capabilities: CapabilityCatalog, logger: Logger, clock: any EngineClock,
        cacheCapacity: Int = SessionRepository.defaultCacheCapacity
    ) throws(FlowdError) {
        self.loop = loop
        self.configuration = configuration
        self.capabilities = capabilities
        self.logger = logger
        self.clock = clock
        self.calls = PluginCalls(gateway: plugins)
        self.repository = SessionRepository(store: store, clock: clock, logger: logger, cacheCapacity: cacheCapacity)
        self.events = ServiceEvents(logger: logger)
        self.catalog = FlowCatalog.load(directories: configuration.flowDirectories, capabilities: capabilities)
        do {
            self.quota = SessionQuota(total: try store.count())
        } catch {
            throw .failed("cannot count the stored sessions: \(error)")
        }
    }

    // MARK: - Start and stop

    /// On the loop, at start-up: reports the flows refused, and marks the
    /// sessions a stop interrupted while submitting.
    nonisolated func start() {
        assumeIsolatedOnLoop { service in
            service.catalog.report(to: service.logger)
            let interrupted = service.recoverInterruptedSubmits()
            if interrupted > 0 {
                service.logger.notice("\(interrupted) submits were interrupted by the last stop and are marked failed")
            }
        }
    }

    /// On the loop, at shutdown: cancels every running submit (its call is
    /// answered `Cancelled`). The sessions stay stored as submitting and come
    /// back failed "interrupted" at the next start, never re-submitted.
    nonisolated func stop() {
        assumeIsolatedOnLoop { service in
            for reply in service.submits.cancelAll() { reply(.failure(FlowdError(.cancelled, "flowd is stopping"))) }
        }
    }

    /// The live counts for systemd's status line.
    var status: (sessions: Int, flows: Int, refusedFlows: Int, submits: Int) {
        (quota.total, catalog.flows.count, catalog.refused.count, submits.count)
    }

    /// Live sessions by state name (a scan of the store; for `GetStatus`).
    func sessionsByState() -> [String: Int] {
        do {
            return try repository.store.countsByState()
        } catch {
            logger.error("cannot count the sessions by state: \(error.description)")
            return [:]
        }
    }

    /// Live sessions, all uids.
    var sessionCount: Int { quota.total }

    // MARK: - Events

    /// Hands over the events queued since the last call, oldest first, with
    /// the property changes worked out: the bus front end takes them after
    /// it replied.
    func takeEvents() -> [ServiceEvent] {
        let ready = events.take { id, announced, version in repository.keep(announced, of: id, version: version) }
        repository.settle()
        return ready
    }

    /// Works out the values of the sessions loaded or made since the last
    /// call, for their first change to compare with (``SessionRepository/settle()``):
    /// the bus front end calls it after a read's reply.
    func settleLoaded() {
        repository.settle()
    }

    /// The digests of cached session `id`'s values as last announced, when
    /// known: the "before" of its next change.
    func announcedDigests(of id: String) -> PropertyDigests? { repository.announced(of: id) }

    /// How many sessions the cache holds at most.
    var cacheCapacity: Int { repository.cacheCapacity }

    /// Whether sessions loaded or made wait for ``settleLoaded()``.
    var hasUnsettledSessions: Bool { repository.hasUnsettled }

    // MARK: - Sessions

    /// The session `id`, from the cache or the store (``SessionRepository``).
    private func session(_ id: String) throws(FlowdError) -> FlowSession {
        try repository.session(id, flows: catalog)
    }

    /// Reads a value of session `id`.
    func read<T>(_ id: String, _ body: (FlowSession) -> T) throws(FlowdError) -> T {
        body(try session(id))
    }

    /// Saves `session` (when `persist`), makes it the cached value and
    /// queues what changed since `start` among what `scope` says the call
    /// can change, worked out after the reply.
    /// `session` and `start` are consumed: the change is queued with them
    /// rather than with copies (a session is some twenty references).
    private func commit(
        _ session: consuming FlowSession, from start: consuming ChangeStart, _ scope: ChangeScope, persist: Bool = true
    ) throws(FlowdError) {
        if persist { try repository.save(session) }
        let version = repository.cache(session)
        events.change(from: start, to: session, scope: scope, version: version)
    }

    /// The common shape of a session method: load session `id`, apply `body`
    /// to it and commit the result, which can have changed what `scope`
    /// says. When `body` throws nothing is stored or announced.
    @discardableResult
    private func change<T>(
        _ id: String, _ scope: ChangeScope, _ body: (inout FlowSession) throws(SessionError) -> T
    ) throws(FlowdError) -> T {
        var session = try session(id)
        let start = repository.changeStart(session)
        let result = try engine { () throws(SessionError) in try body(&session) }
        try commit(consume session, from: start, scope)
        return result
    }

    /// Runs an engine mutation, turning its error into the contract's.
    private func engine<T>(_ body: () throws(SessionError) -> T) throws(FlowdError) -> T {
        do {
            return try body()
        } catch {
            throw FlowdError(error)
        }
    }

    // MARK: - Authorization

    /// The uid session `id` belongs to, for the front end's authorization
    /// (``AuthorizationPolicy``; `NotFound` when there is no such session,
    /// and a session that cannot be loaded refuses everyone).
    func owner(of id: String) throws(FlowdError) -> UInt32 {
        if let owner = repository.cachedOwner(of: id) { return owner }
        return try session(id).record.owner
    }

    // MARK: - Manager

    /// `StartSession`: a session of `flowID` for `uid`, made once the flow's
    /// options and prefill providers (if any) have answered.
    func startSession(
        flowID: String, locale requested: String?, prefill: [String: AnswerValue],
        answers: [String: AnswerValue] = [:], uid: UInt32, reply: Reply<String>
    ) {
        do throws(FlowdError) {
            guard let flow = catalog.flow(flowID) else { throw .notFound("no flow \"\(flowID)\"") }
            let locale = LocaleFallback.normalize(requested ?? "en")
            guard LocaleFallback.isWellFormed(locale) else {
                throw .invalidArgs("\"\(requested ?? "")\" is not a locale tag (expected one like \"en\" or \"pt-BR\")")
            }
            let store = repository.store
            do throws(FlowdError) {
                // Settled sessions do not count: they never keep a person
                // from starting another (they have a retention of their own).
                try quota.reserve(for: uid, limits: configuration.limits) { uid throws(FlowdError) in
                    do {
                        return try store.count(owner: uid, excludingState: SessionState.submitted.rawValue)
                    } catch {
                        throw .failed("cannot count the caller's sessions: \(error)")
                    }
                }
            } catch {
                if error.name == .limitExceeded {
                    logger.warning(
                        "uid \(uid) cannot start a session of \(flow.id): \(error.message)", id: .limitReached,
                        metadata: [.flow: flow.id, .uid: uid])
                }
                throw error
            }
            let new = NewSession(
                flow: flow, id: SessionID.make(), owner: uid, locale: locale, prefill: prefill, answers: answers)
            let requests = flow.providerRequests(locale: locale)
            guard !requests.isEmpty else { return create(new, provided: [], reply: reply) }
            reply.deferring()
            let context = PluginContext(
                flowID: flow.id, sessionID: new.id, locale: locale, callerUID: uid, answers: [:], options: [:],
                stateDirectory: "")
            calls.provide(requests, context: context, for: self) { service, provided in
                service.create(new, provided: zip(requests, provided).map { $0 }, reply: reply)
            }
        } catch {
            reply(.failure(error))
        }
    }

    /// A session ``startSession(flowID:locale:prefill:answers:uid:reply:)`` makes.
    private struct NewSession: Sendable {
        var flow: FlowDefinition
        var id: String
        var owner: UInt32
        var locale: String
        var prefill: [String: AnswerValue]
        /// An answer file: answers for every step, which drive the new
        /// session as far as they are valid (it never submits).
        var answers: [String: AnswerValue]
    }

    /// Makes `new` with what its providers gave, drives it with its answer
    /// file, then stores and announces it; its quota slot is given back
    /// whichever way it ends.
    private func create(_ new: NewSession, provided: [(ProviderRequest, ProvidedValue)], reply: Reply<String>) {
        let session: FlowSession
        do throws(FlowdError) {
            session = try make(new, provided: provided)
        } catch {
            quota.release(for: new.owner)
            return reply(.failure(error))
        }
        drive(session, new, applying: nil, round: 1, reply: reply)
    }

    /// Runs the answer file of `new` on `session`, with the plugin checks it
    /// asks for (one round per step at most: a step whose checks were asked
    /// for treats missing results as failed the next time), then stores it.
    private func drive(
        _ session: FlowSession, _ new: NewSession, applying results: [PluginCheckResult]?, round: Int,
        reply: Reply<String>
    ) {
        var session = session
        if let results { _ = session.applyPluginResults(results) }
        do throws(FlowdError) {
            if !new.answers.isEmpty, round <= new.flow.steps.count + 1 {
                let now = clock.now
                let outcome = try engine { () throws(SessionError) in try session.run(answers: new.answers, now: now) }
                if case .checking(let checks) = outcome {
                    reply.deferring()
                    calls.check(checks, for: self) { [session] service, results in
                        service.drive(session, new, applying: results, round: round + 1, reply: reply)
                    }
                    return
                }
            }
        } catch {
            quota.release(for: new.owner)
            return reply(.failure(error))
        }
        reply { () throws(FlowdError) in try store(session, new) }
    }

    /// Stores and announces a new session, and gives back its quota slot.
    private func store(_ session: FlowSession, _ new: NewSession) throws(FlowdError) -> String {
        defer { quota.release(for: new.owner) }
        try repository.save(session)
        repository.cache(session, isNew: true)
        quota.added(for: new.owner)
        events.append(.sessionNew(id: new.id))
        events.append(.sessionCountChanged)
        events.log(
            .info, "session \(new.id) of \(new.flow.id) started by uid \(new.owner)", id: .sessionStarted,
            metadata: [.session: new.id, .flow: new.flow.id, .uid: new.owner])
        return new.id
    }

    /// A new session with what its providers gave.
    private func make(_ new: NewSession, provided: [(ProviderRequest, ProvidedValue)]) throws(FlowdError) -> FlowSession {
        let flow = new.flow
        var dynamicOptions: [String: [ChoiceOption]] = [:]
        var providedPrefill: [String: AnswerValue] = [:]
        for (request, value) in provided {
            let field = request.field.id
            var metadata: LogMetadata = [.flow: flow.id, .capability: request.provider.name, .field: field]
            metadata[.plugin] = calls.gateway.pluginName(
                providing: request.kind == .options ? .optionsProvider : .prefillProvider, request.provider.name)
            switch value {
            case .options(.success(let options)):
                dynamicOptions[field] = options
            case .options(.failure(let detail)):
                logger.error("options provider failed: \(detail)", metadata: metadata)
                throw FlowdError(
                    .pluginFailed, "the options of field \(field) could not be loaded (\(request.provider.name) failed)")
            case .options(.timedOut):
                logger.error("options provider timed out", metadata: metadata)
                throw FlowdError(.timeout, "the options of field \(field) took too long to load")
            case .prefill(.success(let value)):
                if let value { providedPrefill[field] = value }
            // A prefill is a convenience: the person can still type the value.
            case .prefill(.failure(let detail)):
                logger.warning("prefill provider failed: \(detail)", metadata: metadata)
            case .prefill(.timedOut):
                logger.warning("prefill provider timed out", metadata: metadata)
            }
        }
        func build(_ prefill: [String: AnswerValue]) throws(FlowdError) -> FlowSession {
            do {
                return try FlowSession(
                    flow: flow, id: new.id, owner: new.owner, locale: new.locale, clock: clock, prefill: prefill,
                    dynamicOptions: dynamicOptions)
            } catch {
                throw FlowdError(error)
            }
        }
        do {
            return try build(providedPrefill.merging(new.prefill) { _, fromCaller in fromCaller })
        } catch {
            guard !providedPrefill.isEmpty else { throw error }
            // Who gave the value that does not fit? The caller's prefill alone
            // decides: its own mistake is its error (InvalidArgs, nothing
            // logged); otherwise a provider's value was refused, a plugin's
            // fault, and the session starts without provider values.
            let session = try build(new.prefill)
            logger.warning("a prefill provider's value was refused: \(error.message)", metadata: [.flow: flow.id])
            return session
        }
    }

    /// The sessions `uid` may see: its own, or all of them for root.
    func listSessions(uid: UInt32) throws(FlowdError) -> [SessionSummary] {
        do {
            return try repository.store.summaries(owner: uid == 0 ? nil : uid)
        } catch {
            throw .failed("cannot list sessions: \(error)")
        }
    }

    /// Re-reads the flows with a new configuration. Limits take effect at
    /// once; the bus and the state directory only at the next start.
    /// Cached sessions of a flow that changed move to the new definition now
    /// (the engine drops answers that no longer fit, and keeps the secure
    /// answers held in memory) and announce what changed; sessions of a flow
    /// that is gone stay stored but answer `NotFound` until it comes back.
    func reload(_ newConfiguration: DaemonConfiguration) {
        var next = newConfiguration
        next.bus = configuration.bus
        next.stateDirectory = configuration.stateDirectory
        configuration = next
        catalog = FlowCatalog.load(directories: next.flowDirectories, capabilities: capabilities)
        catalog.report(to: logger)
        for id in repository.cachedIDs {
            guard let cached = repository.cached(id), !submits.isRunning(id) else { continue }
            guard let flow = catalog.flow(cached.flow.id) else {
                repository.forget(id)
                continue
            }
            guard flow.fingerprint != cached.flow.fingerprint else { continue }
            let start = repository.changeStart(cached)
            repository.forget(id)
            if let rebased = try? cached.rebased(onto: flow) {
                let version = repository.cache(rebased)
                events.change(from: start, to: rebased, scope: .anything, version: version)
            }
        }
    }

    /// Finds sessions that were submitting when the daemon stopped and marks
    /// them failed ("interrupted"), as loading them does. Returns how many.
    private func recoverInterruptedSubmits() -> Int {
        let ids: [String]
        do {
            ids = try repository.store.ids(inState: SessionState.submitting.rawValue)
        } catch {
            logger.error("cannot look for interrupted submits: \(error.description)")
            return 0
        }
        return ids.count(where: { (try? session($0)) != nil })
    }

    /// Deletes sessions idle for longer than the configured time, and
    /// settled (submitted) ones older than their retention. Returns how many
    /// went.
    func expireIdleSessions() -> Int {
        quota.forgetOwners()
        let settled = SessionState.submitted.rawValue
        let store = repository.store
        let idleCutoff = clock.now - Self.microseconds(configuration.limits.idleTimeout)
        let settledCutoff = clock.now - Self.microseconds(configuration.limits.settledRetention)
        return expire(what: "idle sessions") { () throws(StoreError) in
            try store.expired(before: idleCutoff, limit: 500, excludingState: settled)
        } + expire(what: "settled sessions") { () throws(StoreError) in
            try store.ids(inState: settled, updatedBefore: settledCutoff, limit: 500)
        }
    }

    /// Microseconds, as the clock: `IdleTimeout=1500ms` means 1.5 s, not 1 s.
    private static func microseconds(_ span: Duration) -> Int64 {
        span.components.seconds * 1_000_000 + span.components.attoseconds / 1_000_000_000_000
    }

    /// Removes the sessions `batch` finds, 500 at a time, until it finds none.
    private func expire(what: String, _ batch: () throws(StoreError) -> [String]) -> Int {
        var removed = 0
        while true {
            let ids: [String]
            do {
                ids = try batch()
            } catch {
                logger.error("cannot look for \(what): \(error.description)")
                return removed
            }
            var progressed = false
            for id in ids where !submits.isRunning(id) {
                if (try? remove(id, reason: "expired")) != nil {
                    removed += 1
                    progressed = true
                }
            }
            if ids.count < 500 || !progressed { return removed }
        }
    }

    private func remove(_ id: String, reason: String) throws(FlowdError) {
        let (deleted, owner, settled) = try repository.delete(id)
        submits.cancel(id)?(.failure(FlowdError(.cancelled, "the session was closed")))
        guard deleted else { return }
        quota.removed(ownedBy: owner, counted: !settled)
        events.append(.sessionRemoved(id: id))
        events.append(.sessionCountChanged)
        events.log(.info, "session \(id) removed (\(reason))", metadata: [.session: id])
    }

    // MARK: - Session methods

    /// `SetAnswers`: the field errors, after the plugin validators the
    /// answers need (if any) have answered.
    func setAnswers(_ id: String, _ answers: [String: AnswerValue], reply: Reply<FieldErrors>) {
        let now = clock.now
        let result: SetAnswersResult
        do throws(FlowdError) {
            var session = try session(id)
            let start = repository.changeStart(session)
            result = try engine { () throws(SessionError) in try session.setAnswers(answers, now: now) }
            let scope = ChangeScope.answers(canContinue: result.canContinue, onTheCurrentStepOf: session.flow)
            try commit(consume session, from: start, scope)
        } catch {
            return reply(.failure(error))
        }
        guard !result.checks.isEmpty else { return reply(.success(result.errors)) }
        reply.deferring()
        calls.check(result.checks, for: self) { service, results in
            reply { () throws(FlowdError) in
                var session = try service.session(id)
                let start = service.repository.changeStart(session)
                let errors = session.applyPluginResults(results)
                // Plugin verdicts live in memory only; a validator's
                // normalized value is an answer change, and is stored.
                try service.commit(
                    session, from: start, .answers(), persist: session.record.revision != start.revision)
                return errors
            }
        }
    }

    /// `CheckAnswers` (since 1.1): the field errors `SetAnswers` would reply
    /// for `answers`, plugin validators included, without storing or
    /// signalling anything: for a window that validates as the person types.
    func checkAnswers(_ id: String, _ answers: [String: AnswerValue], reply: Reply<FieldErrors>) {
        let now = clock.now
        let check: AnswerCheck
        do throws(FlowdError) {
            let session = try session(id)
            check = try engine { () throws(SessionError) in try session.checkAnswers(answers, now: now) }
        } catch {
            return reply(.failure(error))
        }
        guard !check.checks.isEmpty else { return reply(.success(check.errors)) }
        reply.deferring()
        calls.check(check.checks, for: self) { _, results in reply(.success(check.errors(applying: results))) }
    }

    /// `SetLocale` (since 1.1): changes the session's language. What plugins
    /// said in the old one is asked again before the reply: the options of
    /// provider fields, then the current step's field validators.
    func setLocale(_ id: String, _ tag: String, reply: Reply<Void>) {
        let now = clock.now
        let change: LocaleChange
        let context: PluginContext
        do throws(FlowdError) {
            change = try self.change(id, .anything) { session throws(SessionError) in try session.setLocale(tag, now: now) }
            let session = try session(id)
            context = PluginContext(
                flowID: session.flow.id, sessionID: id, locale: session.requestedLocale, callerUID: session.record.owner,
                answers: [:], options: [:], stateDirectory: "")
        } catch {
            return reply(.failure(error))
        }
        guard !change.checks.isEmpty || !change.providers.isEmpty else { return reply(.success(())) }
        reply.deferring()
        calls.provide(change.providers, context: context, for: self) { service, provided in
            service.localeChanged(id, change, provided: provided, reply: reply)
        }
    }

    /// Applies the options asked again after a change of language (a
    /// provider that failed leaves its options in the old language), then
    /// runs the field validators whose messages were in the old one.
    private func localeChanged(_ id: String, _ change: LocaleChange, provided: [ProvidedValue], reply: Reply<Void>) {
        do throws(FlowdError) {
            var session = try session(id)
            let start = repository.changeStart(session)
            for (request, value) in zip(change.providers, provided) {
                let metadata: LogMetadata = [.session: id, .plugin: request.provider.name, .field: request.field.id]
                guard case .options(.success(let options)) = value else {
                    events.log(.warning, "options provider failed after a change of language", metadata: metadata)
                    continue
                }
                do {
                    try session.setDynamicOptions(field: request.field.id, options)
                } catch {
                    events.log(.warning, "options provider's options were refused: \(error.message)", metadata: metadata)
                }
            }
            try commit(session, from: start, .anything)
        } catch {
            return reply(.failure(error))
        }
        guard !change.checks.isEmpty else { return reply(.success(())) }
        calls.check(change.checks, for: self) { service, results in
            reply { () throws(FlowdError) in
                var session = try service.session(id)
                let start = service.repository.changeStart(session)
                _ = session.applyPluginResults(results)
                // Plugin verdicts live in memory only; a validator's
                // normalized value is an answer change, and is stored.
                try service.commit(
                    session, from: start, .answers(), persist: session.record.revision != start.revision)
            }
        }
    }

    /// `Continue`: moves on, stays with field errors, or reaches the end of
    /// the flow and submits (answered when the action ends). Plugin
    /// validators run first when the step has any; answers changed while
    /// they ran are checked again, at most three rounds.
    func continueStep(_ id: String, reply: Reply<FieldErrors>) {
        continueStep(id, applying: nil, round: 1, reply: reply)
    }

    private func continueStep(_ id: String, applying results: [PluginCheckResult]?, round: Int, reply: Reply<FieldErrors>) {
        do throws(FlowdError) {
            var session = try session(id)
            let start = repository.changeStart(session)
            if let results { _ = session.applyPluginResults(results) }
            let now = clock.now
            switch try engine({ () throws(SessionError) in try session.continueStep(now: now) }) {
            case .moved(let completion):
                let mark = events.mark
                // The names the log line needs, taken before the commit
                // consumes the session (using it after made a copy of it).
                let flowID = session.flow.id
                try commit(consume session, from: start, .move(finishing: completion.step))
                stepCompleted(id, of: flowID, completion, at: mark)
                reply(.success([:]))
            case .stayed(let errors):
                try commit(consume session, from: start, .move)
                reply(.success(errors))
            case .checking(let checks):
                try commit(consume session, from: start, .move)
                guard round <= 3 else {
                    throw FlowdError(.invalidState, "the answers kept changing while they were checked; try again")
                }
                reply.deferring()
                calls.check(checks, for: self) { service, results in
                    service.continueStep(id, applying: results, round: round + 1, reply: reply)
                }
            case .noChange:
                reply(.success([:]))
            case .submit(let completion, let submitStart):
                let mark = events.mark
                let request = try beginSubmit(session, from: start, submitStart)
                if let completion { stepCompleted(id, of: session.flow.id, completion, at: mark) }
                guard let request else { return reply(.success([:])) }
                runSubmit(id, request, reply: reply.adapting { [:] })
            }
        } catch {
            reply(.failure(error))
        }
    }

    /// Queues `StepCompleted` ahead of the events queued from `mark` on (the
    /// next step's properties and announcement, a settled submit).
    private func stepCompleted(_ id: String, of flowID: String, _ completion: StepCompletion, at mark: Int) {
        events.insert(.stepCompleted(id: id, step: completion.step, answers: completion.answers), at: mark)
        events.log(
            .info, "session \(id) of \(flowID): step \(completion.step) completed", id: .stepCompleted,
            metadata: LogMetadata(texts: [(.session, id), (.flow, flowID), (.step, completion.step)]))
    }

    /// `Back`.
    func back(_ id: String) throws(FlowdError) {
        let now = clock.now
        try change(id, .move) { session throws(SessionError) in try session.back(now: now) }
    }

    /// `GoTo`.
    func goTo(_ id: String, step: String) throws(FlowdError) {
        let now = clock.now
        try change(id, .move) { session throws(SessionError) in try session.goTo(step, now: now) }
    }

    /// `Submit`: answered when the action ends, fails, times out or is
    /// cancelled (at once when there is no action to run).
    func submit(_ id: String, reply: Reply<Void>) {
        do throws(FlowdError) {
            var session = try session(id)
            let start = repository.changeStart(session)
            let now = clock.now
            let submitStart = try engine { () throws(SessionError) in try session.beginSubmit(now: now) }
            guard let request = try beginSubmit(session, from: start, submitStart) else { return reply(.success(())) }
            runSubmit(id, request, reply: reply)
        } catch {
            reply(.failure(error))
        }
    }

    /// Commits the start of a submit; returns the action to run, if any.
    private func beginSubmit(
        _ session: FlowSession, from start: ChangeStart, _ submitStart: SubmitStart
    ) throws(FlowdError) -> SubmitRequest? {
        switch submitStart {
        case .alreadySubmitted:
            return nil
        case .redirected(let step):
            try commit(session, from: start, .move)
            throw FlowdError(.validationFailed, "step \"\(step)\" is not finished; the session moved there")
        case .settledWithoutAction:
            try commit(session, from: start, .move)
            settled(session)
            return nil
        case .run(let request):
            try commit(session, from: start, .move)
            return request
        }
    }

    /// Runs the submit action of session `id`; `reply` is answered when it
    /// ends, fails, times out or is cancelled.
    private func runSubmit(_ id: String, _ request: SubmitRequest, reply: Reply<Void>) {
        reply.deferring()
        let calls = self.calls
        submits.start(id, reply: reply) { token in
            calls.submit(request, for: self) { service, outcome in service.submitEnded(id, token: token, outcome: outcome) }
        }
    }

    private func submitEnded(_ id: String, token: UInt64, outcome: SubmitOutcome) {
        guard let reply = submits.end(id, token: token) else { return }  // cancelled or closed
        do throws(FlowdError) {
            reply(try finishSubmit(id, outcome))
        } catch {
            logger.error("cannot record the end of a submit: \(error.message)", metadata: [.session: id])
            reply(.failure(error))
        }
    }

    /// Records how the submit of session `id` ended: the answer to its call.
    private func finishSubmit(_ id: String, _ outcome: SubmitOutcome) throws(FlowdError) -> Result<Void, FlowdError> {
        var session = try session(id)
        let start = repository.changeStart(session)
        let now = clock.now
        switch outcome {
        case .success(let receipt):
            try engine { () throws(SessionError) in try session.finishSubmit(receipt: receipt, now: now) }
            try commit(session, from: start, .move)
            settled(session)
            return .success(())
        case .failure(let failure, let detail):
            try engine { () throws(SessionError) in try session.failSubmit(failure, now: now) }
            try commit(session, from: start, .move)
            // The engine announced the failure (its text is the message):
            // the change's events carry that one announcement.
            let message = session.lastError ?? ""
            events.append(.submitFailed(id: id, message: message))
            logger.warning(
                "session \(id) of \(session.flow.id): submit failed: \(detail)", id: .submitFailed,
                metadata: [.session: id, .flow: session.flow.id])
            return .failure(FlowdError(failure == .timedOut ? .timeout : .submitFailed, message))
        case .cancelled:
            try engine { () throws(SessionError) in try session.cancelSubmit(now: now) }
            try commit(session, from: start, .move)
            return .failure(FlowdError(.cancelled, "the submit was cancelled"))
        }
    }

    private func settled(_ session: FlowSession) {
        let id = session.record.id
        events.append(.submitted(id: id, receipt: session.record.receipt ?? [:]))
        quota.settled(ownedBy: session.record.owner)
        logger.notice(
            "session \(id) of \(session.flow.id) submitted", id: .submitted, metadata: [.session: id, .flow: session.flow.id])
    }

    /// `Cancel`: stops a running submit quietly.
    func cancel(_ id: String) throws(FlowdError) {
        let now = clock.now
        try change(id, .move) { session throws(SessionError) in try session.cancelSubmit(now: now) }
        submits.cancel(id)?(.failure(FlowdError(.cancelled, "the submit was cancelled")))
    }

    /// `Close`: deletes the session.
    func close(_ id: String) throws(FlowdError) {
        _ = try session(id)
        try remove(id, reason: "closed")
    }
}

extension Reply {
    /// Answers with what `body` returns or throws.
    func callAsFunction(_ body: () throws(FlowdError) -> Value) {
        self(Result { () throws(FlowdError) -> Value in try body() })
    }
}
