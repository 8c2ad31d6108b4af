import Adwaita
import FlowEngine
import FlowKit

/// The selection of a choice field as the person makes it: option ids
/// (`other` included) and Other's text, turned into answers.
struct ChoiceSelection: Equatable {
    let multiple: Bool
    private(set) var chosen: [String]

    init(field: FieldModel) {
        multiple = field.type == .multichoice
        switch field.value {
        case .text(let id) where !id.isEmpty: chosen = [id]
        case .list(let ids): chosen = ids
        default: chosen = []
        }
    }

    func isChosen(_ id: String) -> Bool { chosen.contains(id) }

    /// The person chose (`on`) or released an option. A single choice keeps one.
    mutating func set(_ id: String, _ on: Bool) {
        if multiple {
            if on, !chosen.contains(id) { chosen.append(id) }
            if !on { chosen.removeAll { $0 == id } }
        } else if on {
            chosen = [id]
        } else if chosen == [id] {
            chosen = []
        }
    }

    /// The answer for the field (`SetAnswers`).
    var answer: AnswerValue {
        multiple ? .list(chosen) : .text(chosen.first ?? "")
    }
}

/// The Other entry that appears when Other is chosen.
@MainActor
final class OtherEntry {
    let row: EntryRow
    /// What appears and disappears with the entry (the row, or a group around it).
    var shown: Widget

    init(field: FieldModel, context: EditorContext) {
        row = EntryRow(title: field.other?.label ?? "")
        shown = row
        row.setText(field.other?.text ?? "")
        row.setAccessibleLabel(field.label + ": " + (field.other?.label ?? ""))
        let key = field.otherKey
        row.onChanged { [unowned row] in context.report([key: .text(row.text)]) }
        row.onActivated(context.activate)
    }

    var isVisible: Bool {
        get { shown.isVisible }
        set { shown.isVisible = newValue }
    }

    func update(_ field: FieldModel, visible: Bool) {
        isVisible = visible
        row.title = field.other?.label ?? ""
        let text = field.other?.text ?? ""
        if !row.hasFocusWithin, row.text != text { row.setText(text) }
    }
}

/// `choice` and `multichoice` as rows: radio buttons for one, check buttons
/// for several; an option's icon before its label; Other last, with its
/// entry row appearing under it when chosen.
@MainActor
final class ChoiceRowsEditor: FieldEditor {
    let fieldID: String
    private let group: PreferencesGroup
    private var checks: [(id: String, button: CheckButton)] = []
    private var otherEntry: OtherEntry?
    private let chrome: FieldChrome
    private var selection: ChoiceSelection
    var root: Widget { chrome.root }
    var focusTarget: Widget { checks.first(where: { selection.isChosen($0.id) })?.button ?? checks.first?.button ?? group }

    init(_ field: FieldModel, context: EditorContext) {
        fieldID = field.id
        selection = ChoiceSelection(field: field)
        group = PreferencesGroup(title: field.displayLabel)
        chrome = FieldChrome(content: group)
        var options = field.options
        if let other = field.other { options.append(OptionModel(id: FieldModel.otherOptionID, label: other.label)) }
        // When some options have icons, the others get an empty slot so the labels line up.
        let anyIcon = options.contains { !$0.icon.isEmpty }
        for option in options {
            let row = ActionRow(title: option.label)
            row.setLines(title: 0, subtitle: 0)
            let check = CheckButton(radio: !selection.multiple)
            if let first = checks.first?.button, !selection.multiple { check.join(first) }
            // libadwaita 1.2 puts each new prefix first: the icon, then the button before it.
            if anyIcon {
                let icon = Image(iconName: option.icon, pixelSize: 24)
                icon.setSizeRequest(width: 24, height: 24)
                row.addPrefix(icon)
            }
            row.addPrefix(check)
            row.setActivatableWidget(check)
            check.setAccessibleLabel(option.label)
            group.add(row)
            checks.append((option.id, check))
            let id = option.id
            check.onToggled { [unowned self, unowned check] in
                // In a single choice, the option released by the new one says nothing of its own.
                if !selection.multiple, !check.isActive { return }
                selection.set(id, check.isActive)
                otherEntry?.isVisible = selection.isChosen(FieldModel.otherOptionID)
                context.report([fieldID: selection.answer])
            }
        }
        if field.other != nil {
            let entry = OtherEntry(field: field, context: context)
            group.add(entry.row)
            otherEntry = entry
        }
        // The group names the options for a screen reader; errors and hints describe it.
        group.setAccessibleLabel(field.displayLabel)
        chrome.attach(input: group, field: field)
        update(field)
    }

    func update(_ field: FieldModel) {
        group.title = field.displayLabel
        chrome.update(field)
        selection = ChoiceSelection(field: field)
        for (id, check) in checks { check.isActive = selection.isChosen(id) }
        otherEntry?.update(field, visible: selection.isChosen(FieldModel.otherOptionID))
    }

    func showError(_ text: String) { chrome.showError(text) }
}

/// `choice` and `multichoice` with a few short options: chips that stay
/// pressed (one at a time for a single choice), Other with its entry below.
@MainActor
final class ChoiceChipsEditor: FieldEditor {
    let fieldID: String
    private let group: PreferencesGroup
    private var chips: [(id: String, button: ToggleButton)] = []
    private var otherEntry: OtherEntry?
    private let chrome: FieldChrome
    private var selection: ChoiceSelection
    var root: Widget { chrome.root }
    var focusTarget: Widget { chips.first(where: { selection.isChosen($0.id) })?.button ?? chips.first?.button ?? group }

    init(_ field: FieldModel, context: EditorContext) {
        fieldID = field.id
        selection = ChoiceSelection(field: field)
        group = PreferencesGroup(title: field.displayLabel)
        let flow = FlowBox(spacing: 8)
        group.add(flow)
        // Other's entry in a group of its own: a preferences group shows its rows before other children.
        let content = Box(.vertical, spacing: 8)
        content.append(group)
        let otherGroup = PreferencesGroup()
        content.append(otherGroup)
        chrome = FieldChrome(content: content)
        var options = field.options
        if let other = field.other { options.append(OptionModel(id: FieldModel.otherOptionID, label: other.label)) }
        for option in options {
            let chip = ToggleButton(label: option.label)
            chip.addStyleClass("chip")
            if !option.icon.isEmpty { chip.setIcon(option.icon, label: option.label) }
            chip.setAccessibleLabel(option.label)
            if let first = chips.first?.button, !selection.multiple { chip.join(first) }
            flow.append(chip)
            chips.append((option.id, chip))
            let id = option.id
            chip.onToggled { [unowned self, unowned chip] in
                // In a single choice, the option released by the new one says nothing of its own.
                if !selection.multiple, !chip.isActive { return }
                selection.set(id, chip.isActive)
                otherEntry?.isVisible = selection.isChosen(FieldModel.otherOptionID)
                context.report([fieldID: selection.answer])
            }
        }
        if field.other != nil {
            let entry = OtherEntry(field: field, context: context)
            otherGroup.add(entry.row)
            entry.shown = otherGroup
            otherEntry = entry
        }
        otherGroup.isVisible = false
        group.setAccessibleLabel(field.displayLabel)
        chrome.attach(input: group, field: field)
        update(field)
    }

    func update(_ field: FieldModel) {
        group.title = field.displayLabel
        chrome.update(field)
        selection = ChoiceSelection(field: field)
        for (id, chip) in chips { chip.isActive = selection.isChosen(id) }
        otherEntry?.update(field, visible: selection.isChosen(FieldModel.otherOptionID))
    }

    func showError(_ text: String) { chrome.showError(text) }
}
