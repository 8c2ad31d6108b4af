import Adwaita
import FlowKit

/// `text` and `email`: an entry row.
@MainActor
final class TextEditor: FieldEditor {
    let fieldID: String
    private let row: EntryRow
    private let chrome: FieldChrome
    var root: Widget { chrome.root }
    var focusTarget: Widget { row }

    init(_ field: FieldModel, context: EditorContext) {
        fieldID = field.id
        row = EntryRow(title: field.displayLabel)
        if field.type == .email { row.purpose = .email }
        row.setPlaceholder(field.placeholder)
        let group = PreferencesGroup()
        group.add(row)
        chrome = FieldChrome(content: group)
        chrome.attach(input: row, field: field)
        row.setText(field.value?.textValue ?? "")
        let id = field.id
        row.onChanged { [unowned row] in context.report([id: .text(row.text)]) }
        row.onActivated(context.activate)
    }

    func update(_ field: FieldModel) {
        row.title = field.displayLabel
        row.setPlaceholder(field.placeholder)
        chrome.update(field)
        let value = field.value?.textValue ?? ""
        if !row.hasFocusWithin, row.text != value { row.setText(value) }
    }

    func showError(_ text: String) { chrome.showError(text) }
}

/// `secure`: a password input under the field's title. It shows bullets,
/// has no "show" button, and is never filled from the daemon (secure
/// answers are write-only); a note says when one is already held.
@MainActor
final class SecureEditor: FieldEditor {
    let fieldID: String
    private let group: PreferencesGroup
    private let entry = PasswordEntry()
    private let chrome: FieldChrome
    private let strings: AppStrings
    var root: Widget { chrome.root }
    var focusTarget: Widget { entry }

    init(_ field: FieldModel, context: EditorContext) {
        fieldID = field.id
        strings = context.strings
        group = PreferencesGroup(title: field.displayLabel)
        entry.addStyleClass("secure-field")
        group.add(entry)
        chrome = FieldChrome(content: group)
        chrome.attach(input: entry, field: field)
        let id = field.id
        entry.onChanged { [unowned entry] in context.report([id: .text(entry.text)]) }
        entry.onActivated(context.activate)
        update(field)
    }

    func update(_ field: FieldModel) {
        group.title = field.displayLabel
        chrome.update(field)
        chrome.setExtraNote(field.isSet && entry.text.isEmpty ? strings(.secureIsSet) : "")
    }

    func showError(_ text: String) { chrome.showError(text) }
}

/// `multiline`: a titled text view in a card.
@MainActor
final class MultilineEditor: FieldEditor {
    let fieldID: String
    private let group: PreferencesGroup
    private let view = TextView()
    private let chrome: FieldChrome
    var root: Widget { chrome.root }
    var focusTarget: Widget { view }

    init(_ field: FieldModel, context: EditorContext) {
        fieldID = field.id
        group = PreferencesGroup(title: field.displayLabel)
        let scroller = ScrolledWindow(child: view)
        scroller.setMinimumContentHeight(110)
        scroller.addStyleClass("card")
        scroller.addStyleClass("multiline")
        group.add(scroller)
        chrome = FieldChrome(content: group)
        chrome.attach(input: view, field: field)
        view.text = field.value?.textValue ?? ""
        let id = field.id
        view.onChanged { [unowned view] in context.report([id: .text(view.text)]) }
    }

    func update(_ field: FieldModel) {
        group.title = field.displayLabel
        chrome.update(field)
        let value = field.value?.textValue ?? ""
        if !view.hasFocus, view.text != value { view.text = value }
    }

    func showError(_ text: String) { chrome.showError(text) }
}
