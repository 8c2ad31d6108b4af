import DBus
import FlowCLI
import FlowEngine
import FlowKit
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
final class EngineService: FlowService, @unchecked Sendable {
    private(set) var flows: [String: FlowDefinition] = [:]
    private(set) var sessions: [String: FlowSession] = [:]
    private var nextID = 0x1234
    /// The next submits fail with this (one per entry).
    var submitFailures: [SubmitFailure] = []
    /// Every call, in order, as "Member" or "Member(session)".
    private(set) var calls: [String] = []
    /// Events the watch source hands out, per session.
    var queuedEvents: [String: [SessionEvent]] = [:]
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

    private func session(_ id: String) throws(ServiceError) -> FlowSession {
        guard let session = sessions[id] else { throw ServiceError(.notFound, "no session \(id)") }
        return session
    }

    private func mutate<T>(_ id: String, _ body: (inout FlowSession) throws(SessionError) -> T) throws(ServiceError) -> T {
        var session = try self.session(id)
        do {
            let result = try body(&session)
            let before = sessions[id]
            sessions[id] = session
            if before?.state != session.state || before?.currentStepID != session.currentStepID {
                queuedEvents[id, default: []].append(.propertiesChanged(
                    ["State": .string(session.state.rawValue), "CurrentStep": .string(session.currentStepID)],
                    invalidated: []))
            }
            return result
        } catch {
            throw ServiceError(ServiceError.Kind(rawValue: error.kind.rawValue) ?? .other, error.message)
        }
    }

    // MARK: Manager

    func listFlows() throws(ServiceError) -> [FlowSummary] {
        calls.append("ListFlows")
        return flows.values.map { flow in
            var titles: [String: String] = [:]
            for locale in flow.locales { titles[locale] = flow.title.resolve(locale) }
            return FlowSummary(
                id: flow.id, title: flow.title.resolve("en"), titles: titles,
                description: flow.description?.resolve("en") ?? "", locales: flow.locales, steps: flow.steps.count,
                review: flow.hasReview)
        }
    }

    func startSession(flow: String, locale: String?) throws(ServiceError) -> String {
        calls.append("StartSession")
        guard let definition = flows[flow] else { throw ServiceError(.notFound, "no flow \(flow)") }
        let id = String(format: "%032x", nextID)
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
        do {
            sessions[id] = try FlowSession(
                flow: definition, id: id, owner: 1000, locale: locale ?? "en", clock: clock, dynamicOptions: options)
        } catch {
            throw ServiceError(.invalidArgs, error.message)
        }
        requestedLocales[id] = locale
        return id
    }

    func listSessions() throws(ServiceError) -> [SessionSummary] {
        calls.append("ListSessions")
        return sessions.map { id, session in
            SessionSummary(id: id, flow: session.flow.id, path: "/org/flowd/Flow1/session/\(id)", state: session.state.rawValue)
        }
    }

    var pluginList: [PluginSummary] = [
        PluginSummary(name: "spool", version: "1.0", kinds: ["submit"], capabilities: ["flowd.spool"], status: "loaded"),
        PluginSummary(name: "broken", version: "0.1", kinds: ["validator"], status: "failed",
                      error: "ABI 2 is not the daemon's ABI 1"),
    ]

    func plugins() throws(ServiceError) -> [PluginSummary] {
        calls.append("ListPlugins")
        return pluginList
    }

    // MARK: Session

    func step(_ id: String) throws(ServiceError) -> StepPage {
        calls.append("GetStep")
        return Self.page(try session(id).currentStep())
    }

    func setAnswers(_ id: String, _ answers: [String: DBusValue]) throws(ServiceError) -> [String: String] {
        calls.append("SetAnswers")
        lastAnswers[id] = answers
        var values: [String: AnswerValue] = [:]
        for (key, value) in answers {
            guard let answer = Self.answer(value) else { throw ServiceError(.invalidArgs, "\(key): unsupported type \(value.signature)") }
            values[key] = answer
        }
        let now = clock.now
        return try mutate(id) { (session) throws(SessionError) in
            let result = try session.setAnswers(values, now: now)
            if result.checks.isEmpty { return result.errors }
            return session.applyPluginResults(result.checks.map { PluginCheckResult(check: $0, outcome: PluginCheckOutcome(fieldMessage: nil)) })
        }
    }

