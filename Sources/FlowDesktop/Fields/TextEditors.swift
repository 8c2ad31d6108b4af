import Adwaita
import FlowKit
import FlowProtocol

/// `text`, `email`, and a `number` without a spin button: an entry row.
/// The text typed becomes the answer through `answer`, and a held answer
/// is shown through `display`.
@MainActor
final class EntryEditor: FieldEditor {
    private let row: EntryRow
    let chrome: FieldChrome
    private let display: (AnswerValue?) -> String
    var focusTarget: Widget { row }

    init(
        _ field: StepField, purpose: InputPurpose, context: EditorContext,
        answer: @escaping (String) -> AnswerValue = { .text($0) },
        display: @escaping (AnswerValue?) -> String = { $0?.textValue ?? "" }
    ) {
        self.display = display
        row = EntryRow(title: context.label(field))
        row.purpose = purpose
        chrome = FieldChrome(row: row, optionalLabel: context.optionalLabel)
        chrome.attach(input: row, field: field)
        let id = field.id
        row.onChanged { [unowned row] in context.report([id: answer(row.text)]) }
        row.onActivated(context.activate)
        update(field)
    }

    /// A `number` field's entry: digits only for a whole number that cannot be
    /// negative; a decimal comma is read as a point.
    static func number(_ field: StepField, context: EditorContext) -> EntryEditor {
        let integer = field.integer
        return EntryEditor(
            field, purpose: integer && (field.minimum ?? -1) >= 0 ? .digits : .number, context: context,
            answer: { NumberText.answer(for: $0, integer: integer) }, display: NumberText.display)
    }

    func update(_ field: StepField) {
        row.title = chrome.label(field)
        row.setPlaceholder(field.placeholder)
        chrome.update(field)
        let text = display(field.answer)
        if !row.hasFocusWithin, row.text != text { row.setText(text) }
    }
}

/// `secure`: a password input under the field's title. It shows bullets,
/// has no "show" button, and is never filled from the daemon (secure
/// answers are write-only); a note says when one is already held.
@MainActor
final class SecureEditor: FieldEditor {
    private let group: PreferencesGroup
    private let entry = PasswordEntry()
    let chrome: FieldChrome
    private let strings: AppStrings
    var focusTarget: Widget { entry }

    init(_ field: StepField, context: EditorContext) {
        strings = context.strings
        group = PreferencesGroup(title: context.label(field))
        entry.addStyleClass("secure-field")
        group.add(entry)
        chrome = FieldChrome(content: group, optionalLabel: context.optionalLabel)
        chrome.attach(input: entry, field: field)
        let id = field.id
        entry.onChanged { [unowned entry] in context.report([id: .text(entry.text)]) }
        entry.onActivated(context.activate)
        update(field)
    }

    func update(_ field: StepField) {
        group.title = chrome.label(field)
        chrome.update(field)
        chrome.setExtraNote(field.isSet && entry.text.isEmpty ? strings(.secureIsSet) : "")
    }

}

/// `multiline`: a titled text view in a card.
@MainActor
final class MultilineEditor: FieldEditor {
    private let group: PreferencesGroup
    private let view = TextView()
    let chrome: FieldChrome
    var focusTarget: Widget { view }

    init(_ field: StepField, context: EditorContext) {
        group = PreferencesGroup(title: context.label(field))
        let scroller = ScrolledWindow(child: view)
        scroller.setMinimumContentHeight(110)
        scroller.addStyleClass("card", "multiline")
        group.add(scroller)
        chrome = FieldChrome(content: group, optionalLabel: context.optionalLabel)
        chrome.attach(input: view, field: field)
        view.text = field.answer?.textValue ?? ""
        let id = field.id
        view.onChanged { [unowned view] in context.report([id: .text(view.text)]) }
    }

    func update(_ field: StepField) {
        group.title = chrome.label(field)
        chrome.update(field)
        let value = field.answer?.textValue ?? ""
        if !view.hasFocus, view.text != value { view.text = value }
    }

}
