import DBus
import FlowCLI
import FlowClient
import FlowEngine
import FlowKit
import FlowProtocol
import Foundation

/// The repository, found from this file's path.
enum Repository {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static var flowsDirectory: String { root.appendingPathComponent("flows").path }
}

/// A stand-in for flowd that runs the real engine (FlowEngine's session
/// state machine) in the test process, so commands and the wizard meet real
/// navigation, validation, branching, review and submit without a bus.
/// Plugin validators pass; options providers answer fixed lists.
///
/// Everything it returns goes through the contract's codec as it would over
/// the bus: the wire struct is built from the engine's view with the
/// daemon's function, encoded to its D-Bus value, and decoded with the
/// client's decoder. So every command and wizard test also runs the real
/// mapping.
final class EngineService: FlowService, @unchecked Sendable {
    private(set) var flows: [String: FlowDefinition] = [:]
    private(set) var sessions: [String: FlowSession] = [:]
    private var nextID = 0x1234
    /// The next submits fail with this (one per entry).
    var submitFailures: [SubmitFailure] = []
    /// Every call, in order, as "Member" or "Member(session)".
    private(set) var calls: [String] = []
    /// Events the watch stream hands out, per session; the stream ends after them.
    var queuedEvents: [String: [FlowEvent]] = [:]
    /// The last `SetAnswers` argument per session, to check what was typed.
    private(set) var lastAnswers: [String: [String: DBusValue]] = [:]
    /// The locale a session was started with, as asked.
    private(set) var requestedLocales: [String: String?] = [:]

    let clock = FixedClock(now: 1_750_000_000_000_000, today: CivilDate(iso: "2025-06-16")!)

