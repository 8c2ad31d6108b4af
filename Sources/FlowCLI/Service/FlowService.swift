import DBus
import FlowClient
import FlowProtocol

/// Everything flowctl asks of flowd: the seam between the commands (and the
/// wizard) and the bus. ``FlowClient`` is the real one; the tests run the
/// engine in-process behind it, through the same wire structs.
///
/// Sessions are named by their full 32-hex id.
package protocol FlowService: AnyObject, Sendable {
    /// `Manager.ListFlows`.
    func listFlows() async throws(FlowClientError) -> [FlowSummary]
    /// `Manager.StartSession`; returns the new session's id. `answers`
    /// (since 1.1) drive the new session as far as they are valid.
    func startSession(
        flow: String, locale: String?, prefill: [String: DBusValue], answers: [String: DBusValue]
    ) async throws(FlowClientError) -> String
    /// `Manager.ListSessions`: the caller's sessions.
    func listSessions() async throws(FlowClientError) -> [SessionListing]
    /// `Manager.ListPlugins`.
    func listPlugins() async throws(FlowClientError) -> [PluginSummary]
    /// `Manager.GetStatus` (since 1.2).
    func status() async throws(FlowClientError) -> DaemonStatus
    /// `Session.GetStep`.
    func step(_ session: String) async throws(FlowClientError) -> StepPage
    /// `Session.SetAnswers`; returns the current step's field errors.
    func setAnswers(_ session: String, _ answers: [String: DBusValue]) async throws(FlowClientError) -> [String: String]
    /// `Session.Continue`; empty when it moved, otherwise the errors.
    func continueStep(_ session: String) async throws(FlowClientError) -> [String: String]
    /// `Session.Back`.
    func back(_ session: String) async throws(FlowClientError)
    /// `Session.GoTo`.
    func goTo(_ session: String, step: String) async throws(FlowClientError)
    /// `Session.GetReview`.
    func review(_ session: String) async throws(FlowClientError) -> ReviewPage
    /// `Session.GetAnswers`.
    func answers(_ session: String) async throws(FlowClientError) -> [String: DBusValue]
    /// `Session.Submit`: returns when the action ends.
    func submit(_ session: String) async throws(FlowClientError)
    /// `Session.Cancel`.
    func cancel(_ session: String) async throws(FlowClientError)
    /// `Session.Close`.
    func close(_ session: String) async throws(FlowClientError)
    /// The session's properties.
    func properties(_ session: String) async throws(FlowClientError) -> SessionProperties
    /// The session's events from now on.
    func events(for session: String?) async throws(FlowClientError) -> FlowEvents
    /// A round trip to flowd, after which the signals of every call it
    /// answered before have arrived.
    func ping() async throws(FlowClientError)
}

extension FlowService {
    /// `Manager.StartSession` without answers.
    func startSession(flow: String, locale: String?, prefill: [String: DBusValue]) async throws(FlowClientError) -> String {
        try await startSession(flow: flow, locale: locale, prefill: prefill, answers: [:])
    }
}

extension FlowClient: FlowService {}

/// flowctl's calls to flowd on `bus`: flowctl is synchronous, so each call
/// blocks until flowd answers, and a failure becomes flowctl's error.
struct FlowdCalls: Sendable {
    let service: any FlowService
    let bus: BusChoice

    /// Runs `body` against the service and waits for it.
    func request<T: Sendable>(
        _ body: @escaping @Sendable (any FlowService) async throws(FlowClientError) -> T
    ) throws(FlowClientError) -> T {
        let service = self.service
        return try Blocking.run { () async throws(FlowClientError) -> T in try await body(service) }
    }

    /// Runs `body` against the service and waits for it; a failure is flowctl's error.
    func call<T: Sendable>(
        _ body: @escaping @Sendable (any FlowService) async throws(FlowClientError) -> T
    ) throws(CLIError) -> T {
        do {
            return try request(body)
        } catch {
            throw CLIError(error, bus: bus)
        }
    }
}

extension CLIError {
    /// flowctl's exit status and message for a failed call to flowd on
    /// `bus`; `flowd` is the daemon's path for the "Start it with" hint.
    package init(_ error: FlowClientError, bus: BusChoice, flowd: @autoclosure () -> String = FlowdLocation.current()) {
        if let unreachable = bus.unreachableMessage(error, flowd: flowd()) {
            self.init(.unavailable, unreachable)
            return
        }
        switch error.kind {
        case .flowd(let name):
            switch name {
            case .notFound: self.init(.notFound, error.message)
            case .invalidArgs: self.init(.dataError, error.message)
            case .accessDenied: self.init(.accessDenied, error.message)
            case .pluginFailed: self.init(.unavailable, error.message)
            case .invalidState, .validationFailed, .limitExceeded, .submitFailed, .timeout, .cancelled, .failed:
                self.init(.failure, error.message)
            }
        case .notRunning, .cannotConnect, .disconnected:
            self.init(.unavailable, error.message)
        case .noReply:
            self.init(.unavailable, error.message)
        case .cancelled:
            self.init(.failure, error.message)
        case .protocolMismatch:
            self.init(.software, error.message)
        case .dbus:
            switch error.name {
            case .accessDenied?: self.init(.accessDenied, error.message)
            case .invalidArgs?: self.init(.dataError, error.message)
            case .unknownObject?: self.init(.notFound, "the session no longer exists (\(error.message))")
            default: self.init(.failure, error.message)
            }
        }
    }
}
