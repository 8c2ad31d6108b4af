import FlowKit

/// Everything a client needs to draw the current step (the D-Bus `GetStep`
/// reply). All strings are in the session's locale.
package struct StepView: Sendable, Hashable {
    /// What the client draws.
    package enum Kind: String, Sendable, Hashable {
        case form, content, review, complete
    }

    /// The step id, `review` or `complete`.
    package let id: String
    /// `form`, `content`, `review` or `complete`.
    package let kind: Kind
    /// The title in the session's locale.
    package let title: String
    /// A line under the title (on Review: the note), or empty.
    package let description: String
    /// Content steps: the text. Complete: the receipt's or the flow's success message.
    package let body: String
    /// Content steps: a freedesktop icon name, or empty.
    package let icon: String
    /// Form steps: the fields shown, in order (a field whose `visibleIf`
    /// does not hold is left out).
    package let fields: [FieldView]
    /// A step-level message (a plugin step validator's, not tied to a
    /// field), or the last submit's failure while the session is `failed`
    /// (on Review, or on the last step of a flow without Review), or empty.
    package let error: String
    /// Since 1.1: a step-level warning (a rule or plugin of level warning,
    /// not tied to a field), or empty. It never stops Continue.
    package let warning: String
    /// "Step 2 of 4, Day and time".
    package let announcement: String
    /// N of "Step N of M", from 1.
    package let index: Int
    /// M of "Step N of M": the predicted path's length, Review included.
    package let count: Int
    /// "Continue", "Back to review", the finish title or the submit label.
    package let continueLabel: String
    /// The localized "Back".
    package let backLabel: String
    /// As ``FlowSession/canGoBack``.
    package let canGoBack: Bool
    /// As ``FlowSession/canContinue``.
    package let canContinue: Bool

    // Since 1.1: labels a client would otherwise have to write itself.

    /// "Step 2 of 4" on its own (``announcement`` adds the title).
    package let progressLabel: String
    /// "Try again": the button that submits again after a failure.
    package let retryLabel: String
    /// "Cancel": the button that stops a running submit.
    package let cancelLabel: String
    /// "Sending…": shown while a submit runs.
    package let submittingLabel: String
    /// "Not sent": shown after a cancelled submit.
    package let notSentLabel: String
    /// "(optional)": after the label of a field that is not required.
    package let optionalLabel: String

    // Since 1.1: the flow and the language.

    /// The flow's title in the page's locale.
    package let flowTitle: String
    /// The flow's description in the page's locale, or empty.
    package let flowDescription: String
    /// The locale asked for, normalized (`de_DE` is `de-DE`).
    package let locale: String
    /// The flow locale the texts resolved to (`ar` on a flow without
    /// Arabic: `en`); see ``FlowDefinition/effectiveLocale(for:)``.
    package let effectiveLocale: String
    /// Rules of the whole step, said before the person continues: the
    /// descriptions of plugin step validators (or the flow's `hint`s).
    package let ruleHints: [RuleHint]
    /// Where a page made from the kept page texts finds the bytes of
    /// ``retryLabel`` … ``effectiveLocale`` once a writer has made them;
    /// none on other pages. Not part of the page's value: two views that
    /// differ only here are equal.
    package var shared = SharedPageBytes(nil)
}

/// A ``StepView``'s way to the bytes kept with its page texts
/// (``KeptPageBytes``): what the view's strings say, in another form, so it
/// takes no part in the view's equality or hash.
package struct SharedPageBytes: Sendable, Hashable {
    /// The bytes' keeper; nil for a page not made from kept texts.
    package let kept: KeptPageBytes?

    init(_ kept: KeptPageBytes?) { self.kept = kept }

    package static func == (lhs: Self, rhs: Self) -> Bool { true }
    package func hash(into hasher: inout Hasher) {}
}

/// A rule said before the person breaks it: "Must match Password",
/// "Required for loans", "Within the next 30 days".
package struct RuleHint: Sendable, Hashable {
    /// Where the rule comes from.
    package enum Kind: String, Sendable, Hashable {
        /// A step rule comparing two fields (`equals`, `notEquals`, `before`, `after`).
        case equals, notEquals, before, after
        /// A step rule that makes the field required when a condition holds.
        case requiredIf
        /// A plugin validator (field or step).
        case plugin
    }

    /// Where the rule comes from.
    package let kind: Kind
    /// What it is about: the other field of a comparison; the field a
    /// `requiredIf` condition reads (empty when it reads several); the
    /// plugin's capability name.
    package let subject: String
    /// The sentence, in the page's locale.
    package let text: String

    /// A hint of `kind` about `subject` saying `text`.
    package init(kind: Kind, subject: String, text: String) {
        self.kind = kind
        self.subject = subject
        self.text = text
    }
}

