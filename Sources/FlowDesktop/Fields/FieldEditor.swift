import Adwaita
import FlowEngine
import FlowKit

/// The widget for one field type. An editor reports the person's input as
/// answers (the keys and values of `SetAnswers`) and never reports what the
/// model set (updates are made with the input signals blocked).
@MainActor
protocol FieldEditor: AnyObject {
    var fieldID: String { get }
    /// The block the step page adds.
    var root: Widget { get }
    /// Where the focus goes when the step arrives.
    var focusTarget: Widget { get }
    /// New data from the daemon: labels, value, hints. A value the person is
    /// typing into right now is left alone.
    func update(_ field: FieldModel)
    /// Shows the field's error ("" hides it).
    func showError(_ text: String)
}

/// What every editor is given.
@MainActor
struct EditorContext {
    /// Reports the person's input (`SetAnswers` keys and values).
    let report: @MainActor ([String: AnswerValue]) -> Void
    /// Enter in a single-line input: Continue.
    let activate: @MainActor () -> Void
    let strings: AppStrings
}

@MainActor
enum FieldEditors {
    /// The editor for `field`'s type.
    static func make(_ field: FieldModel, context: EditorContext) -> any FieldEditor {
        switch field.type {
        case .text, .email: return TextEditor(field, context: context)
        case .secure: return SecureEditor(field, context: context)
        case .multiline: return MultilineEditor(field, context: context)
        case .number:
            return NumberSpinEditor.fits(field)
                ? NumberSpinEditor(field, context: context) : NumberEntryEditor(field, context: context)
        case .date: return DateEditor(field, context: context)
        case .time: return TimeEditor(field, context: context)
        case .toggle: return ToggleEditor(field, context: context)
        case .choice, .multichoice:
            switch ChoiceStyle.of(field) {
            case .rows: return ChoiceRowsEditor(field, context: context)
            case .chips: return ChoiceChipsEditor(field, context: context)
            }
        }
    }
}