    init(flowsDirectory: String = Repository.flowsDirectory) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: flowsDirectory) where name.hasSuffix(".json") {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: flowsDirectory + "/" + name)))
            let flow = try FlowLoader.load(bytes, fileName: name, capabilities: .any)
            flows[flow.id] = flow
        }
    }

    /// Adds a flow from JSON text.
    func add(_ json: String) throws {
        let flow = try FlowLoader.load(json, fileName: "inline.json", capabilities: .any)
        flows[flow.id] = flow
    }

    /// The error flowd sends for `error`, as the client reports it.
    static func refusal(_ name: FlowErrorName, _ message: String) -> FlowClientError {
        FlowClientError(.flowd(name), message, underlying: DBusError(name: name.errorName, message: message))
    }

    /// A wire decoder's failure: the test's own mapping is broken.
    static func mismatch(_ error: WireError) -> FlowClientError {
        FlowClientError(.protocolMismatch, "the fake's reply does not decode: \(error.message)")
    }

    private func session(_ id: String) throws(FlowClientError) -> FlowSession {
        guard let session = sessions[id] else { throw Self.refusal(.notFound, "no session \(id)") }
        return session
    }

    private func mutate<T>(_ id: String, _ body: (inout FlowSession) throws(SessionError) -> T) throws(FlowClientError) -> T {
        var session = try self.session(id)
        do {
            let result = try body(&session)
            let before = sessions[id]
            sessions[id] = session
            if before?.state != session.state || before?.currentStepID != session.currentStepID {
                queuedEvents[id, default: []].append(.propertiesChanged(
                    session: id, [.state: .string(session.state.rawValue), .currentStep: .string(session.currentStepID)]))
            }
            return result
        } catch {
            throw Self.refusal(FlowErrorName(error.kind), error.message)
        }
    }

    // MARK: Manager

    func listFlows() async throws(FlowClientError) -> [FlowSummary] {
        calls.append("ListFlows")
        do throws(WireError) {
            return try flows.values.map { flow throws(WireError) in try FlowSummary(dbusValue: FlowSummary(flow).dbusValue) }
        } catch {
            throw Self.mismatch(error)
        }
    }

    func startSession(
        flow: String, locale: String?, prefill: [String: DBusValue], answers: [String: DBusValue]
    ) async throws(FlowClientError) -> String {
        calls.append(answers.isEmpty ? "StartSession" : "StartSession(answers)")
        guard let definition = flows[flow] else { throw Self.refusal(.notFound, "no flow \(flow)") }
        // Ids that differ at the front, as flowd's random ones do.
        let id = String(format: "%08x", nextID) + String(repeating: "0", count: 24)
        nextID += 1
        var options: [String: [ChoiceOption]] = [:]
        for request in definition.providerRequests(locale: locale ?? "en") where request.kind == .options {
            switch request.provider.name {
            case "flowd.weekdays":
                options[request.field.id] = [
                    ChoiceOption(id: "2025-06-17", label: "Tuesday 17 June"),
                    ChoiceOption(id: "2025-06-18", label: "Wednesday 18 June"),
                ]
            default:
                options[request.field.id] = [ChoiceOption(id: "09:00", label: "09:00"), ChoiceOption(id: "09:30", label: "09:30")]
            }
        }
        var typed: [String: AnswerValue] = [:]
        for (key, value) in answers {
            guard let answer = Self.answer(value) else {
                throw Self.refusal(.invalidArgs, "\(key): unsupported type \(value.signature)")
            }
            typed[key] = answer
        }
        do {
            var session = try FlowSession(
                flow: definition, id: id, owner: 1000, locale: locale ?? "en", clock: clock, dynamicOptions: options)
            // As flowd does: the answers drive the new session, plugins accepting everything.
            var outcome = try session.run(answers: typed, now: clock.now)
            while case .checking(let checks) = outcome {
                _ = session.applyPluginResults(checks.map { PluginCheckResult(check: $0, outcome: PluginCheckOutcome(fieldMessage: nil)) })
                outcome = try session.run(answers: typed, now: clock.now)
            }
            sessions[id] = session
        } catch {
            throw Self.refusal(.invalidArgs, error.message)
        }
        requestedLocales[id] = locale
        return id
    }

    func listSessions() async throws(FlowClientError) -> [SessionListing] {
        calls.append("ListSessions")
        do throws(WireError) {
            return try sessions.compactMap { id, session in SessionListing(id: id, flowID: session.flow.id, state: session.state) }
                .map { listing throws(WireError) in try SessionListing(dbusValue: listing.dbusValue) }
        } catch {
            throw Self.mismatch(error)
        }
    }

    var pluginList: [PluginSummary] = [
        PluginSummary(name: "spool", version: "1.0", kinds: ["submit"], capabilities: ["flowd.spool"], status: .loaded),
        PluginSummary(name: "broken", version: "0.1", kinds: ["validator"], status: .failed,
                      error: "ABI 2 is not the daemon's ABI 1"),
    ]

    func listPlugins() async throws(FlowClientError) -> [PluginSummary] {
        calls.append("ListPlugins")
        do throws(WireError) {
            return try pluginList.map { plugin throws(WireError) in try PluginSummary(dbusValue: plugin.dbusValue) }
        } catch {
            throw Self.mismatch(error)
        }
    }

    /// The status the fake reports: its sessions and plugins, a refused flow,
    /// started at ``statusStartedAt``.
    var statusStartedAt: UInt64 = 1_764_000_000_000_000
    /// The flows the status lists as served.
    var servedFlows = ["trip"]
    /// What `Reload` does: the flows served after it, or the refusal it answers with.
    var reloadOutcome: Result<[String], FlowClientError> = .success(["trip"])

    func reload() async throws(FlowClientError) {
        calls.append("Reload")
        servedFlows = try reloadOutcome.get()
    }

    func status() async throws(FlowClientError) -> DaemonStatus {
        calls.append("GetStatus")
        var byState: [String: UInt32] = [:]
        for session in sessions.values { byState[session.state.rawValue, default: 0] += 1 }
        var plugins: [String: UInt32] = [:]
        for plugin in pluginList { plugins[plugin.status.rawValue, default: 0] += 1 }
        let status = DaemonStatus(
            version: "0.1.1", startedAt: statusStartedAt, sessions: byState, flows: servedFlows,
            refusedFlows: [.init(file: "/etc/flowd/flows/bad.json", reason: "/etc/flowd/flows/bad.json: $.steps: expected an array")],
            plugins: plugins,
            failedPlugins: Dictionary(uniqueKeysWithValues: pluginList.filter { $0.status == .failed }.map { ("/p/\($0.name).so", $0.error) }),
            limits: ["MaxSessionsPerUser": .uint32(64), "IdleTimeout": .uint64(604_800)], stateDirectory: "/var/lib/flowd",
            stateBytes: 1_234_567)
        do throws(WireError) {
            return try DaemonStatus(dbusValue: status.dbusValue)
        } catch {
            throw Self.mismatch(error)
        }
    }

    // MARK: Session

    func step(_ id: String) async throws(FlowClientError) -> StepPage {
        calls.append("GetStep")
        let view = try session(id).currentStep()
        do throws(WireError) {
            return try StepPage(dbusValue: StepPage(view).dbusValue)
        } catch {
            throw Self.mismatch(error)
        }
    }

    func setAnswers(_ id: String, _ answers: [String: DBusValue]) async throws(FlowClientError) -> [String: String] {
        calls.append("SetAnswers")
        lastAnswers[id] = answers
        var values: [String: AnswerValue] = [:]
        for (key, value) in answers {
            guard let answer = Self.answer(value) else {
                throw Self.refusal(.invalidArgs, "\(key): unsupported type \(value.signature)")
            }
            values[key] = answer
        }
        let now = clock.now
        return try mutate(id) { (session) throws(SessionError) in
            let result = try session.setAnswers(values, now: now)
            if result.checks.isEmpty { return result.errors }
            return session.applyPluginResults(result.checks.map { PluginCheckResult(check: $0, outcome: PluginCheckOutcome(fieldMessage: nil)) })
        }
    }

    func continueStep(_ id: String) async throws(FlowClientError) -> [String: String] {
        calls.append("Continue")
        let now = clock.now
        while true {
            let outcome = try mutate(id) { (session) throws(SessionError) in try session.continueStep(now: now) }
            switch outcome {
            case .moved(let completion):
                queuedEvents[id, default: []].append(.session(id, .stepCompleted(
                    step: completion.step, answers: WireValue.answers(completion.answers))))
                return [:]
            case .stayed(let errors): return errors
            case .checking(let checks):
                _ = try mutate(id) { (session) throws(SessionError) in
                    session.applyPluginResults(checks.map { PluginCheckResult(check: $0, outcome: PluginCheckOutcome(fieldMessage: nil)) })
                }
            case .submit(_, let start):
                try finish(id, start)
                return [:]
            case .noChange: return [:]
            }
        }
    }

    private func finish(_ id: String, _ start: SubmitStart) throws(FlowClientError) {
        let now = clock.now
        switch start {
        case .redirected(let step):
            // flowd's own message (FlowDaemon's FlowService.beginSubmit).
            throw Self.refusal(.validationFailed, "step \"\(step)\" is not finished; the session moved there")
        case .settledWithoutAction, .alreadySubmitted:
            return
        case .run:
            if !submitFailures.isEmpty {
                let failure = submitFailures.removeFirst()
                try mutate(id) { (session) throws(SessionError) in try session.failSubmit(failure, now: now) }
                let message = (try? self.session(id).lastError) ?? nil
                queuedEvents[id, default: []].append(.session(id, .submitFailed(message: message ?? "")))
                throw Self.refusal(.submitFailed, message ?? "failed")
            }
            try mutate(id) { (session) throws(SessionError) in
                try session.finishSubmit(receipt: SubmitReceipt(["reference": .string("R-1")]), now: now)
            }
            queuedEvents[id, default: []].append(.session(id, .submitted(receipt: ["reference": .string("R-1")])))
        }
    }

    func back(_ id: String) async throws(FlowClientError) {
        calls.append("Back")
        let now = clock.now
        try mutate(id) { (session) throws(SessionError) in try session.back(now: now) }
    }

    func goTo(_ id: String, step: String) async throws(FlowClientError) {
        calls.append("GoTo(\(step))")
        let now = clock.now
        try mutate(id) { (session) throws(SessionError) in try session.goTo(step, now: now) }
    }

    func review(_ id: String) async throws(FlowClientError) -> ReviewPage {
        calls.append("GetReview")
        let view = try session(id).review()
        do throws(WireError) {
            return try ReviewPage(dbusArguments: ReviewPage(view).dbusArguments)
        } catch {
            throw Self.mismatch(error)
        }
    }

    func answers(_ id: String) async throws(FlowClientError) -> [String: DBusValue] {
        calls.append("GetAnswers")
        return WireValue.answers(try session(id).answersOnPath(includeSecure: false))
    }

    func submit(_ id: String) async throws(FlowClientError) {
        calls.append("Submit")
        let now = clock.now
        let start = try mutate(id) { (session) throws(SessionError) in try session.beginSubmit(now: now) }
        try finish(id, start)
    }

    func cancel(_ id: String) async throws(FlowClientError) {
        calls.append("Cancel")
        _ = try session(id)
    }

    func close(_ id: String) async throws(FlowClientError) {
        calls.append("Close")
        _ = try session(id)
        sessions[id] = nil
        queuedEvents[id, default: []].append(.manager(.sessionRemoved(id: id)))
    }

    func properties(_ id: String) async throws(FlowClientError) -> SessionProperties {
        calls.append("GetAll")
        let properties = SessionProperties(try session(id))
        var all: [String: DBusValue] = [:]
        for property in SessionProperty.allCases { all[property.rawValue] = properties.value(of: property) }
        do throws(WireError) {
            return try SessionProperties(dbus: all)
        } catch {
            throw Self.mismatch(error)
        }
    }

    func events(for id: String?) async throws(FlowClientError) -> FlowEvents {
        calls.append("Watch")
        let events = FlowEvents()
        if let id {
            _ = try session(id)
            for event in queuedEvents.removeValue(forKey: id) ?? [] { events.yield(event) }
        }
        // A fake has no more to say: the stream ends, and a test that waits
        // for more fails instead of hanging.
        events.finish()
        return events
    }

    func ping() async throws(FlowClientError) {
        calls.append("Ping")
    }

    // MARK: what callers send in (the daemon's inbound parsing, simplified)

    static func answer(_ value: DBusValue) -> AnswerValue? {
        switch value {
        case .string(let s): return .text(s)
        case .bool(let b): return .bool(b)
        case .double(let d): return .number(d)
        case .array(_, let items):
            let strings = items.compactMap(\.string)
            return strings.count == items.count ? .list(strings) : nil
        default: return value.integer.map { .integer($0) }
        }
    }
}

