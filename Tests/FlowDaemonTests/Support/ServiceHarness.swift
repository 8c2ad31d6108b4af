import DBus
@testable import FlowDaemon
import FlowEngine
import FlowKit
import FlowProtocol
import FlowStore
import Foundation
import Logging
import ReactorTesting
import Testing
import TestSupport

/// A `FlowService` in this process, on an `EmbeddedEventLoop` the test
/// drives: a temporary SQLite file, flows written to a temporary directory,
/// a clock the test moves, and ``FakePlugins`` answering as the test says.
/// No bus and no `flowd` process: the daemon's logic on its own (systemd's
/// `test-localed-util.c` is the model); the process tests keep the wiring.
final class ServiceHarness: @unchecked Sendable {
    let loop = EmbeddedEventLoop()
    let directory: TemporaryDirectory
    let store: SessionStore
    let plugins = FakePlugins()
    let clock = TestClock()
    let log = CapturingBackend()
    private(set) var configuration: DaemonConfiguration
    let service: FlowService

    /// A service over `flows` (file name → contents) with `limits`; `store`
    /// continues another harness's database (a restart).
    init(
        flows: [String: String] = TestFlows.standard, limits: SessionLimits = SessionLimits(),
        cacheCapacity: Int = SessionRepository.defaultCacheCapacity, continuing earlier: ServiceHarness? = nil
    ) throws {
        directory = try earlier?.directory ?? TemporaryDirectory(prefix: "flowd-service")
        let flowsDirectory = directory.file("flows")
        try FileManager.default.createDirectory(atPath: flowsDirectory, withIntermediateDirectories: true)
        for (name, contents) in flows { try directory.write("flows/" + name, contents) }
        store = try SessionStore(path: directory.file("sessions.sqlite"))
        var configuration = DaemonConfiguration(layout: InstallLayout(prefix: "/usr"))
        configuration.flowDirectories = [flowsDirectory]
        configuration.pluginDirectories = []
        configuration.stateDirectory = directory.path
        configuration.limits = limits
        self.configuration = configuration
        service = try FlowService(
            loop: loop, store: store, configuration: configuration, plugins: plugins, capabilities: .any,
            logger: Logger(identifier: "flowd-test", minimumLevel: .debug, backend: log), clock: clock,
            cacheCapacity: cacheCapacity)
    }

    deinit {
        try? store.close()
    }

    /// Runs `body` on the service, as a bus handler does (no task).
    @discardableResult
    func act<T: Sendable>(_ body: @Sendable (isolated FlowService) -> T) -> T {
        service.assumeIsolated { service in body(service) }
    }

    /// Runs `body` on the service, as a bus handler does; its error is the call's.
    @discardableResult
    func perform<T: Sendable>(_ body: @Sendable (isolated FlowService) throws(FlowdError) -> T) throws(FlowdError) -> T {
        do {
            return try service.assumeIsolated { service in try body(service) }
        } catch let error as FlowdError {
            throw error
        } catch {
            throw FlowdError(.failed, "\(error)")
        }
    }

    /// Runs the loop's queued jobs (the service's tasks coming back from
    /// plugin calls) until `condition` holds.
    func drive(until condition: () -> Bool, _ what: @autoclosure () -> String = "the condition") async throws {
        let held = await waitUntil {
            loop.runPendingJobs()
            return condition()
        }
        if !held { throw TestSupportError("\(what()) never came true") }
    }

    /// Waits for the loop's next job (a task of the service coming back
    /// from a plugin call), then runs it and what it queues.
    func runNextJob() async throws {
        guard await waitUntil({ loop.hasPendingJobs }) else { throw TestSupportError("no job came to the loop") }
        loop.runPendingJobs()
    }

    /// Drives the loop until the fake plugins are called; the call, to answer.
    func nextPluginCall() async throws -> FakePlugins.Call {
        var call: FakePlugins.Call?
        try await drive(until: { call = plugins.takeCall(); return call != nil }, "a plugin call")
        guard let call else { throw TestSupportError("no plugin call") }
        return call
    }

    /// Drives the loop until `answers` has its answer; returns it.
    func answer<Value>(_ answers: Answers<Value>) async throws -> Result<Value, FlowdError> {
        try await drive(until: { answers.result != nil }, "the reply")
        guard let result = answers.result else { throw TestSupportError("no reply") }
        return result
    }

