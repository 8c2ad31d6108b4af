import FlowKit

/// Everything a client needs to draw the current step (the D-Bus `GetStep`
/// reply). All strings are in the session's locale.
public struct StepView: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case form, content, review, complete
    }

    /// The step id, `review` or `complete`.
    public let id: String
    public let kind: Kind
    public let title: String
    public let description: String
    /// Content steps: the text. Complete: the receipt's or the flow's success message.
    public let body: String
    /// Content steps: a freedesktop icon name, or empty.
    public let icon: String
    public let fields: [FieldView]
    /// A step-level message (a plugin step validator's, not tied to a field), or empty.
    public let error: String
    /// "Step 2 of 4, Day and time".
    public let announcement: String
    /// N of "Step N of M", from 1.
    public let index: Int
    /// M of "Step N of M": the predicted path's length, Review included.
    public let count: Int
    public let continueLabel: String
    public let backLabel: String
    public let canGoBack: Bool
    public let canContinue: Bool
}

/// One field of the current step.
public struct FieldView: Sendable, Hashable {
    public let id: String
    public let type: FieldType
    public let label: String
    public let help: String
    public let placeholder: String
    public let required: Bool
    /// The options (the flow's own or the provider's), never `other`.
    public let options: [ChoiceOption]
    /// The field offers Other.
    public let other: Bool
    /// The Other option's label ("Other" by default).
    public let otherLabel: String
    /// The answer; always nil for a secure field.
    public let value: AnswerValue?
    /// Other's free text, when there is one.
    public let otherText: String?
    /// An answer is held. The only way to tell that a secure field is filled.
    public let isSet: Bool
    /// The error to show under the field, or empty.
    public let error: String
    /// "Select all that apply" for a multiple choice, otherwise empty.
    public let hint: String
    public let minLength: Int?
    public let maxLength: Int?
    public let minimum: Double?
    public let maximum: Double?
    public let integer: Bool
    public let minSelected: Int?
    public let maxSelected: Int?
    /// Date bounds with `today` resolved, as YYYY-MM-DD.
    public let after: String?
    public let before: String?
    public let mustBeOn: Bool
}

/// The Review page (the D-Bus `GetReview` reply).
public struct ReviewView: Sendable, Hashable {
    public let title: String
    /// One group per form step on the path.
    public let groups: [ReviewGroup]
    /// The flow's footnote, or empty.
    public let note: String
    /// The Submit button's label.
    public let submitLabel: String
    /// Every step on the path is finished.
    public let canSubmit: Bool
}

/// One step on Review.
public struct ReviewGroup: Sendable, Hashable {
    public let step: String
    public let title: String
    public let finished: Bool
    /// Empty, or the localized "Not finished".
    public let status: String
    /// "Edit Day and time": the accessible label of the Edit action, which is `GoTo(step)`.
    public let editLabel: String
    public let answers: [ReviewAnswer]
}

/// One answer on Review.
public struct ReviewAnswer: Sendable, Hashable {
    public let field: String
    public let label: String
    /// The value as shown: option labels, "Yes"/"No", a mask for a secure
    /// value, or "Not given".
    public let display: String
}
