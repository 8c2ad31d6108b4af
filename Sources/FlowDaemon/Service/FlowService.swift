import FlowEngine
import FlowKit
import FlowProtocol
import FlowStore
import FoundationEssentials
import Reactor
import Logging

/// The daemon's state and every operation of the D-Bus API.
///
/// An actor whose executor is the event loop: everything here runs on the
/// loop thread, so the bus front end enters it synchronously with
/// `assumeIsolated` (the fast path: no task, no thread hop), and plugin calls
/// suspend it without blocking other clients.
///
/// Each mutation follows the same steps: load the session (cache, else the
/// store), change a copy with the pure engine, write it to the store, and only
/// then make it the cached value and queue the events. A change that could
/// not be written is not acknowledged and leaves nothing behind.
///
/// A session is never held across an `await`: after a plugin call the
/// session is looked up again, and the engine ignores plugin results made
/// for answers that changed in the meantime.
actor FlowService {
    nonisolated let executor: LoopExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private let store: SessionStore
    private(set) var catalog: FlowCatalog
    private(set) var configuration: DaemonConfiguration
    let plugins: any PluginGateway
    /// The capabilities loaded plugins provide (flows are linted against it).
    let capabilities: CapabilityCatalog
    let logger: Logger
    let clock: any EngineClock
    let stateDirectory: String

    private var cache: SessionCache
    /// Live sessions, all uids. Kept in memory: the store's count is read once.
    private(set) var sessionCount: Int
    /// Sessions being created (waiting for providers), per uid, so that
    /// concurrent starts cannot pass the limits together.
    private var starting: [UInt32: Int] = [:]
    /// Live sessions per uid, as far as known (``ownedCount(_:)``).
    private var ownedCounts: [UInt32: Int] = [:]
    private var submits: [String: InFlightSubmit] = [:]
    private var nextSubmitToken: UInt64 = 0
    private var events: [QueuedEvent] = []
    private let decoder = JSONDecoder()

    /// A submit action that is running for a session.
    private struct InFlightSubmit {
        var token: UInt64
        var task: Task<Void, Never>
        /// Answers the call that started the submit (`Submit` or the last `Continue`).
        var reply: @Sendable (Result<Void, FlowdError>) -> Void
    }

    /// How a call that may need plugins continues.
    enum Next<Value: Sendable>: Sendable {
        /// The answer, final.
        case done(Value)
        /// Run these plugin checks, then call the matching `…Checked` method.
        case check([PluginCheck])
        /// Run this submit (``startSubmit(_:_:reply:)``).
        case submit(SubmitRequest)
    }

    /// Sessions kept in memory before the least recently used are dropped
    /// (they stay stored and are read back on their next call).
    ///
    /// A session in memory costs about 1.8 KiB of resident memory (measured
    /// by flowd-bench, docs/performance.md), so 16,384 of them cost about
    /// 30 MiB at most. Fewer made a call to a session outside the cache pay a
    /// store read, a JSON decode and a restore (about 60 µs) whenever more
    /// than a few thousand sessions were in use at once.
    static let defaultCacheCapacity = 16_384

    init(
        executor: LoopExecutor, store: SessionStore, configuration: DaemonConfiguration, stateDirectory: String,
        plugins: any PluginGateway, capabilities: CapabilityCatalog, logger: Logger, clock: any EngineClock,
        cacheCapacity: Int = FlowService.defaultCacheCapacity
    ) throws(FlowdError) {
        self.executor = executor
        self.store = store
        self.configuration = configuration
        self.stateDirectory = stateDirectory
        self.plugins = plugins
        self.capabilities = capabilities
        self.logger = logger
        self.clock = clock
        self.cache = SessionCache(capacity: cacheCapacity)
        self.catalog = FlowCatalog.load(directories: configuration.flowDirectories, capabilities: capabilities)
        do {
            self.sessionCount = try store.count()
        } catch {
            throw .failed("cannot count the stored sessions: \(error)")
        }
    }

    // MARK: - Events

    /// An event as queued: ready, or a change of a session whose
    /// `PropertiesChanged` and `Announcement` are worked out when the events
    /// are taken.
    private enum QueuedEvent {
        case event(ServiceEvent)
        case change(PendingChange)
    }

    /// A change of a session's properties, announced after the reply.
    ///
    /// Taking the two property snapshots (before and after) walks the path
    /// and localizes labels: about a fifth of a `SetAnswers` before its
    /// reply. The values they come from are kept instead (a `FlowSession` is
    /// a value, so this copies nothing) and the snapshots are taken by
    /// ``takeEvents()``, which runs after the reply.
    private struct PendingChange {
        /// The session's property values before the change, when known.
        var before: SessionProperties?
        /// The session before the change (for `before` when not known).
        var previous: FlowSession
        /// The session after the change.
        var current: FlowSession
        /// The cache version of `current` (``SessionCache/put(_:properties:)``).
        var version: UInt64
    }

    /// The value a change starts from: the session as read and, when the
    /// cache has them, its property values as last announced.
    struct Before {
        fileprivate var session: FlowSession
        fileprivate var properties: SessionProperties?
    }

    /// Hands over the events queued since the last call, oldest first. The
    /// property changes of sessions are worked out here: callers take the
    /// events after replying.
    func takeEvents() -> [ServiceEvent] {
        guard !events.isEmpty else { return [] }
        var ready: [ServiceEvent] = []
        ready.reserveCapacity(events.count + 1)
        for queued in events {
            switch queued {
            case .event(let event): ready.append(event)
            case .change(let change): resolve(change, into: &ready)
            }
        }
        events.removeAll(keepingCapacity: true)
        return ready
    }

    /// Queues `PropertiesChanged` (and `Announcement` on arrival at a step or
    /// a new announcement) for what differs between the two sides of `change`,
    /// and keeps the new values with the cached session (the next change's
    /// "before") if it is still the cached value.
    private func resolve(_ change: PendingChange, into ready: inout [ServiceEvent]) {
        let before = change.before ?? SessionProperties(change.previous)
        let after = SessionProperties(change.current)
        let id = change.current.record.id
        cache.setProperties(after, of: id, version: change.version)
        let changed = after.changed(since: before)
        if !changed.isEmpty { ready.append(.propertiesChanged(id: id, names: changed, now: after)) }
        if after.currentStep != before.currentStep || after.announcement != before.announcement {
            ready.append(.announcement(id: id, text: after.announcement))
        }
    }

    // MARK: - Loading and saving sessions

    /// The session `id`, from the cache or the store.
    ///
    /// - Throws: `NotFound` for an unknown id or a session whose flow is no
    ///   longer installed; `Failed` when the store cannot be read.
    func session(_ id: String) throws(FlowdError) -> FlowSession {
        if let cached = cache.get(id) { return cached }
        guard SessionID.isValid(id) else { throw .notFound("no session \"\(id)\"") }
        let stored: StoredSession?
        do {
            stored = try store.load(id: id)
        } catch {
            throw .failed("cannot read session \(id): \(error)")
        }
        guard let stored else { throw .notFound("no session \"\(id)\"") }
        guard let flow = catalog.flow(stored.flowID) else {
            throw .notFound("session \(id) runs flow \"\(stored.flowID)\", which is no longer installed")
        }
        let record: SessionRecord
        do {
            record = try decoder.decode(SessionRecord.self, from: Data(stored.payload))
        } catch {
            throw .failed("the stored state of session \(id) cannot be read: \(error)")
        }
        var session: FlowSession
        do {
            session = try FlowSession(restoring: record, flow: flow, clock: clock)
        } catch {
            throw FlowdError(error)
        }
        if session.state == .submitting && submits[id] == nil {
            // The daemon stopped during the submit: never re-submit on our own.
            session.markInterrupted(now: clock.now)
            try save(session)
            logger.warning(
                "submit of session \(id) was interrupted by a restart", id: .submitFailed,
                metadata: [.session: id, .flow: flow.id])
        }
        cache.put(session)
        return session
    }

    /// Reads a value of session `id` (loaded as by ``session(_:)``).
    func withSession<T>(_ id: String, _ body: (FlowSession) -> T) throws(FlowdError) -> T {
        body(try session(id))
    }

    /// Writes `session` to the store. Nothing else changes when this throws.
    private func save(_ session: FlowSession) throws(FlowdError) {
        let record = session.record
        let payload: [UInt8]
        do {
            // The JSON `JSONEncoder` would make, written directly: a tenth of the cost.
            payload = try record.encodedJSON()
        } catch {
            throw .failed("cannot encode session \(record.id): \(error)")
        }
        do {
            try store.upsert(
                StoredSession(
                    id: record.id, owner: record.owner, flowID: record.flowID, state: record.state.rawValue,
                    createdAt: record.createdAt, updatedAt: record.updatedAt, payload: payload))
        } catch {
            logger.error("cannot save session \(record.id): \(error.description)", metadata: [.session: record.id])
            throw .failed("the change could not be saved; it was not made")
        }
    }

    /// Saves `session` (when `persist`), makes it the cached value and queues
    /// `PropertiesChanged` (and `Announcement` on arrival at a step) for what
    /// differs from `before`, worked out when the events are taken.
    private func commit(_ session: FlowSession, before: Before, persist: Bool = true) throws(FlowdError) {
        if persist { try save(session) }
        let version = cache.put(session)
        events.append(.change(PendingChange(
            before: before.properties, previous: before.session, current: session, version: version)))
    }

    /// Where a change of `session`, a value just read from the cache, starts:
    /// the session and the property values stored with it at its last change
    /// (clients were told those), if any. Computing them walks the path
    /// several times, so a change computes them once (after) instead of twice.
    private func properties(of session: FlowSession) -> Before {
        Before(session: session, properties: cache.properties(of: session.record.id))
    }

    // MARK: - Authorization

    /// Refuses `uid` unless it owns session `id` or is root. Fails closed:
    /// a session that cannot be loaded refuses everyone.
    func authorize(_ id: String, uid: UInt32) throws(FlowdError) {
        let owner: UInt32
        if let cached = cache.owner(of: id) {
            owner = cached
        } else {
            owner = try session(id).record.owner
        }
        guard uid == owner || uid == 0 else {
            throw .accessDenied("session \(id) belongs to another user")
        }
    }

    // MARK: - Manager

    /// Starts a session of `flowID` for `uid`: runs the flow's options and
    /// prefill providers, then stores the new session.
    func startSession(
        flowID: String, locale requested: String?, prefill: [String: AnswerValue],
        answers: [String: AnswerValue] = [:], uid: UInt32
    ) async throws(FlowdError) -> String {
        guard let flow = catalog.flow(flowID) else { throw .notFound("no flow \"\(flowID)\"") }
        let locale = LocaleFallback.normalize(requested ?? "en")
        guard LocaleFallback.isWellFormed(locale) else {
            throw .invalidArgs("\"\(requested ?? "")\" is not a locale tag (expected one like \"en\" or \"pt-BR\")")
        }
        try reserveSlot(for: uid)
        defer { releaseSlot(for: uid) }
        let id = SessionID.make()

        var dynamicOptions: [String: [ChoiceOption]] = [:]
        var providedPrefill: [String: AnswerValue] = [:]
        for request in flow.providerRequests(locale: locale) {
            let context = PluginContext(
                flowID: flow.id, sessionID: id, locale: locale, callerUID: uid, answers: [:],
                options: request.provider.options, stateDirectory: stateDirectory)
            var metadata: LogMetadata = [.flow: flow.id, .capability: request.provider.name, .field: request.field.id]
            metadata[.plugin] = plugins.pluginName(
                providing: request.kind == .options ? .optionsProvider : .prefillProvider, request.provider.name)
            switch request.kind {
            case .options:
                switch await plugins.options(request.provider.name, field: request.field, context: context) {
                case .success(let options):
                    dynamicOptions[request.field.id] = options
                case .failure(let detail):
                    logger.error("options provider failed: \(detail)", metadata: metadata)
                    throw FlowdError(
                        .pluginFailed, "the options of field \(request.field.id) could not be loaded (\(request.provider.name) failed)")
                case .timedOut:
                    logger.error("options provider timed out", metadata: metadata)
                    throw FlowdError(.timeout, "the options of field \(request.field.id) took too long to load")
                }
            case .prefill:
                switch await plugins.prefill(request.provider.name, field: request.field, context: context) {
                case .success(let value):
                    if let value { providedPrefill[request.field.id] = value }
                case .failure(let detail):
                    // A prefill is a convenience: the person can still type the value.
                    logger.warning("prefill provider failed: \(detail)", metadata: metadata)
                case .timedOut:
                    logger.warning("prefill provider timed out", metadata: metadata)
                }
            }
        }

        var session: FlowSession
        do {
            session = try FlowSession(
                flow: flow, id: id, owner: uid, locale: locale, clock: clock,
                prefill: providedPrefill.merging(prefill) { _, fromCaller in fromCaller },
                dynamicOptions: dynamicOptions)
        } catch {
            guard !providedPrefill.isEmpty else { throw FlowdError(error) }
            // A provider's value that does not fit the field is its fault, not
            // the caller's: start without provider values.
            logger.warning("a prefill provider's value was refused: \(error.message)", metadata: [.flow: flow.id])
            do {
                session = try FlowSession(
                    flow: flow, id: id, owner: uid, locale: locale, clock: clock, prefill: prefill,
                    dynamicOptions: dynamicOptions)
            } catch {
                throw FlowdError(error)
            }
        }
        if !answers.isEmpty {
            // An answer file (issue 17): the session starts where its answers
            // lead, as far as they are valid; it never submits.
            let now = clock.now
            do {
                _ = try await session.run(answers: answers, now: now, validating: plugins)
            } catch {
                throw FlowdError(error)
            }
        }
        try save(session)
        cache.put(session)
        sessionCount += 1
        if let owned = ownedCounts[uid] { ownedCounts[uid] = owned + 1 }
        events.append(.event(.sessionNew(id: id)))
        events.append(.event(.sessionCountChanged))
        logAfterReply(.info, "session started", id: .sessionStarted, metadata: [.session: id, .flow: flow.id, .uid: uid])
        return id
    }

    private func reserveSlot(for uid: UInt32) throws(FlowdError) {
        let limits = configuration.limits
        let startingTotal = starting.values.reduce(0, +)
        guard sessionCount + startingTotal < limits.maxSessions else {
            throw .limitExceeded("the daemon holds its maximum of \(limits.maxSessions) sessions")
        }
        let owned = try ownedCount(uid)
        guard owned + starting[uid, default: 0] < limits.maxSessionsPerUser else {
            throw .limitExceeded("uid \(uid) already has the maximum of \(limits.maxSessionsPerUser) sessions")
        }
        starting[uid, default: 0] += 1
    }

    /// The number of live sessions `uid` owns: counted in the store the
    /// first time (a range count on the owner index, as long as the uid's
    /// sessions: a uid with 100,000 sessions made every StartSession scan
    /// them), then kept by start and remove. Forgotten at every expiry pass,
    /// so a change made to the store by hand counts within a minute.
    private func ownedCount(_ uid: UInt32) throws(FlowdError) -> Int {
        if let known = ownedCounts[uid] { return known }
        let counted: Int
        do {
            counted = try store.count(owner: uid)
        } catch {
            throw .failed("cannot count the caller's sessions: \(error)")
        }
        ownedCounts[uid] = counted
        return counted
    }

    private func releaseSlot(for uid: UInt32) {
        let n = starting[uid, default: 1] - 1
        starting[uid] = n > 0 ? n : nil
    }

    /// The sessions `uid` may see: its own, or all of them for root.
    func listSessions(uid: UInt32) throws(FlowdError) -> [SessionSummary] {
        do {
            return try store.summaries(owner: uid == 0 ? nil : uid)
        } catch {
            throw .failed("cannot list sessions: \(error)")
        }
    }

    /// Re-reads the flows with a new configuration. Limits take effect at
    /// once; the bus and the state directory only at the next start.
    /// Cached sessions of a flow that changed move to the new definition now
    /// (the engine drops answers that no longer fit, and keeps the secure
    /// answers held in memory); sessions of a flow that
    /// is gone stay stored but answer `NotFound` until it comes back.
    func reload(_ newConfiguration: DaemonConfiguration) -> FlowCatalog {
        var next = newConfiguration
        next.bus = configuration.bus
        next.stateDirectory = configuration.stateDirectory
        configuration = next
        catalog = FlowCatalog.load(directories: next.flowDirectories, capabilities: capabilities)
        for id in cache.ids {
            guard let cached = cache.peek(id), submits[id] == nil else { continue }
            guard let flow = catalog.flow(cached.flow.id) else {
                cache.remove(id)
                continue
            }
            guard flow.fingerprint != cached.flow.fingerprint else { continue }
            cache.remove(id)
            if let restored = try? cached.rebased(onto: flow) {
                // Announce what the new definition changed (StepCount, Path,
                // titles in labels…), as for any other change.
                let after = SessionProperties(restored)
                let names = after.changed(since: SessionProperties(cached))
                if !names.isEmpty { events.append(.event(.propertiesChanged(id: id, names: names, now: after))) }
                cache.put(restored, properties: after)
            }
        }
        return catalog
    }

    /// Finds sessions that were submitting when the daemon stopped and marks
    /// them failed ("interrupted"). Runs once at start-up.
    func recoverInterruptedSubmits() -> Int {
        let ids: [String]
        do {
            ids = try store.ids(inState: SessionState.submitting.rawValue)
        } catch {
            logger.error("cannot look for interrupted submits: \(error.description)")
            return 0
        }
        var recovered = 0
        for id in ids where (try? session(id)) != nil { recovered += 1 }
        return recovered
    }

    /// Deletes sessions idle for longer than the configured time. Returns how
    /// many went.
    func expireIdleSessions() -> Int {
        ownedCounts.removeAll()
        // Microseconds, as the clock: `IdleTimeout=1500ms` means 1.5 s, not 1 s.
        let idle = configuration.limits.idleTimeout.components
        let cutoff = clock.now - (idle.seconds * 1_000_000 + idle.attoseconds / 1_000_000_000_000)
        var removed = 0
        while true {
            let ids: [String]
            do {
                ids = try store.expired(before: cutoff, limit: 500)
            } catch {
                logger.error("cannot look for idle sessions: \(error.description)")
                return removed
            }
            var progressed = false
            for id in ids where submits[id] == nil {
                if (try? remove(id, reason: "expired")) != nil {
                    removed += 1
                    progressed = true
                }
            }
            if ids.count < 500 || !progressed { return removed }
        }
    }

    private func remove(_ id: String, reason: String) throws(FlowdError) {
        let deleted: Bool
        do {
            deleted = try store.delete(id: id)
        } catch {
            throw .failed("cannot delete session \(id): \(error)")
        }
        let owner = cache.peek(id)?.record.owner
        cache.remove(id)
        if let inFlight = submits.removeValue(forKey: id) {
            inFlight.task.cancel()
            inFlight.reply(.failure(FlowdError(.cancelled, "the session was closed")))
        }
        guard deleted else { return }
        sessionCount = max(0, sessionCount - 1)
        if let owner, let owned = ownedCounts[owner] {
            ownedCounts[owner] = max(0, owned - 1)
        } else if owner == nil {
            ownedCounts.removeAll()  // the owner is not known here: count again when needed
        }
        events.append(.event(.sessionRemoved(id: id)))
        events.append(.event(.sessionCountChanged))
        logAfterReply(.info, "session removed (\(reason))", metadata: [.session: id])
    }

    // MARK: - Session methods

    /// `SetAnswers`.
    func setAnswers(_ id: String, _ answers: [String: AnswerValue]) throws(FlowdError) -> Next<FieldErrors> {
        let now = clock.now
        let result = try change(id) { session throws(SessionError) in try session.setAnswers(answers, now: now) }
        return result.checks.isEmpty ? .done(result.errors) : .check(result.checks)
    }

    /// The end of a `SetAnswers` that needed plugin checks.
    func setAnswersChecked(_ id: String, _ results: [PluginCheckResult]) throws(FlowdError) -> FieldErrors {
        var session = try session(id)
        let before = properties(of: session)
        let errors = session.applyPluginResults(results)
        // Plugin verdicts live in memory only; nothing new to store.
        try commit(session, before: before, persist: false)
        return errors
    }

    /// `Continue`. A `.check` answer is followed by ``continueChecked(_:_:)``.
    func continueStep(_ id: String) throws(FlowdError) -> Next<FieldErrors> {
        try continueStep(id, applying: nil)
    }

    /// The second half of a `Continue` that needed plugin checks.
    func continueChecked(_ id: String, _ results: [PluginCheckResult]) throws(FlowdError) -> Next<FieldErrors> {
        try continueStep(id, applying: results)
    }

    /// `Continue`, after taking in the plugin verdicts `results` when given.
    /// What is stored depends on the outcome (``finishContinue(_:before:outcome:)``).
    private func continueStep(_ id: String, applying results: [PluginCheckResult]?) throws(FlowdError) -> Next<FieldErrors> {
        var session = try session(id)
        let before = properties(of: session)
        if let results { _ = session.applyPluginResults(results) }
        let now = clock.now
        let outcome = try engine { () throws(SessionError) in try session.continueStep(now: now) }
        return try finishContinue(session, before: before, outcome: outcome)
    }

    private func finishContinue(
        _ session: FlowSession, before: Before, outcome: ContinueOutcome
    ) throws(FlowdError) -> Next<FieldErrors> {
        switch outcome {
        case .moved(let completion):
            let firstEvent = events.count
            try commit(session, before: before)
            stepCompleted(session, completion, before: firstEvent)
            return .done([:])
        case .stayed(let errors):
            try commit(session, before: before)
            return .done(errors)
        case .checking(let checks):
            try commit(session, before: before)
            return .check(checks)
        case .noChange:
            return .done([:])
        case .submit(let completion, let start):
            let firstEvent = events.count
            let next = try beginSubmit(session, before: before, start: start)
            if let completion { stepCompleted(session, completion, before: firstEvent) }
            return next.map { _ in [:] }
        }
    }

    /// Queues `StepCompleted` ahead of the events the same call queued from
    /// `index` on (the next step's properties and announcement, a settled
    /// submit), so that clients hear what happened in the order it happened.
    private func stepCompleted(_ session: FlowSession, _ completion: StepCompletion, before index: Int) {
        let id = session.record.id
        events.insert(
            .event(.stepCompleted(id: id, step: completion.step, answers: completion.answers)),
            at: min(max(index, 0), events.count))
        logAfterReply(
            .info, "step completed", id: .stepCompleted,
            metadata: [.session: id, .flow: session.flow.id, .step: completion.step])
    }

    /// Queues a log entry to be written with the events, after the reply
    /// (``ServiceEvent/log(_:)``); nothing is queued when the level is off.
    private func logAfterReply(
        _ level: LogLevel, _ message: String, id: MessageID? = nil, metadata: LogMetadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        guard logger.isEnabled(level) else { return }
        events.append(.event(.log(DeferredLog(
            level: level, message: message, id: id, metadata: metadata, file: file, function: function, line: line))))
    }

    /// `Back`.
    func back(_ id: String) throws(FlowdError) {
        let now = clock.now
        try change(id) { session throws(SessionError) in try session.back(now: now) }
    }

    /// `GoTo`.
    func goTo(_ id: String, step: String) throws(FlowdError) {
        let now = clock.now
        try change(id) { session throws(SessionError) in try session.goTo(step, now: now) }
    }

    /// `Submit`. `.submit` is followed by ``startSubmit(_:_:reply:)``.
    func submit(_ id: String) throws(FlowdError) -> Next<Void> {
        var session = try session(id)
        let before = properties(of: session)
        let now = clock.now
        let start = try engine { () throws(SessionError) in try session.beginSubmit(now: now) }
        return try beginSubmit(session, before: before, start: start)
    }

    private func beginSubmit(
        _ session: FlowSession, before: Before, start: SubmitStart
    ) throws(FlowdError) -> Next<Void> {
        switch start {
        case .alreadySubmitted:
            return .done(())
        case .redirected(let step):
            try commit(session, before: before)
            throw FlowdError(.validationFailed, "step \"\(step)\" is not finished; the session moved there")
        case .settledWithoutAction:
            try commit(session, before: before)
            settled(session)
            return .done(())
        case .run(let request):
            try commit(session, before: before)
            return .submit(request)
        }
    }

    private func settled(_ session: FlowSession) {
        let id = session.record.id
        events.append(.event(.submitted(id: id, receipt: session.record.receipt ?? [:])))
        logger.notice("session submitted", id: .submitted, metadata: [.session: id, .flow: session.flow.id])
    }

    /// Runs the submit action for `request` and answers `reply` when it ends,
    /// fails, times out or is cancelled.
    func startSubmit(
        _ id: String, _ request: SubmitRequest, reply: @escaping @Sendable (Result<Void, FlowdError>) -> Void
    ) {
        nextSubmitToken &+= 1
        let token = nextSubmitToken
        let plugins = self.plugins
        let task = Task {
            let outcome = await plugins.submit(request)
            self.submitEnded(id, token: token, outcome: outcome)
        }
        submits[id] = InFlightSubmit(token: token, task: task, reply: reply)
    }

    private func submitEnded(_ id: String, token: UInt64, outcome: SubmitOutcome) {
        guard let inFlight = submits[id], inFlight.token == token else { return }  // cancelled or closed
        submits[id] = nil
        let result: Result<Void, FlowdError>
        do throws(FlowdError) {
            var session = try session(id)
            let before = properties(of: session)
            let now = clock.now
            switch outcome {
            case .success(let receipt):
                try engine { () throws(SessionError) in try session.finishSubmit(receipt: receipt, now: now) }
                try commit(session, before: before)
                settled(session)
                result = .success(())
            case .failure(let failure, let detail):
                try engine { () throws(SessionError) in try session.failSubmit(failure, now: now) }
                try commit(session, before: before)
                let message = session.lastError ?? ""
                events.append(.event(.submitFailed(id: id, message: message)))
                events.append(.event(.announcement(id: id, text: message)))
                logger.warning(
                    "submit failed: \(detail)", id: .submitFailed,
                    metadata: [.session: id, .flow: session.flow.id])
                result = .failure(FlowdError(failure == .timedOut ? .timeout : .submitFailed, message))
            case .cancelled:
                try engine { () throws(SessionError) in try session.cancelSubmit(now: now) }
                try commit(session, before: before)
                result = .failure(FlowdError(.cancelled, "the submit was cancelled"))
            }
        } catch {
            logger.error("cannot record the end of a submit: \(error.message)", metadata: [.session: id])
            result = .failure(error)
        }
        inFlight.reply(result)
    }

    /// `Cancel`: stops a running submit quietly.
    func cancel(_ id: String) throws(FlowdError) {
        let now = clock.now
        try change(id) { session throws(SessionError) in try session.cancelSubmit(now: now) }
        if let inFlight = submits.removeValue(forKey: id) {
            inFlight.task.cancel()
            inFlight.reply(.failure(FlowdError(.cancelled, "the submit was cancelled")))
        }
    }

    /// `Close`: deletes the session.
    func close(_ id: String) throws(FlowdError) {
        _ = try session(id)
        try remove(id, reason: "closed")
    }

    /// Cancels every running submit (at shutdown): their sessions are marked
    /// interrupted at the next start, never re-submitted.
    func cancelAllSubmits() {
        for (_, inFlight) in submits {
            inFlight.task.cancel()
            inFlight.reply(.failure(FlowdError(.cancelled, "flowd is stopping")))
        }
        submits.removeAll()
    }

    /// Number of sessions held in memory (for the status line).
    var cachedSessionCount: Int { cache.count }
    /// Number of submits running.
    var runningSubmitCount: Int { submits.count }

    /// Runs an engine mutation, turning its error into the contract's.
    private func engine<T>(_ body: () throws(SessionError) -> T) throws(FlowdError) -> T {
        do {
            return try body()
        } catch {
            throw FlowdError(error)
        }
    }

    /// The common shape of a session method: load session `id`, apply
    /// `body` to it and commit the result (stored, cached, announced after
    /// the reply). When `body` throws nothing is stored or announced.
    @discardableResult
    private func change<T>(_ id: String, _ body: (inout FlowSession) throws(SessionError) -> T) throws(FlowdError) -> T {
        var session = try session(id)
        let before = properties(of: session)
        let result = try engine { () throws(SessionError) in try body(&session) }
        try commit(session, before: before)
        return result
    }
}

extension FlowService.Next {
    /// The same continuation with the final value transformed.
    func map<U: Sendable>(_ transform: (Value) -> U) -> FlowService.Next<U> {
        switch self {
        case .done(let v): return .done(transform(v))
        case .check(let c): return .check(c)
        case .submit(let r): return .submit(r)
        }
    }
}