    func continueStep(_ id: String) throws(ServiceError) -> [String: String] {
        calls.append("Continue")
        let now = clock.now
        while true {
            let outcome = try mutate(id) { (session) throws(SessionError) in try session.continueStep(now: now) }
            switch outcome {
            case .moved(let completion):
                queuedEvents[id, default: []].append(.stepCompleted(
                    step: completion.step, answers: completion.answers.mapValues(Self.dbus)))
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

    private func finish(_ id: String, _ start: SubmitStart) throws(ServiceError) {
        let now = clock.now
        switch start {
        case .redirected(let step):
            // flowd's own message (FlowDaemon's FlowService.beginSubmit).
            throw ServiceError(.validationFailed, "step \"\(step)\" is not finished; the session moved there")
        case .settledWithoutAction, .alreadySubmitted:
            return
        case .run:
            if !submitFailures.isEmpty {
                let failure = submitFailures.removeFirst()
                try mutate(id) { (session) throws(SessionError) in try session.failSubmit(failure, now: now) }
                let message = (try? self.session(id).lastError) ?? nil
                queuedEvents[id, default: []].append(.submitFailed(message: message ?? ""))
                throw ServiceError(.submitFailed, message ?? "failed")
            }
            try mutate(id) { (session) throws(SessionError) in
                try session.finishSubmit(receipt: SubmitReceipt(["reference": .string("R-1")]), now: now)
            }
            queuedEvents[id, default: []].append(.submitted(receipt: ["reference": .string("R-1")]))
        }
    }

    func back(_ id: String) throws(ServiceError) {
        calls.append("Back")
        let now = clock.now
        try mutate(id) { (session) throws(SessionError) in try session.back(now: now) }
    }

    func goTo(_ id: String, step: String) throws(ServiceError) {
        calls.append("GoTo(\(step))")
        let now = clock.now
        try mutate(id) { (session) throws(SessionError) in try session.goTo(step, now: now) }
    }

    func review(_ id: String) throws(ServiceError) -> ReviewPage {
        calls.append("GetReview")
        let view = try session(id).review()
        return ReviewPage(
            groups: view.groups.map { group in
                ReviewSection(
                    step: group.step, title: group.title, finished: group.finished, status: group.status,
                    editLabel: group.editLabel,
                    answers: group.answers.map { ReviewLine(field: $0.field, label: $0.label, display: $0.display) })
            },
            note: view.note)
    }

    func answers(_ id: String) throws(ServiceError) -> [String: DBusValue] {
        calls.append("GetAnswers")
        return try session(id).answersOnPath(includeSecure: false).mapValues(Self.dbus)
    }

    func submit(_ id: String) throws(ServiceError) {
        calls.append("Submit")
        let now = clock.now
        let start = try mutate(id) { (session) throws(SessionError) in try session.beginSubmit(now: now) }
        try finish(id, start)
    }

    func cancel(_ id: String) throws(ServiceError) {
        calls.append("Cancel")
        _ = try session(id)
    }

    func close(_ id: String) throws(ServiceError) {
        calls.append("Close")
        _ = try session(id)
        sessions[id] = nil
        queuedEvents[id, default: []].append(.removed)
    }

    func properties(_ id: String) throws(ServiceError) -> SessionProperties {
        calls.append("GetAll")
        let session = try self.session(id)
        var properties = SessionProperties(id: id, flow: session.flow.id)
        properties.owner = 1000
        properties.locale = session.record.locale
        properties.state = session.state.rawValue
        properties.currentStep = session.currentStepID
        properties.lastError = session.lastError ?? ""
        properties.path = session.path.map { PathStep(step: $0.id, title: $0.title, status: $0.status.rawValue) }
        return properties
    }

    func events(_ id: String) throws(ServiceError) -> any SessionEventSource {
        calls.append("Watch")
        _ = try session(id)
        return QueueEventSource(service: self, session: id)
    }

    fileprivate func takeEvent(_ id: String) -> SessionEvent? {
        guard var queue = queuedEvents[id], !queue.isEmpty else { return nil }
        let event = queue.removeFirst()
        queuedEvents[id] = queue
        return event
    }

    // MARK: conversions (what the daemon does between the engine and the bus)

    static func dbus(_ answer: AnswerValue) -> DBusValue {
        switch answer {
        case .text(let s): return .string(s)
        case .list(let l): return .strings(l)
        case .bool(let b): return .bool(b)
        case .integer(let i): return .int64(i)
        case .number(let d): return .double(d)
        }
    }

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

    static func page(_ view: StepView) -> StepPage {
        var page = StepPage(id: view.id, kind: view.kind.rawValue, title: view.title)
        page.description = view.description
        page.body = view.body
        page.icon = view.icon
        page.error = view.error
        page.announcement = view.announcement
        page.index = view.index
        page.count = view.count
        page.continueLabel = view.continueLabel
        page.backLabel = view.backLabel
        page.canGoBack = view.canGoBack
        page.canContinue = view.canContinue
        page.fields = view.fields.map { field in
            var f = StepField(id: field.id, typeName: field.type.rawValue, label: field.label)
            f.help = field.help
            f.placeholder = field.placeholder
            f.required = field.required
            f.options = field.options.map { FieldOption(id: $0.id, label: $0.label) }
            f.other = field.other
            f.otherLabel = field.otherLabel
            f.value = field.value.map(dbus)
            f.otherText = field.otherText
            f.isSet = field.isSet
            f.error = field.error
            f.hint = field.hint
            if let v = field.minLength { f.constraints["minLength"] = .uint32(UInt32(v)) }
            if let v = field.maxLength { f.constraints["maxLength"] = .uint32(UInt32(v)) }
            if let v = field.minimum { f.constraints["minimum"] = .double(v) }
            if let v = field.maximum { f.constraints["maximum"] = .double(v) }
            if field.integer { f.constraints["integer"] = .bool(true) }
            if let v = field.after { f.constraints["after"] = .string(v) }
            if let v = field.before { f.constraints["before"] = .string(v) }
            if let v = field.minSelected { f.constraints["minSelected"] = .uint32(UInt32(v)) }
            if let v = field.maxSelected { f.constraints["maxSelected"] = .uint32(UInt32(v)) }
            if field.mustBeOn { f.constraints["mustBeOn"] = .bool(true) }
            return f
        }
        return page
    }
}

/// Hands out the events an ``EngineService`` queued; nil when there are none.
final class QueueEventSource: SessionEventSource {
    let service: EngineService
    let session: String

    init(service: EngineService, session: String) {
        self.service = service
        self.session = session
    }

    func next(timeout: Duration) throws(ServiceError) -> SessionEvent? {
        guard let event = service.takeEvent(session) else {
            // A short wait (watch collecting the signals after a change) finds nothing;
            // a long one would wait forever: fail the test instead.
            if timeout < .seconds(1) { return nil }
            throw ServiceError(.unavailable, "no more queued events (a test that waits forever)")
        }
        return event
    }
}

/// A service whose daemon is not there: every call fails as flowctl's does then.
final class AbsentService: FlowService, @unchecked Sendable {
    let error = ServiceError(.unavailable, "flowd is not running on the session bus. Start it with: systemctl --user start flowd")
    func listFlows() throws(ServiceError) -> [FlowSummary] { throw error }
    func startSession(flow: String, locale: String?) throws(ServiceError) -> String { throw error }
    func listSessions() throws(ServiceError) -> [SessionSummary] { throw error }
    func plugins() throws(ServiceError) -> [PluginSummary] { throw error }
    func step(_ session: String) throws(ServiceError) -> StepPage { throw error }
    func setAnswers(_ session: String, _ answers: [String: DBusValue]) throws(ServiceError) -> [String: String] { throw error }
    func continueStep(_ session: String) throws(ServiceError) -> [String: String] { throw error }
    func back(_ session: String) throws(ServiceError) { throw error }
    func goTo(_ session: String, step: String) throws(ServiceError) { throw error }
    func review(_ session: String) throws(ServiceError) -> ReviewPage { throw error }
    func answers(_ session: String) throws(ServiceError) -> [String: DBusValue] { throw error }
    func submit(_ session: String) throws(ServiceError) { throw error }
    func cancel(_ session: String) throws(ServiceError) { throw error }
    func close(_ session: String) throws(ServiceError) { throw error }
    func properties(_ session: String) throws(ServiceError) -> SessionProperties { throw error }
    func events(_ session: String) throws(ServiceError) -> any SessionEventSource { throw error }
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
        stdout: out, stderr: err, stdin: source, stdoutIsTerminal: terminal, stderrIsTerminal: false,
        environment: environment, makeService: { _ in box.value })
    let status = Flowctl.run(arguments, context: context)
    return Run(status: status, stdout: out.text, stderr: err.text)
}

/// Carries a non-Sendable fake into the `@Sendable` service factory (tests are single-threaded here).
final class UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
