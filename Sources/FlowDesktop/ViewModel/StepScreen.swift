import FlowEngine
import FlowKit

// The window's view models: plain values, every text in them comes from the
// daemon (`GetStep`, `GetReview`, the session properties) except where a doc
// comment says otherwise. Filling them from the protocol's step and review
// pages is one small adapter; nothing in the UI knows about D-Bus.

/// "Step 2 of 4": where the person is on the path taken.
package struct StepProgress: Sendable, Hashable {
    /// N, from 1.
    package var index: Int
    /// M, the predicted path length (Review counts as a step).
    package var count: Int
    /// The daemon's "Step 2 of 4".
    package var label: String

    package init(index: Int, count: Int, label: String) {
        self.index = index
        self.count = count
        self.label = label
    }
}

/// The buttons at the bottom of a step or of Review.
package struct StepActions: Sendable, Hashable {
    /// "Continue", "Back to review", "Submit", "Book": the daemon's `continueLabel`.
    package var continueLabel: String
    package var backLabel: String
    package var canContinue: Bool
    package var canGoBack: Bool
    /// A failed submit: the daemon's localized message, shown under the button.
    package var failure: SubmitFailure?

    package init(
        continueLabel: String, backLabel: String, canContinue: Bool, canGoBack: Bool, failure: SubmitFailure? = nil
    ) {
        self.continueLabel = continueLabel
        self.backLabel = backLabel
        self.canContinue = canContinue
        self.canGoBack = canGoBack
        self.failure = failure
    }
}

/// A submit that failed, and the way to try again.
package struct SubmitFailure: Sendable, Hashable {
    /// The daemon's `LastError`.
    package var message: String
    /// "Try again".
    package var retryLabel: String

    package init(message: String, retryLabel: String) {
        self.message = message
        self.retryLabel = retryLabel
    }
}

/// One step of a flow: a form or a content step (`GetStep`).
package struct StepScreen: Sendable, Hashable {
    package enum Kind: Sendable, Hashable { case form, content }

    package var id: String
    package var kind: Kind
    package var title: String
    /// A line under the title, or empty.
    package var description: String
    /// Content steps: the text.
    package var body: String
    /// Content steps: a freedesktop icon name, or empty.
    package var icon: String
    package var fields: [FieldModel]
    /// A step-level message not tied to a field, or empty.
    package var error: String
    /// What a screen reader says on arrival: "Step 2 of 4, Day and time".
    package var announcement: String
    package var progress: StepProgress
    package var actions: StepActions

    package init(
        id: String, kind: Kind = .form, title: String, description: String = "", body: String = "", icon: String = "",
        fields: [FieldModel] = [], error: String = "", announcement: String, progress: StepProgress,
        actions: StepActions
    ) {
        self.id = id
        self.kind = kind
        self.title = title
        self.description = description
        self.body = body
        self.icon = icon
        self.fields = fields
        self.error = error
        self.announcement = announcement
        self.progress = progress
        self.actions = actions
    }
}

/// One option of a choice.
package struct OptionModel: Sendable, Hashable {
    /// The id sent as the answer.
    package var id: String
    package var label: String
    /// A freedesktop icon name, or empty.
    package var icon: String

    package init(id: String, label: String, icon: String = "") {
        self.id = id
        self.label = label
        self.icon = icon
    }
}

/// The "Other" choice of a field that offers one.
package struct OtherOption: Sendable, Hashable {
    /// "Other", or the flow's own label ("Something else").
    package var label: String
    /// The free text typed for Other, or empty.
    package var text: String

    package init(label: String, text: String = "") {
        self.label = label
        self.text = text
    }
}

/// The bounds of a number field.
package struct NumberRange: Sendable, Hashable {
    package var minimum: Double?
    package var maximum: Double?
    package var integer: Bool

    package init(minimum: Double? = nil, maximum: Double? = nil, integer: Bool = false) {
        self.minimum = minimum
        self.maximum = maximum
        self.integer = integer
    }
}

/// The bounds of a date field (`after` and `before`, `today` already resolved).
package struct DateBounds: Sendable, Hashable {
    package var after: CivilDate?
    package var before: CivilDate?

    package init(after: CivilDate? = nil, before: CivilDate? = nil) {
        self.after = after
        self.before = before
    }
}

/// One field of a form step.
package struct FieldModel: Sendable, Hashable {
    /// The field id: the key of the answer.
    package var id: String
    package var type: FieldType
    package var label: String
    /// A line of help under the field, or empty.
    package var help: String
    /// A placeholder inside the input, or empty.
    package var placeholder: String
    package var required: Bool
    /// "(optional)" after the label of a field that is not required; empty shows nothing.
    package var optionalMarker: String
    /// The options of a choice (never Other).
    package var options: [OptionModel]
    /// Other, when the field offers it.
    package var other: OtherOption?
    /// The answer; nil when there is none, and always for a secure field.
    package var value: AnswerValue?
    /// An answer is held: the only way to tell that a secure field is filled.
    package var isSet: Bool
    /// The field's error, or empty when valid. Shown only once the person touched the field.
    package var error: String
    /// The rule hints the daemon describes ("Select all that apply", "Between 1 and 500").
    package var hints: [String]
    package var numberRange: NumberRange?
    package var dateBounds: DateBounds?

    package init(
        id: String, type: FieldType, label: String, help: String = "", placeholder: String = "",
        required: Bool = false, optionalMarker: String = "", options: [OptionModel] = [], other: OtherOption? = nil,
        value: AnswerValue? = nil, isSet: Bool = false, error: String = "", hints: [String] = [],
        numberRange: NumberRange? = nil, dateBounds: DateBounds? = nil
    ) {
        self.id = id
        self.type = type
        self.label = label
        self.help = help
        self.placeholder = placeholder
        self.required = required
        self.optionalMarker = optionalMarker
        self.options = options
        self.other = other
        self.value = value
        self.isSet = isSet
        self.error = error
        self.hints = hints
        self.numberRange = numberRange
        self.dateBounds = dateBounds
    }

    /// The label as shown: "Phone (optional)" for an optional field.
    package var displayLabel: String {
        required || optionalMarker.isEmpty ? label : label + " " + optionalMarker
    }

    /// The key of Other's free text in an answer set (`SetAnswers`).
    package var otherKey: String { id + ".other" }

    /// The option id Other is chosen with.
    package static let otherOptionID = "other"
}
