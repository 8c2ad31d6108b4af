import DBus

/// A failed call to flowd, classified by its D-Bus error name.
public struct ServiceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure it is; flowctl picks its exit status from it.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// `org.flowd.Flow1.Error.NotFound`: unknown flow, session or step.
        case notFound = "NotFound"
        /// `…InvalidArgs`: a wrong value or argument.
        case invalidArgs = "InvalidArgs"
        /// `…AccessDenied`.
        case accessDenied = "AccessDenied"
        /// `…InvalidState`: not possible in the session's state.
        case invalidState = "InvalidState"
        /// `…ValidationFailed`: Submit found a step that is not finished.
        case validationFailed = "ValidationFailed"
        /// `…LimitExceeded`.
        case limitExceeded = "LimitExceeded"
        /// `…SubmitFailed`: the message is the localized text also in `LastError`.
        case submitFailed = "SubmitFailed"
        /// `…PluginFailed`: a plugin needed to start a session failed.
        case pluginFailed = "PluginFailed"
        /// `…Timeout`: a plugin call ran past its time limit.
        case timeout = "Timeout"
        /// `…Cancelled`: `Cancel` stopped the pending `Submit`.
        case cancelled = "Cancelled"
        /// flowd is not running or the bus cannot be reached; the message says how to start it.
        case unavailable = "Unavailable"
        /// The reply did not have the shape of contract v1.
        case protocolMismatch = "ProtocolMismatch"
        /// Any other D-Bus error.
        case other = "Other"
    }

    /// The kind of failure.
    public var kind: Kind
    /// The human message (from the daemon, or flowctl's own for `unavailable`).
    public var message: String
    /// The D-Bus error name, when there was one.
    public var name: String

    /// An error of `kind` saying `message`.
    public init(_ kind: Kind, _ message: String, name: String = "") {
        self.kind = kind
        self.message = message
        self.name = name.isEmpty ? ServiceError.errorPrefix + kind.rawValue : name
    }

    /// `org.flowd.Flow1.Error.`
    public static let errorPrefix = "org.flowd.Flow1.Error."

    public var description: String { "\(name): \(message)" }

    /// The error as flowctl reports it: its exit status and message.
    public var cliError: CLIError {
        switch kind {
        case .notFound: return CLIError(.notFound, message)
        case .invalidArgs: return CLIError(.dataError, message)
        case .accessDenied: return CLIError(.accessDenied, message)
        case .unavailable, .pluginFailed: return CLIError(.unavailable, message)
        case .protocolMismatch: return CLIError(.software, message)
        case .invalidState, .validationFailed, .limitExceeded, .submitFailed, .timeout, .cancelled, .other:
            return CLIError(.failure, message)
        }
    }
}

/// Everything flowctl asks of flowd: the seam between the commands (and the
/// wizard) and D-Bus. ``BusFlowService`` is the real one; tests use fakes.
///
/// Sessions are named by their full 32-hex id.
public protocol FlowService: AnyObject {
    /// `Manager.ListFlows`.
    func listFlows() throws(ServiceError) -> [FlowSummary]
    /// `Manager.StartSession`; returns the new session's id.
    func startSession(flow: String, locale: String?) throws(ServiceError) -> String
    /// `Manager.ListSessions`: the caller's sessions.
    func listSessions() throws(ServiceError) -> [SessionSummary]
    /// `Manager.ListPlugins`.
    func plugins() throws(ServiceError) -> [PluginSummary]
    /// `Session.GetStep`.
    func step(_ session: String) throws(ServiceError) -> StepPage
    /// `Session.SetAnswers`; returns the current step's field errors.
    func setAnswers(_ session: String, _ answers: [String: DBusValue]) throws(ServiceError) -> [String: String]
    /// `Session.Continue`; empty when it moved, otherwise the errors.
    func continueStep(_ session: String) throws(ServiceError) -> [String: String]
    /// `Session.Back`.
    func back(_ session: String) throws(ServiceError)
    /// `Session.GoTo`.
    func goTo(_ session: String, step: String) throws(ServiceError)
    /// `Session.GetReview`.
    func review(_ session: String) throws(ServiceError) -> ReviewPage
    /// `Session.GetAnswers`.
    func answers(_ session: String) throws(ServiceError) -> [String: DBusValue]
    /// `Session.Submit`: blocks until the action ends.
    func submit(_ session: String) throws(ServiceError)
    /// `Session.Cancel`.
    func cancel(_ session: String) throws(ServiceError)
    /// `Session.Close`.
    func close(_ session: String) throws(ServiceError)
    /// The session's properties.
    func properties(_ session: String) throws(ServiceError) -> SessionProperties
    /// Subscribes to the session's signals (and its removal) and returns them as a stream.
    func events(_ session: String) throws(ServiceError) -> any SessionEventSource
}
