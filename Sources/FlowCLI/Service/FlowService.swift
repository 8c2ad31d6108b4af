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
    /// `Manager.Reload`: flowd re-reads its configuration and flows.
    func reload() async throws(FlowClientError)
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
///
/// Every reply and error a person is shown passes through here, and here its
/// texts are cleaned for the terminal (``TerminalText``); `--json` output
/// gets them whole.
struct FlowdCalls: Sendable {
    let service: any FlowService
    let bus: BusChoice
    /// The replies are shown to a person: clean their texts.
    let cleansText: Bool
    /// The person's language, for flowctl's sentences about failed calls.
    var locale = "en"
    /// The calls let polkit ask for a password, so a refusal for want of
    /// one means no agent could ask (``CLIError/init(_:bus:locale:asksPassword:flowd:)``).
    var asksPassword = false

    /// The same calls, their failures said in `locale`.
    func speaking(_ locale: String) -> FlowdCalls {
        var calls = self
        calls.locale = locale
        return calls
    }

    /// Runs `body` against the service and waits for it.
    func request<T: TerminalSafe & Sendable>(
        _ body: @escaping @Sendable (any FlowService) async throws(FlowClientError) -> T
    ) throws(FlowClientError) -> T {
        let service = self.service
        let value: T
        do {
            value = try Blocking.run { () async throws(FlowClientError) -> T in try await body(service) }
        } catch {
            throw cleansText ? error.terminalSafe() : error
        }
        guard cleansText else { return value }
        do {
            return try value.terminalSafe()
        } catch {
            throw FlowClientError(.protocolMismatch, "flowd's reply does not match the API once cleaned for the terminal: \(error.message)")
        }
    }

    /// Runs `body`, which returns nothing, against the service and waits for it.
    func request(
        _ body: @escaping @Sendable (any FlowService) async throws(FlowClientError) -> Void
    ) throws(FlowClientError) {
        _ = try request { s async throws(FlowClientError) -> Bool in
            try await body(s)
            return true
        }
    }

    /// Runs `body` against the service and waits for it; a failure is flowctl's error.
    func call<T: TerminalSafe & Sendable>(
        _ body: @escaping @Sendable (any FlowService) async throws(FlowClientError) -> T
    ) throws(CLIError) -> T {
        do {
            return try request(body)
        } catch {
            throw CLIError(error, bus: bus, locale: locale, asksPassword: asksPassword)
        }
    }

    /// Runs `body`, which returns nothing, and waits for it; a failure is flowctl's error.
    func call(
        _ body: @escaping @Sendable (any FlowService) async throws(FlowClientError) -> Void
    ) throws(CLIError) {
        _ = try call { s async throws(FlowClientError) -> Bool in
            try await body(s)
            return true
        }
    }

    /// The session's events from now on (`watch`).
    func events(for session: String) throws(CLIError) -> FlowEvents {
        let service = self.service
        do {
            return try Blocking.run { () async throws(FlowClientError) -> FlowEvents in try await service.events(for: session) }
        } catch {
            throw CLIError(cleansText ? error.terminalSafe() : error, bus: bus, locale: locale)
        }
    }

    /// The next of `events`; nil once they end.
    func next(of events: FlowEvents) -> FlowEvent? {
        let event = Blocking.run { await events.next() }
        return cleansText ? event.map { $0.terminalSafe() } : event
    }
}
