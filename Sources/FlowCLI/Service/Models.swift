import DBus
import FlowEngine

/// One flow the daemon serves (`ListFlows`).
public struct FlowSummary: Sendable, Hashable {
    /// The flow id, for `start` and `run`.
    public var id: String
    /// The title in the flow's default locale.
    public var title: String
    /// Every translation of the title, locale → text.
    public var titles: [String: String]
    /// A line about the flow, or empty.
    public var description: String
    /// The locales the flow has texts in.
    public var locales: [String]
    /// The number of steps in the document.
    public var steps: Int
    /// The flow ends with Review.
    public var review: Bool

    /// A flow summary with every key given.
    public init(
        id: String, title: String, titles: [String: String] = [:], description: String = "", locales: [String] = [],
        steps: Int = 0, review: Bool = false
    ) {
        self.id = id
        self.title = title
        self.titles = titles
        self.description = description
        self.locales = locales
        self.steps = steps
        self.review = review
    }

    /// The title in `locale`, with the usual fallback (`pt-BR → pt → en → first`).
    public func title(in locale: String) -> String {
        let keys = titles.keys.sorted()
        guard let index = LocaleFallback.bestMatch(for: locale, in: keys) else { return title }
        return titles[keys[index]] ?? title
    }
}

/// One of the caller's sessions (`ListSessions`).
public struct SessionSummary: Sendable, Hashable {
    /// The 32-hex session id.
    public var id: String
    /// The flow it runs.
    public var flow: String
    /// Its object path.
    public var path: String
    /// `editing`, `review`, `submitting`, `submitted` or `failed`.
    public var state: String

    /// A session summary.
    public init(id: String, flow: String, path: String, state: String) {
        self.id = id
        self.flow = flow
        self.path = path
        self.state = state
    }
}

/// One option of a choice field.
public struct FieldOption: Sendable, Hashable {
    /// The id sent as the answer.
    public var id: String
    /// The label in the session's locale.
    public var label: String

    /// An option.
    public init(id: String, label: String) {
        self.id = id
        self.label = label
    }
}

/// One field of the current step (the `fields` of `GetStep`).
public struct StepField: Sendable, Hashable {
    /// The field id, the key for `SetAnswers`.
    public var id: String
    /// The type as the daemon names it (`text`, `choice`, …).
    public var typeName: String
    /// The label in the session's locale.
    public var label: String
    /// A hint under the field, or empty.
    public var help = ""
    /// An input placeholder, or empty.
    public var placeholder = ""
    /// The field must be answered.
    public var required = false
    /// The options of a choice (never `other`).
    public var options: [FieldOption] = []
    /// The field offers Other.
    public var other = false
    /// The label of Other.
    public var otherLabel = ""
    /// The answer; nil when there is none, and always for a secure field.
    public var value: DBusValue?
    /// Other's free text, when the daemon sends it.
    public var otherText: String?
    /// An answer is held (the only way to see that a secure field is filled).
    public var isSet = false
    /// The error to show under the field, or empty.
    public var error = ""
    /// "Select all that apply" for a multiple choice, or empty.
    public var hint = ""
    /// The field's constraints, as the daemon sends them (`minLength`, `maximum`, …).
    public var constraints: [String: DBusValue] = [:]

    /// A field with an id, a type and a label; the rest is set afterwards.
    public init(id: String, typeName: String, label: String) {
        self.id = id
        self.typeName = typeName
        self.label = label
    }

    /// The type, when it is one this flowctl knows.
    public var type: FieldType? { FieldType(rawValue: typeName) }
    /// True for `secure` fields: never shown, read without echo.
    public var isSecure: Bool { typeName == FieldType.secure.rawValue }

    /// The label of option `id` (`other` included).
    public func label(ofOption id: String) -> String? {
        if id == "other", other { return otherLabel.isEmpty ? "Other" : otherLabel }
        return options.first { $0.id == id }?.label
    }

    /// The constraint keys the daemon may send, in the order they are shown.
    public static let constraintKeys = [
        "minLength", "maxLength", "minimum", "maximum", "integer", "minSelected", "maxSelected", "after", "before",
        "mustBeOn",
    ]
}

/// The current step of a session (`GetStep`).
public struct StepPage: Sendable, Hashable {
    /// The step id; `review` on Review, `complete` once submitted.
    public var id: String
    /// `form`, `content`, `review` or `complete`.
    public var kind: String
    /// The title in the session's locale.
    public var title: String
    /// A line under the title, or empty.
    public var description = ""
    /// Content steps: the text; complete: the success message.
    public var body = ""
    /// A freedesktop icon name, or empty.
    public var icon = ""
    /// The fields of a form step.
    public var fields: [StepField] = []
    /// A step-level message, or empty.
    public var error = ""
    /// What a screen reader says on arrival.
    public var announcement = ""
    /// N of "Step N of M", from 1.
    public var index = 0
    /// M of "Step N of M".
    public var count = 0
    /// The Continue button's label ("Continue", "Back to review", "Finish", "Book").
    public var continueLabel = ""
    /// The Back button's label.
    public var backLabel = ""
    /// Back is possible.
    public var canGoBack = false
    /// Continue is possible.
    public var canContinue = false

