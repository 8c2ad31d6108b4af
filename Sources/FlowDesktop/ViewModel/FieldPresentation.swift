import FlowKit
import FlowProtocol

// How the window reads a field of the step page (`StepField`): its answer
// as a value, its label with the daemon's "(optional)", and the bounds its
// widgets take.

extension StepField {
    /// The option id Other is chosen with.
    static let otherOptionID = "other"

    /// The answer held, as a value; nil when there is none (always for a secure field).
    var answer: AnswerValue? { value.flatMap(WireValue.answer(from:)) }

    /// The key of Other's free text in an answer set (`SetAnswers`).
    var otherKey: String { id + ".other" }

    /// The label as shown: "Phone (optional)" with the daemon's
    /// `optionalLabel` when the field may be left as it is: not required, no
    /// rule can make it so (such a field says when in its hints), and not a
    /// toggle that must be on ("I accept the terms" is never optional).
    func displayLabel(optionalLabel: String) -> String {
        if !isOptional || optionalLabel.isEmpty { return label }
        // A full-width parenthesis ("（任意）") brings its own space.
        return label + (optionalLabel.hasPrefix("（") ? "" : " ") + optionalLabel
    }

    /// The options a person picks from: the field's own, then Other with its label.
    var choices: [ChoiceOption] {
        other ? options + [ChoiceOption(id: Self.otherOptionID, label: otherLabel)] : options
    }

    /// `after` as a date.
    var earliest: CivilDate? { after.flatMap(CivilDate.init(iso:)) }

    /// `before` as a date.
    var latest: CivilDate? { before.flatMap(CivilDate.init(iso:)) }
}
