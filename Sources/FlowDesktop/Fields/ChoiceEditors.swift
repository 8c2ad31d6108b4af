import Adwaita
import FlowKit
import FlowProtocol

/// The selection of a choice field as the person makes it: option ids
/// (`other` included) and Other's text, turned into answers.
struct ChoiceSelection: Equatable {
    let multiple: Bool
    private(set) var chosen: [String]

    init(field: StepField) {
        multiple = field.type == .multichoice
        switch field.answer {
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

    init(field: StepField, context: EditorContext) {
        row = EntryRow(title: field.otherLabel)
        shown = row
        row.setText(field.otherValue ?? "")
        row.setAccessibleLabel(field.label + ": " + field.otherLabel)
        let key = field.otherKey
        row.onChanged { [unowned row] in context.report([key: .text(row.text)]) }
        row.onActivated(context.activate)
    }

    var isVisible: Bool {
        get { shown.isVisible }
        set { shown.isVisible = newValue }
    }

    func update(_ field: StepField, visible: Bool) {
        isVisible = visible
        row.title = field.otherLabel
        let text = field.otherValue ?? ""
        if !row.hasFocusWithin, row.text != text { row.setText(text) }
    }
}

/// A button that chooses an option: a check or radio button in a row, or a chip.
@MainActor
protocol ChoiceButton: Widget {
    var isActive: Bool { get set }
    func onToggled(_ action: @escaping @MainActor () -> Void)
}

extension CheckButton: ChoiceButton {}
extension ToggleButton: ChoiceButton {}

/// `choice` and `multichoice`, in either style (``ChoiceStyle``):
/// - rows: radio buttons for one, check buttons for several, an option's icon
///   before its label, Other last with its entry row appearing under it;
/// - chips: toggle buttons that stay pressed (one at a time for a single
///   choice), Other's entry in a group of its own below them.
@MainActor
final class ChoiceEditor: FieldEditor {
    let chrome: FieldChrome
    private let group: PreferencesGroup
    private var buttons: [(id: String, button: any ChoiceButton)] = []
    private var otherEntry: OtherEntry?
    private var selection: ChoiceSelection

    var focusTarget: Widget {
        buttons.first(where: { selection.isChosen($0.id) })?.button ?? buttons.first?.button ?? group
    }

    init(_ field: StepField, style: ChoiceStyle, context: EditorContext) {
        selection = ChoiceSelection(field: field)
        group = PreferencesGroup(title: context.label(field))
        let options = field.choices
        let other = field.other ? OtherEntry(field: field, context: context) : nil
        switch style {
        case .rows:
            buttons = Self.rows(options, multiple: selection.multiple, in: group)
            if let other { group.add(other.row) }
            chrome = FieldChrome(content: group, optionalLabel: context.optionalLabel)
        case .chips:
            buttons = Self.chips(options, multiple: selection.multiple, in: group)
            // A preferences group shows its rows before other children: Other's entry goes below, in its own.
            let content = Box(.vertical, spacing: 8)
            content.append(group)
            let otherGroup = PreferencesGroup()
            otherGroup.isVisible = false
            content.append(otherGroup)
            if let other {
                otherGroup.add(other.row)
                other.shown = otherGroup
            }
            chrome = FieldChrome(content: content, optionalLabel: context.optionalLabel)
        }
        otherEntry = other
        for (id, button) in buttons {
            button.onToggled { [unowned self, unowned button] in
                // In a single choice, the option released by the new one says nothing of its own.
                if !selection.multiple, !button.isActive { return }
                selection.set(id, button.isActive)
                otherEntry?.isVisible = selection.isChosen(StepField.otherOptionID)
                context.report([fieldID: selection.answer])
            }
        }
        // The group names the options for a screen reader; errors and hints describe it.
        group.setAccessibleLabel(context.label(field))
        chrome.attach(input: group, field: field)
        update(field)
    }

    /// A row per option with a radio (or check) button; when some options have
    /// icons, the others get an empty slot so the labels line up.
    private static func rows(_ options: [ChoiceOption], multiple: Bool, in group: PreferencesGroup)
        -> [(id: String, button: any ChoiceButton)]
    {
        let anyIcon = options.contains { $0.icon?.isEmpty == false }
        var checks: [(id: String, button: CheckButton)] = []
        for option in options {
            let row = ActionRow(title: option.label, wraps: true)
            let check = CheckButton(radio: !multiple)
            if let first = checks.first?.button, !multiple { check.join(first) }
            // libadwaita 1.2 puts each new prefix first: the icon, then the button before it.
            if anyIcon {
                let icon = Image(iconName: option.icon ?? "", pixelSize: 24)
                icon.setSizeRequest(width: 24, height: 24)
                row.addPrefix(icon)
            }
            row.addPrefix(check)
            row.setActivatableWidget(check)
            check.setAccessibleLabel(option.label)
            group.add(row)
            checks.append((option.id, check))
        }
        return checks.map { ($0.id, $0.button) }
    }

    /// A chip per option in a wrapping line.
    private static func chips(_ options: [ChoiceOption], multiple: Bool, in group: PreferencesGroup)
        -> [(id: String, button: any ChoiceButton)]
    {
        let flow = FlowBox(spacing: 8)
        group.add(flow)
        var chips: [(id: String, button: ToggleButton)] = []
        for option in options {
            let chip = ToggleButton(label: option.label)
            chip.addStyleClass("chip")
            if let icon = option.icon, !icon.isEmpty { chip.setIcon(icon, label: option.label) }
            chip.setAccessibleLabel(option.label)
            if let first = chips.first?.button, !multiple { chip.join(first) }
            flow.append(chip)
            chips.append((option.id, chip))
        }
        return chips.map { ($0.id, $0.button) }
    }

    func update(_ field: StepField) {
        group.title = chrome.label(field)
        chrome.update(field)
        selection = ChoiceSelection(field: field)
        for (id, button) in buttons { button.isActive = selection.isChosen(id) }
        otherEntry?.update(field, visible: selection.isChosen(StepField.otherOptionID))
    }
}
