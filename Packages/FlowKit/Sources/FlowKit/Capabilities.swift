/// Checks one field's value. Called only for a non-empty value, after the
/// built-in rules of the field passed.
public protocol FieldValidator: Sendable {
    /// Returns nil when the value is acceptable, or a message in
    /// `context.locale` that is shown under the field. Throwing means the check
    /// could not be done; the daemon then refuses the value with a generic
    /// message (it fails closed).
    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String?

    /// Describes the rule in a short sentence in `context.locale`, which a
    /// client shows next to the field before the person types: "Within the
    /// next 30 days". Nil, the default, shows nothing.
    ///
    /// Asked once per flow and language, not per session or value, so the
    /// answer may depend only on `context.options`, `context.locale` and
    /// `field`: the context has no session id and no answers, its
    /// `callerUID` is the daemon's own, and it must not depend on the day
    /// (say "within the next 30 days", not the dates). Throwing, or taking
    /// too long, shows no description; the value is still checked.
    func describeRule(field: FieldInfo, context: PluginContext) async throws -> String?

    /// Checks the value like ``validate(_:field:context:)``, and may also
    /// warn: what the daemon calls. The default returns `validate`'s
    /// answer, so a validator that never warns implements only `validate`;
    /// one that warns implements this too (and `validate` as the same check
    /// without the warnings). A warning is shown under the field and never
    /// stops Continue.
    func assess(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> FieldAssessment

    /// Checks the value like ``assess(_:field:context:)``, and may hand back
    /// the value cleaned up (since SDK 1.1): what the daemon calls. flowd
    /// stores the cleaned value instead of what was typed, and the review
    /// and the stored answers show it: `"de 123 456 789"` becomes
    /// `"DE123456789"`. The default returns `assess`'s answer and keeps the
    /// value as typed, so only a validator that normalizes implements this
    /// (and `validate` as the same check).
    ///
    /// The cleaned value must have the field's type (text for a text
    /// field) and pass the field's own rules (length, pattern, options);
    /// flowd checks it again. One that does not is the plugin's fault: the
    /// person sees "Couldn't check this value" and the journal says why.
    func review(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> FieldReview
}

extension FieldValidator {
    /// No description: the rule is only seen when a value breaks it.
    public func describeRule(field: FieldInfo, context: PluginContext) async throws -> String? { nil }

    /// ``validate(_:field:context:)``'s answer: a message is an error.
    public func assess(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> FieldAssessment {
        try await validate(value, field: field, context: context).map(FieldAssessment.rejected) ?? .accepted
    }

    /// ``assess(_:field:context:)``'s answer, the value kept as typed.
    public func review(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> FieldReview {
        FieldReview(try await assess(value, field: field, context: context))
    }
}

/// What a field validator's ``FieldValidator/review(_:field:context:)``
/// found (since SDK 1.1): its assessment, and for a value it accepts or
/// only warns about, perhaps the value as flowd should store it. Plain
/// values, so a host can carry it across a process boundary.
public struct FieldReview: Sendable, Hashable, Codable {
    /// Accepted, rejected with a message, or warned about.
    public var assessment: FieldAssessment
    /// The value as it should be stored, or nil to keep what was typed.
    /// Ignored when the assessment is a rejection.
    public var normalizedValue: AnswerValue?

    /// `assessment`, and `normalizedValue` to store instead of the value
    /// typed (nil: keep it).
    public init(_ assessment: FieldAssessment, normalizedValue: AnswerValue? = nil) {
        self.assessment = assessment
        self.normalizedValue = normalizedValue
    }

    /// The value is fine once cleaned up: flowd stores `value` instead.
    public static func accepted(normalizedTo value: AnswerValue) -> FieldReview {
        FieldReview(.accepted, normalizedValue: value)
    }
}

/// What a field validator found (``FieldValidator/assess(_:field:context:)``).
public enum FieldAssessment: Sendable, Hashable, Codable {
    /// The value is fine.
    case accepted
    /// The value is wrong; the message (in `context.locale`) is shown under
    /// the field, and Continue stays.
    case rejected(String)
    /// The value is allowed but worth a second look; the message is shown
    /// under the field and never stops Continue ("That is a Sunday; we are
    /// closed then.").
    case warning(String)

    /// The message of a rejection; nil when the value is accepted or only
    /// warned about.
    public var rejection: String? {
        if case .rejected(let message) = self { return message }
        return nil
    }
}

/// Checks a step's fields together, on Continue.
public protocol StepValidator: Sendable {
    /// Returns the problems found; an empty array means the step is valid.
    /// `context.answers` holds the answers, this step's included. An issue
    /// of level ``IssueLevel/warning`` is shown and never stops Continue.
    func validate(step: StepInfo, context: PluginContext) async throws -> [ValidationIssue]

    /// Describes the rule in a short sentence in `context.locale`, which a
    /// client shows on the step before the person continues: "The delivery
    /// and billing countries must be the same". Nil, the default, shows
    /// nothing. Asked once per flow and language, as
    /// ``FieldValidator/describeRule(field:context:)`` is.
    func describeRule(step: StepInfo, context: PluginContext) async throws -> String?
}

extension StepValidator {
    /// No description: the rule is only seen when the step breaks it.
    public func describeRule(step: StepInfo, context: PluginContext) async throws -> String? { nil }
}

/// Does something with a finished flow: writes it, sends it, runs it.
///
/// The call runs off the bus thread, under the flow's `timeoutSeconds`, and is
/// cancelled when the person cancels: check `Task.isCancelled` or use
/// cancellable waits. To show the person a specific message on failure, throw
/// ``LocalizedFailure``; any other error shows the localized
/// "Couldn't send this. Try again."
public protocol SubmitAction: Sendable {
    func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt
}

/// Supplies the options of a choice field (`optionsFrom` in a flow file), for
/// example "the next five weekdays". Called when a session starts.
public protocol OptionsProvider: Sendable {
    /// Returns the options with labels in `context.locale`. An empty array is
    /// an error the person sees as "no options available".
    func options(for field: FieldInfo, context: PluginContext) async throws -> [ChoiceOption]
}

/// Supplies a field's initial value (`prefill` in a flow file), for example the
/// caller's real name. Called when a session starts.
public protocol PrefillProvider: Sendable {
    /// Returns the initial value, or nil to leave the field empty.
    func prefill(for field: FieldInfo, context: PluginContext) async throws -> AnswerValue?
}

/// The kinds of capability a plugin can provide.
public enum CapabilityKind: String, Sendable, CaseIterable, Codable {
    case fieldValidator = "field-validator"
    case stepValidator = "step-validator"
    case submitAction = "submit-action"
    case optionsProvider = "options-provider"
    case prefillProvider = "prefill-provider"
}

/// One named thing a plugin provides. Names are dotted and unique across all
/// loaded plugins, for example `flowd.spool` or `example.vat-number`.
public enum Capability: Sendable {
    case fieldValidator(String, any FieldValidator)
    case stepValidator(String, any StepValidator)
    case submitAction(String, any SubmitAction)
    case optionsProvider(String, any OptionsProvider)
    case prefillProvider(String, any PrefillProvider)

    /// The capability's dotted name.
    public var name: String {
        switch self {
        case .fieldValidator(let n, _), .stepValidator(let n, _), .submitAction(let n, _),
            .optionsProvider(let n, _), .prefillProvider(let n, _):
            return n
        }
    }

    /// The capability's kind.
    public var kind: CapabilityKind {
        switch self {
        case .fieldValidator: return .fieldValidator
        case .stepValidator: return .stepValidator
        case .submitAction: return .submitAction
        case .optionsProvider: return .optionsProvider
        case .prefillProvider: return .prefillProvider
        }
    }
}