/// A service whose daemon is not there: every call fails as flowctl's does then.
final class AbsentService: FlowService, @unchecked Sendable {
    let error = FlowClientError(
        .notRunning, "flowd is not running on the bus",
        underlying: DBusError(name: .serviceUnknown, message: "The name org.flowd.Flow1 was not provided by any .service files"))
    func listFlows() async throws(FlowClientError) -> [FlowSummary] { throw error }
    func startSession(
        flow: String, locale: String?, prefill: [String: DBusValue], answers: [String: DBusValue]
    ) async throws(FlowClientError) -> String { throw error }
    func listSessions() async throws(FlowClientError) -> [SessionListing] { throw error }
    func listPlugins() async throws(FlowClientError) -> [PluginSummary] { throw error }
    func status() async throws(FlowClientError) -> DaemonStatus { throw error }
    func reload() async throws(FlowClientError) { throw error }
    func step(_ session: String) async throws(FlowClientError) -> StepPage { throw error }
    func setAnswers(_ session: String, _ answers: [String: DBusValue]) async throws(FlowClientError) -> [String: String] { throw error }
    func continueStep(_ session: String) async throws(FlowClientError) -> [String: String] { throw error }
    func back(_ session: String) async throws(FlowClientError) { throw error }
    func goTo(_ session: String, step: String) async throws(FlowClientError) { throw error }
    func review(_ session: String) async throws(FlowClientError) -> ReviewPage { throw error }
    func answers(_ session: String) async throws(FlowClientError) -> [String: DBusValue] { throw error }
    func submit(_ session: String) async throws(FlowClientError) { throw error }
    func cancel(_ session: String) async throws(FlowClientError) { throw error }
    func close(_ session: String) async throws(FlowClientError) { throw error }
    func properties(_ session: String) async throws(FlowClientError) -> SessionProperties { throw error }
    func events(for session: String?) async throws(FlowClientError) -> FlowEvents { throw error }
    func ping() async throws(FlowClientError) { throw error }
}

/// One flowctl run in the test process: its output, errors and exit status.
struct Run {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// Runs flowctl's `arguments` against `service`, with `input` as standard input.
func flowctl(
    _ arguments: [String], service: any FlowService, input: [String] = [], terminal: Bool = false,
    environment: [String: String] = [:]
) -> Run {
    let out = BufferSink()
    let err = BufferSink()
    let source = ScriptedSource(input, isTerminal: terminal)
    let box = UncheckedBox(service)
    let context = FlowctlContext(
        stdout: out, stderr: err, stdin: source, stdoutIsTerminal: terminal, stderrIsTerminal: false, stdinIsTerminal: terminal,
        environment: environment, makeService: { _, _ in box.value })
    let status = Flowctl.run(arguments, context: context)
    return Run(status: status, stdout: out.text, stderr: err.text)
}

/// Carries a non-Sendable fake into the `@Sendable` service factory (tests are single-threaded here).
final class UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
