import Adwaita
import FlowKit
import FlowProtocol

/// Number text as typed ↔ the answer sent.
enum NumberText {
    /// The answer for `text`: empty clears the answer; a number becomes an
    /// integer or a fraction; anything else goes as the text typed, so the
    /// daemon's error, not a silent blank, tells the person what is wrong.
    /// A decimal comma is read as a point.
    static func answer(for text: String, integer: Bool) -> AnswerValue {
        let trimmed = text.trimmingSpaces
        if trimmed.isEmpty { return .text("") }
        let normalized = trimmed.contains(".") ? trimmed : String(trimmed.map { $0 == "," ? "." : $0 })
        if integer, let i = Int64(normalized) { return .integer(i) }
        if let d = Double(normalized), d.isFinite {
            if let i = Int64(exactly: d), !normalized.contains(".") { return .integer(i) }
            return .number(d)
        }
        return .text(trimmed)
    }

    /// The text shown for an answer held by the daemon.
    static func display(_ value: AnswerValue?) -> String {
        switch value {
        case .integer(let i): return String(i)
        case .number(let d):
            if let i = Int64(exactly: d) { return String(i) }
            return String(d)
        case .text(let s): return s
        default: return ""
        }
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}

/// `number` with both bounds and whole numbers: a spin button in a row.
@MainActor
final class NumberSpinEditor: FieldEditor {
    private let row: ActionRow
    private let spin: SpinButton
    let chrome: FieldChrome
    var focusTarget: Widget { spin }

    /// A spin button suits a whole number between two bounds not too far apart.
    static func fits(_ field: StepField) -> Bool {
        guard field.integer, let lo = field.minimum, let hi = field.maximum else {
            return false
        }
        return lo <= hi && hi - lo <= 1_000_000
    }

    init(_ field: StepField, context: EditorContext) {
        spin = SpinButton(minimum: field.minimum ?? 0, maximum: field.maximum ?? 0, step: 1, digits: 0)
        row = ActionRow(title: context.label(field))
        row.addSuffix(spin)
        row.setActivatableWidget(spin)
        chrome = FieldChrome(row: row, optionalLabel: context.optionalLabel)
        chrome.attach(input: spin, field: field)
        show(field.answer)
        let id = field.id
        spin.onChanged { [unowned spin] in context.report([id: NumberText.answer(for: spin.text, integer: true)]) }
        spin.onActivated(context.activate)
    }

    private func show(_ value: AnswerValue?) {
        spin.number = Double(NumberText.display(value))
    }

    func update(_ field: StepField) {
        row.title = chrome.label(field)
        chrome.update(field)
        if !spin.hasFocusWithin, spin.text != NumberText.display(field.answer) { show(field.answer) }
    }

}
