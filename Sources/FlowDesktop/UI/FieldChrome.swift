import Adwaita
import FlowProtocol

/// What every field shows around its input: the error under it (only once
/// the person touched the field), a warning (which never stops Continue),
/// then its help and the rule hints the
/// daemon describes (the multiple choice's, the pattern's, step rules,
/// conditional requirements, plugin validators), and the accessible name
/// and description the screen reader reads on the input.
@MainActor
final class FieldChrome {
    /// The field's block on the page: the input part, then the texts.
    let root = Box(.vertical, spacing: 6)
    private let errorLabel = Label()
    private let warningLabel = Label()
    private let notesLabel = Label()
    /// The field's id, set by ``attach(input:field:)``.
    private(set) var fieldID = ""
    /// The widget a screen reader lands on for this field.
    private weak var input: Widget?
    private var help = ""
    private var hints: [String] = []
    private var error = ""
    private var warning = ""
    private var extraNote = ""
    /// The daemon's "(optional)".
    private let optionalLabel: String

    /// The chrome around `row` in a boxed list of its own (entry rows, action rows).
    convenience init(row: Widget, optionalLabel: String) {
        let group = PreferencesGroup()
        group.add(row)
        self.init(content: group, optionalLabel: optionalLabel)
    }

    init(content: Widget, optionalLabel: String) {
        self.optionalLabel = optionalLabel
        root.append(content)
        for label in [errorLabel, warningLabel, notesLabel] {
            label.wraps = true
            label.xAlign = 0
            label.addStyleClass("caption")
            label.setMargins(start: 12, end: 12)
            label.isVisible = false
            root.append(label)
        }
        errorLabel.addStyleClass("field-error")
        warningLabel.addStyleClass("field-warning")
        notesLabel.addStyleClass("dim-label")
    }

    /// The field's label as shown: with "(optional)" when it is.
    func label(_ field: StepField) -> String { field.displayLabel(optionalLabel: optionalLabel) }

    /// The input the texts belong to; gets the accessible name and description.
    func attach(input: Widget, field: StepField) {
        self.input = input
        fieldID = field.id
        update(field)
    }

    /// New label, help and hints from the daemon.
    func update(_ field: StepField) {
        input?.setAccessibleLabel(label(field))
        input?.setAccessibleRequired(field.required)
        help = field.help
        hints = field.hintTexts
        warning = field.warning
        refresh()
    }

    /// A note of the app's own under the help ("Saved. Type to replace it.").
    func setExtraNote(_ text: String) {
        extraNote = text
        refresh()
    }

    /// Shows `text` as the field's error; empty hides it.
    func showError(_ text: String) {
        error = text
        refresh()
    }

    private func refresh() {
        errorLabel.showText(error)
        warningLabel.showText(warning)
        let notes = ([help] + hints + [extraNote]).filter { !$0.isEmpty }
        notesLabel.showText(notes.joined(separator: "\n"))
        guard let input else { return }
        input.setAccessibleDescription(([error, warning] + notes).filter { !$0.isEmpty }.joined(separator: ". "))
        input.setAccessibleInvalid(!error.isEmpty)
        // Entry rows and inputs turn red with the error.
        input.setStyleClass("error", !error.isEmpty)
        input.setDescribedBy(error.isEmpty ? nil : errorLabel)
    }
}
