import Adwaita
import FlowKit
import FlowProtocol

/// `toggle`: a row with a switch; clicking anywhere on the row flips it.
@MainActor
final class ToggleEditor: FieldEditor {
    private let row: ActionRow
    private let toggle = Switch()
    let chrome: FieldChrome
    var focusTarget: Widget { toggle }

    init(_ field: StepField, context: EditorContext) {
        row = ActionRow(title: context.label(field), wraps: true)
        row.addSuffix(toggle)
        row.setActivatableWidget(toggle)
        chrome = FieldChrome(row: row, optionalLabel: context.optionalLabel)
        chrome.attach(input: toggle, field: field)
        toggle.isOn = field.answer == .bool(true)
        let id = field.id
        toggle.onChanged { [unowned toggle] in context.report([id: .bool(toggle.isOn)]) }
    }

    func update(_ field: StepField) {
        row.title = chrome.label(field)
        chrome.update(field)
        toggle.isOn = field.answer == .bool(true)
    }

}