    /// The events the service queued, as short names in order, log entries
    /// left out: `PropertiesChanged(State,UpdatedAt)`, `StepCompleted(rating)`.
    func events() -> [String] {
        service.assumeIsolated { $0.takeEvents() }.compactMap(\.summary)
    }

    /// Starts a session of `flow` for `uid` (without providers: answered at once).
    func start(_ flow: String, uid: UInt32 = 1000) throws -> String {
        let answers = Answers<String>()
        act { $0.startSession(flowID: flow, locale: nil, prefill: [:], uid: uid, reply: answers.reply) }
        guard let result = answers.result else { throw TestSupportError("StartSession of \(flow) was deferred") }
        return try result.get()
    }

    /// `SetAnswers` that needs no plugin: its field errors.
    @discardableResult
    func setAnswers(_ id: String, _ answers: [String: AnswerValue]) throws -> FieldErrors {
        let reply = Answers<FieldErrors>()
        act { $0.setAnswers(id, answers, reply: reply.reply) }
        guard let result = reply.result else { throw TestSupportError("SetAnswers was deferred") }
        return try result.get()
    }

    /// `Continue` that needs no plugin: its field errors.
    @discardableResult
    func continueStep(_ id: String) throws -> FieldErrors {
        let reply = Answers<FieldErrors>()
        act { $0.continueStep(id, reply: reply.reply) }
        guard let result = reply.result else { throw TestSupportError("Continue was deferred") }
        return try result.get()
    }

    /// A property of session `id`.
    func property(_ property: SessionProperty, of id: String) throws -> DBusValue {
        try perform { service throws(FlowdError) in try service.read(id) { SessionProperties($0).value(of: property) } }
    }

    /// Writes flow file `name` and reloads the configuration.
    func reload(writing name: String? = nil, _ contents: String? = nil, removing removed: String? = nil) throws {
        if let name, let contents { try directory.write("flows/" + name, contents) }
        if let removed { try FileManager.default.removeItem(atPath: directory.file("flows/" + removed)) }
        let configuration = self.configuration
        act { $0.reload(configuration) }
    }
}

/// The answers a ``Reply`` received, and how often it was deferred.
final class Answers<Value: Sendable>: Sendable {
    private let results = Locked<[Result<Value, FlowdError>]>([])
    private let deferrals = Locked(0)

    /// The reply to hand to the service.
    var reply: Reply<Value> {
        Reply(deferring: { [deferrals] in deferrals.withLock { $0 += 1 } }) { [results] result in
            results.withLock { $0.append(result) }
        }
    }

    /// The first answer, if any.
    var result: Result<Value, FlowdError>? { results.value.first }
    /// Every answer (a call is answered once).
    var all: [Result<Value, FlowdError>] { results.value }
    /// How many times the service said it would answer later.
    var deferred: Int { deferrals.value }

    /// The error name of the answer, when it is an error.
    var errorName: FlowErrorName? { result?.errorName }
}

extension Result where Failure == FlowdError {
    /// The error name, when this is an error.
    var errorName: FlowErrorName? {
        if case .failure(let error) = self { return error.name }
        return nil
    }

    /// The error, when this is one.
    var error: FlowdError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// The engine's clock, moved by the test.
final class TestClock: EngineClock {
    private let microseconds = Locked<Int64>(1_750_000_000_000_000)
    var now: Int64 { microseconds.value }
    let today = CivilDate(year: 2025, month: 6, day: 15)!

    func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        microseconds.withLock { $0 += seconds * 1_000_000 + attoseconds / 1_000_000_000_000 }
    }
}

extension ServiceEvent {
    /// A short name for ordering checks; nil for log entries.
    var summary: String? {
        switch self {
        case .sessionNew: return "SessionNew"
        case .sessionRemoved: return "SessionRemoved"
        case .sessionCountChanged: return "SessionCount"
        case .propertiesChanged(_, let names, _): return "PropertiesChanged(\(names.map(\.rawValue).joined(separator: ",")))"
        case .stepCompleted(_, let step, _): return "StepCompleted(\(step))"
        case .submitted: return "Submitted"
        case .submitFailed: return "SubmitFailed"
        case .announcement: return "Announcement"
        case .log: return nil
        }
    }
}
