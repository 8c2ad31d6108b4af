import Adwaita
import FlowProtocol

/// `computed` (flow format 2): a read-only row, the label with the value
/// the daemon worked out at its end, in the daemon's words for the locale
/// ("1,440 €"; nothing while it has no value). Nothing to type, so it
/// reports nothing.
@MainActor
final class ComputedEditor: FieldEditor {
    private let row: ActionRow
    private let value = Label()
    let chrome: FieldChrome
    var focusTarget: Widget { row }

    init(_ field: StepField, context: EditorContext) {
        row = ActionRow(title: field.label, wraps: true)
        value.isSelectable = true
        value.addStyleClass("numeric", "heading")
        row.addSuffix(value)
        chrome = FieldChrome(row: row, optionalLabel: "")
        chrome.attach(input: row, field: field)
        value.text = field.display
    }

    func update(_ field: StepField) {
        row.title = field.label
        value.text = field.display
        chrome.update(field)
    }
}
