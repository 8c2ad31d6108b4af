import Adwaita
import FlowKit
import FlowProtocol

/// The widget for one field type. An editor reports the person's input as
/// answers (the keys and values of `SetAnswers`) and never reports what the
/// model set (updates are made with the input signals blocked).
@MainActor
protocol FieldEditor: AnyObject {
    /// The texts around the input (error, help, hints) and the block the page adds.
    var chrome: FieldChrome { get }
    /// Where the focus goes when the step arrives.
    var focusTarget: Widget { get }
    /// New data from the daemon: labels, value, hints. A value the person is
    /// typing into right now is left alone.
    func update(_ field: StepField)
}

extension FieldEditor {
    /// The field's id, from the chrome it attached to (every editor does in its `init`).
    var fieldID: String { chrome.fieldID }

    /// The block the step page adds.
    var root: Widget { chrome.root }

    /// Shows the field's error ("" hides it).
    func showError(_ text: String) { chrome.showError(text) }
}

/// What every editor is given.
@MainActor
struct EditorContext {
    /// Reports the person's input (`SetAnswers` keys and values).
    let report: @MainActor ([String: AnswerValue]) -> Void
    /// Enter in a single-line input: Continue.
    let activate: @MainActor () -> Void
    let strings: AppStrings
    /// The daemon's "(optional)" for this step.
    let optionalLabel: String

    /// `field`'s label as shown, "(optional)" included.
    func label(_ field: StepField) -> String { field.displayLabel(optionalLabel: optionalLabel) }
}

@MainActor
enum FieldEditors {
    /// The editor for `field`'s type.
    static func make(_ field: StepField, context: EditorContext) -> any FieldEditor {
        switch field.type {
        case .text: return EntryEditor(field, purpose: .freeForm, context: context)
        case .email: return EntryEditor(field, purpose: .email, context: context)
        case .secure: return SecureEditor(field, context: context)
        case .multiline: return MultilineEditor(field, context: context)
        case .number:
            return NumberSpinEditor.fits(field)
                ? NumberSpinEditor(field, context: context) : EntryEditor.number(field, context: context)
        case .date: return DateEditor(field, context: context)
        case .time: return TimeEditor(field, context: context)
        case .toggle: return ToggleEditor(field, context: context)
        case .choice, .multichoice: return ChoiceEditor(field, style: ChoiceStyle.of(field), context: context)
        case .computed: return ComputedEditor(field, context: context)
        }
    }
}
