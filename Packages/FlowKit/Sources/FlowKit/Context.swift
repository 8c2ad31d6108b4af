/// What a plugin is told about the session it is working for.
///
/// Every call gets one. The host fills it; plugins only read it.
public struct PluginContext: Sendable {
    /// The flow's id, for example `consultation`.
    public var flowID: String
    /// The session's id: 32 lowercase hex characters.
    public var sessionID: String
    /// The session's locale, for example `pt-BR`. Messages a plugin returns
    /// should be in this locale.
    public var locale: String
    /// The uid that owns the session, as the bus driver reported it.
    public var callerUID: UInt32
    /// The answers on the session's path so far. Secure answers are never in
    /// here; a submit action gets them in ``Submission/secureAnswers``.
    public var answers: [String: AnswerValue]
    /// The options the flow file gives where it names this capability, for
    /// example `{"count": 5}` for an options provider.
    public var options: [String: JSONValue]
    /// The daemon's state directory. A plugin that keeps files (a spool) keeps
    /// them under here unless its options say otherwise, because the service's
    /// sandbox makes little else writable.
    public var stateDirectory: String
    /// When flowd stops waiting for this call (since SDK 1.1): the call's
    /// timeout (the flow's `timeoutSeconds` for a submit action, the
    /// validators' or providers' limit otherwise) counted from when the
    /// plugin's code started. Work that outlives it is wasted: the person
    /// has already been told the call timed out. Bound network requests and
    /// child processes by ``timeRemaining``. Nil outside flowd (a unit test
    /// that builds its own context, unless it sets one).
    public var deadline: ContinuousClock.Instant?
    /// The plugin's log (since SDK 1.1): lines written here reach flowd's
    /// journal with the plugin's name (``PluginLogger``). Drops every line
    /// in a context made with the initializer, until a host sets its own;
    /// FlowKitTesting's contexts record them.
    public var log: PluginLogger = .discarding

    /// The time left until ``deadline``, never negative; nil without a deadline.
    public var timeRemaining: Duration? {
        deadline.map { max(.zero, ContinuousClock.now.duration(to: $0)) }
    }

    /// ``timeRemaining`` in seconds (since SDK 1.1), for an API that takes
    /// a `Double` (a process's or a request's timeout); nil without a
    /// deadline.
    public var secondsRemaining: Double? {
        timeRemaining.map(\.inSeconds)
    }

    public init(
        flowID: String, sessionID: String, locale: String, callerUID: UInt32,
        answers: [String: AnswerValue], options: [String: JSONValue], stateDirectory: String
    ) {
        self.flowID = flowID
        self.sessionID = sessionID
        self.locale = locale
        self.callerUID = callerUID
        self.answers = answers
        self.options = options
        self.stateDirectory = stateDirectory
    }
}

/// A field as a plugin sees it.
public struct FieldInfo: Sendable {
    /// The field's id within its step.
    public var id: String
    /// The field type: `text`, `multiline`, `secure`, `email`, `number`, `date`,
    /// `time`, `toggle`, `choice`, `multichoice` or (flow format 2) `computed`.
    public var type: String
    /// The field's label in the session's locale.
    public var label: String

    public init(id: String, type: String, label: String) {
        self.id = id
        self.type = type
        self.label = label
    }
}

/// A step as a plugin sees it.
public struct StepInfo: Sendable {
    /// The step's id.
    public var id: String
    /// The step's title in the session's locale.
    public var title: String
    /// The fields of the step, in document order.
    public var fields: [FieldInfo]

    public init(id: String, title: String, fields: [FieldInfo]) {
        self.id = id
        self.title = title
        self.fields = fields
    }
}

/// How much a finding counts.
public enum IssueLevel: String, Sendable, Hashable, Codable, CaseIterable {
    /// The value or step is wrong: Continue stays until it is mended.
    case error
    /// Worth a second look, but the person may go on: shown with the field
    /// (or the step), never stopping Continue ("That is a Sunday; we are
    /// closed then.").
    case warning
}

/// One problem a step validator found.
public struct ValidationIssue: Sendable, Hashable {
    /// The field the message belongs to, or nil for the step as a whole.
    public var field: String?
    /// The message, in the session's locale.
    public var message: String
    /// An error (the default) or a warning.
    public var level: IssueLevel

    /// An error on `field` (nil: the step).
    public init(field: String?, message: String) {
        self.init(field: field, message: message, level: .error)
    }

    /// An issue of `level` on `field` (nil: the step).
    public init(field: String?, message: String, level: IssueLevel) {
        self.field = field
        self.message = message
        self.level = level
    }
}

/// One option of a `choice` or `multichoice` field.
public struct ChoiceOption: Sendable, Hashable, Codable {
    /// The option id: the answer value when it is chosen. `other` is reserved.
    public var id: String
    /// The label in the session's locale.
    public var label: String
    /// An optional freedesktop icon name.
    public var icon: String?

    public init(id: String, label: String, icon: String? = nil) {
        self.id = id
        self.label = label
        self.icon = icon
    }
}

/// What a submit action receives.
public struct Submission: Sendable {
    /// The submission's idempotency key (also ``idempotencyKey``): the same on
    /// every attempt to submit the same answers of the session — a retry after
    /// a failure, a timeout, a cancel or a restart of flowd — and a new one
    /// once the person changes an answer. Hand it on so that a receiver can
    /// drop a repeated submission. Opaque (today the session id, `-` and a
    /// number), at most 64 characters of `0-9a-f-`, fit for a file name.
    public var id: String
    public var flowID: String
    public var sessionID: String
    /// The uid that owns the session.
    public var ownerUID: UInt32
    public var locale: String
    /// The answers on the path, secure fields excluded.
    public var answers: [String: AnswerValue]
    /// The secure answers on the path (passwords and the like). Never write
    /// these to disk or to a log unless an administrator asked for it.
    public var secureAnswers: [String: String]
    /// When the person pressed Submit, in microseconds since the epoch.
    public var submittedAt: Int64

    public init(
        id: String, flowID: String, sessionID: String, ownerUID: UInt32, locale: String,
        answers: [String: AnswerValue], secureAnswers: [String: String], submittedAt: Int64
    ) {
        self.id = id
        self.flowID = flowID
        self.sessionID = sessionID
        self.ownerUID = ownerUID
        self.locale = locale
        self.answers = answers
        self.secureAnswers = secureAnswers
        self.submittedAt = submittedAt
    }

    /// The key a receiver drops repeated submissions by: ``id`` under the
    /// name the HTTP header (`Idempotency-Key`) and the other actions use.
    public var idempotencyKey: String { id }
}

/// What a successful submit action hands back. The daemon sends it to clients
/// in the `Submitted` signal, so it must not contain secrets.
public struct SubmitReceipt: Sendable, Hashable {
    /// Free-form values, for example `["reference": "A-1234"]`. A `message` key,
    /// when present, is shown to the person.
    public var values: [String: JSONValue]

    public init(_ values: [String: JSONValue] = [:]) {
        self.values = values
    }
}

extension Duration {
    /// The duration in seconds, fractions included (since SDK 1.1).
    public var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