/// One field of the current step.
package struct FieldView: Sendable, Hashable {
    /// The field's id.
    package let id: String
    /// The field's type.
    package let type: FieldType
    /// The label in the session's locale.
    package let label: String
    /// A hint, or empty.
    package let help: String
    /// An input placeholder, or empty.
    package let placeholder: String
    /// The field must be answered now: `required`, or (since 1.1) a
    /// `requiredIf` rule whose condition holds with the current answers.
    package let required: Bool
    /// The options (the flow's own or the provider's), never `other`.
    package let options: [ChoiceOption]
    /// The field offers Other.
    package let other: Bool
    /// The Other option's label ("Other" by default).
    package let otherLabel: String
    /// The answer; always nil for a secure field.
    package let value: AnswerValue?
    /// Other's free text, when there is one.
    package let otherText: String?
    /// An answer is held. The only way to tell that a secure field is filled.
    package let isSet: Bool
    /// The error to show under the field, or empty.
    package let error: String
    /// Since 1.1: a warning to show under the field, or empty; it never
    /// stops Continue.
    package let warning: String
    /// Since 1.1: a computed field's value in words, formatted for the
    /// locale with the flow's `display` ("1,440 €"); empty for other fields.
    package let display: String
    /// "Select all that apply" for a multiple choice, otherwise empty.
    package let hint: String
    /// The `minLength` rule, in Unicode scalars.
    package let minLength: Int?
    /// The `maxLength` rule, in Unicode scalars.
    package let maxLength: Int?
    /// The `minimum` rule.
    package let minimum: Double?
    /// The `maximum` rule.
    package let maximum: Double?
    /// The `integer` rule.
    package let integer: Bool
    /// The `minSelected` rule.
    package let minSelected: Int?
    /// The `maxSelected` rule.
    package let maxSelected: Int?
    /// Date bounds with `today` resolved, as YYYY-MM-DD.
    package let after: String?
    /// The `before` bound, `today` resolved, as YYYY-MM-DD.
    package let before: String?
    /// The `mustBeOn` rule.
    package let mustBeOn: Bool

    // Since 1.1.

    /// A toggle's "Yes", empty for other types.
    package let yesLabel: String
    /// A toggle's "No", empty for other types.
    package let noLabel: String
    /// What `pattern` wants, in words: the flow's `patternHint`, else the
    /// localized "Must be in the required format"; empty without a pattern.
    package let patternHint: String
    /// A step rule (`requiredIf`) makes the field required depending on other
    /// answers; ``required`` says whether it is required now.
    package let conditionallyRequired: Bool
    /// The rules beyond the field's own constraints, in order: the step's
    /// rules whose message would go to this field, then its plugin
    /// validators (those that describe themselves or have a flow `hint`).
    package let ruleHints: [RuleHint]
}

/// The Review page (the D-Bus `GetReview` reply).
package struct ReviewView: Sendable, Hashable {
    /// The title in the session's locale.
    package let title: String
    /// One group per form step on the path.
    package let groups: [ReviewGroup]
    /// The flow's footnote, or empty.
    package let note: String
    /// The Submit button's label.
    package let submitLabel: String
    /// Every step on the path is finished.
    package let canSubmit: Bool
}

/// One step on Review.
package struct ReviewGroup: Sendable, Hashable {
    /// The step's id: Edit is `GoTo(step)`.
    package let step: String
    /// The title in the session's locale.
    package let title: String
    /// Continue accepted the step's current answers, and they still pass.
    package let finished: Bool
    /// Empty, or the localized "Not finished".
    package let status: String
    /// "Edit Day and time": the accessible label of the Edit action, which is `GoTo(step)`.
    package let editLabel: String
    /// One entry per field shown, in order.
    package let answers: [ReviewAnswer]
}

/// One answer on Review.
package struct ReviewAnswer: Sendable, Hashable {
    /// The field's id.
    package let field: String
    /// The label in the session's locale.
    package let label: String
    /// The value as shown: option labels, "Yes"/"No", a mask for a secure
    /// value, or "Not given".
    package let display: String
}

/// The path-dependent values a session shows, computed together
/// (``FlowSession/progressSnapshot``).
package struct ProgressSnapshot: Sendable, Hashable {
    /// ``FlowSession/stepIndex``.
    package let stepIndex: Int
    /// ``FlowSession/stepCount``.
    package let stepCount: Int
    /// ``FlowSession/canGoBack``.
    package let canGoBack: Bool
    /// ``FlowSession/canContinue``.
    package let canContinue: Bool
    /// ``FlowSession/continueLabel``.
    package let continueLabel: String
    /// ``FlowSession/path``.
    package let path: [PathEntry]
    /// ``FlowSession/visibleFieldIDs``.
    package let visibleFields: [String]
}

/// One entry of the session's path, for a client that draws a dot per step.
package struct PathEntry: Sendable, Hashable {
    /// Where the person is relative to this entry.
    package enum Status: String, Sendable, Hashable {
        case done, current, upcoming
    }

    /// A step id, or `review`.
    package let id: String
    /// The step's title in the session's locale.
    package let title: String
    /// `done`, `current` or `upcoming`.
    package let status: Status
}
