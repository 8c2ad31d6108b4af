import Adwaita
import FlowKit
import FlowProtocol

/// `computed` (flow format 2): a read-only row, the label and the value
/// the daemon worked out. Nothing to type, so it reports nothing.
@MainActor
final class ComputedEditor: FieldEditor {
    let fieldID: String
    private let row: ActionRow
    let chrome: FieldChrome
    var focusTarget: Widget { row }

    init(_ field: StepField, context: EditorContext) {
        fieldID = field.id
        row = ActionRow(title: field.label, subtitle: Self.text(field))
        row.setLines(title: 0, subtitle: 0)
        chrome = FieldChrome(row: row, optionalLabel: "")
        chrome.attach(input: row, field: field)
    }

    func update(_ field: StepField) {
        row.title = field.label
        row.subtitle = Self.text(field)
        chrome.update(field)
    }

    /// The daemon's value in words ("1,440 €"), else the bare value.
    private static func text(_ field: StepField) -> String {
        field.display.isEmpty ? text(field.answer) : field.display
    }

    /// The value as text; empty when it has none.
    private static func text(_ value: AnswerValue?) -> String {
        switch value {
        case .text(let s)?: return s
        case .integer(let i)?: return String(i)
        case .number(let d)?: return String(d)
        case .bool(let b)?: return b ? "✓" : ""
        case .list(let l)?: return l.joined(separator: ", ")
        case nil: return ""
        }
    }
}