    /// A step with an id, a kind and a title; the rest is set afterwards.
    public init(id: String, kind: String, title: String) {
        self.id = id
        self.kind = kind
        self.title = title
    }

    /// The field with `id`.
    public func field(_ id: String) -> StepField? { fields.first { $0.id == id } }
}

/// One answer on Review.
public struct ReviewLine: Sendable, Hashable {
    /// The field id.
    public var field: String
    /// The label.
    public var label: String
    /// The value as shown: option labels, yes/no, a mask, or "Not given".
    public var display: String

    /// A review answer.
    public init(field: String, label: String, display: String) {
        self.field = field
        self.label = label
        self.display = display
    }
}

/// One step on Review.
public struct ReviewSection: Sendable, Hashable {
    /// The step id: Edit is `GoTo(step)`.
    public var step: String
    /// The step title.
    public var title: String
    /// The step's answers were accepted and still pass.
    public var finished: Bool
    /// Empty, or the localized "Not finished".
    public var status: String
    /// "Edit Day and time".
    public var editLabel: String
    /// The answers, in field order.
    public var answers: [ReviewLine]

    /// A review group.
    public init(step: String, title: String, finished: Bool, status: String, editLabel: String, answers: [ReviewLine]) {
        self.step = step
        self.title = title
        self.finished = finished
        self.status = status
        self.editLabel = editLabel
        self.answers = answers
    }
}

/// The Review page (`GetReview`).
public struct ReviewPage: Sendable, Hashable {
    /// One group per form step on the path.
    public var groups: [ReviewSection]
    /// The flow's footnote, or empty.
    public var note: String

    /// A review.
    public init(groups: [ReviewSection], note: String) {
        self.groups = groups
        self.note = note
    }
}

/// One plugin the daemon knows (`ListPlugins`).
public struct PluginSummary: Sendable, Hashable {
    /// The plugin's name.
    public var name: String
    /// Its version.
    public var version: String
    /// What it provides: `validator`, `submit`, `options`, `prefill`.
    public var kinds: [String]
    /// The dotted capability names it registers.
    public var capabilities: [String]
    /// The file it was loaded from.
    public var path: String
    /// `loaded`, `failed` or `disabled`.
    public var status: String
    /// Why it is not loaded; empty when loaded.
    public var error: String

    /// A plugin entry.
    public init(
        name: String, version: String, kinds: [String], capabilities: [String] = [], path: String = "",
        status: String, error: String = ""
    ) {
        self.name = name
        self.version = version
        self.kinds = kinds
        self.capabilities = capabilities
        self.path = path
        self.status = status
        self.error = error
    }
}

/// One entry of a session's predicted path (the `Path` property).
public struct PathStep: Sendable, Hashable {
    /// A step id, or `review`.
    public var step: String
    /// Its title.
    public var title: String
    /// `done`, `current` or `upcoming`.
    public var status: String

    /// A path entry.
    public init(step: String, title: String, status: String) {
        self.step = step
        self.title = title
        self.status = status
    }
}

/// A session's properties (`Properties.GetAll`), the ones flowctl uses.
public struct SessionProperties: Sendable, Hashable {
    /// The session id.
    public var id: String
    /// The flow id.
    public var flow: String
    /// The owner's uid.
    public var owner: UInt32 = 0
    /// The session's locale.
    public var locale = "en"
    /// `editing`, `review`, `submitting`, `submitted` or `failed`.
    public var state = ""
    /// The current step id.
    public var currentStep = ""
    /// The last submit's error, or empty.
    public var lastError = ""
    /// The predicted path.
    public var path: [PathStep] = []
    /// The last successful submit's receipt.
    public var receipt: [String: DBusValue] = [:]
    /// Creation time, µs since the epoch.
    public var createdAt: UInt64 = 0
    /// Last change, µs since the epoch.
    public var updatedAt: UInt64 = 0

    /// Properties of session `id` of `flow`; the rest is set afterwards.
    public init(id: String, flow: String) {
        self.id = id
        self.flow = flow
    }
}

/// Something that happened to a watched session.
public enum SessionEvent: Sendable, Hashable {
    /// `PropertiesChanged`: new values, and names whose values must be re-read.
    case propertiesChanged([String: DBusValue], invalidated: [String])
    /// `StepCompleted`: a step's answers were accepted.
    case stepCompleted(step: String, answers: [String: DBusValue])
    /// `Submitted` with the receipt.
    case submitted(receipt: [String: DBusValue])
    /// `SubmitFailed` with the localized message.
    case submitFailed(message: String)
    /// `Announcement` for a screen reader.
    case announcement(String)
    /// The Manager's `SessionRemoved` for this session.
    case removed
}

/// A stream of a session's events, from ``FlowService/events(_:)``.
public protocol SessionEventSource: AnyObject {
    /// The next event, waiting up to `timeout`; nil when none came.
    func next(timeout: Duration) throws(ServiceError) -> SessionEvent?
}
