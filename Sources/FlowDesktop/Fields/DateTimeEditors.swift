import Adwaita
import FlowKit
import FlowProtocol

/// `date`: an entry row for `YYYY-MM-DD` with a calendar in a popover. The
/// calendar opens on the answer, else on the first day the bounds allow.
@MainActor
final class DateEditor: FieldEditor {
    private let row: EntryRow
    private let calendar = Calendar()
    private let popover: Popover
    let chrome: FieldChrome
    /// The `after` bound: the calendar opens on the day after it.
    private var earliest: CivilDate?
    var focusTarget: Widget { row }

    init(_ field: StepField, context: EditorContext) {
        earliest = field.earliest
        row = EntryRow(title: context.label(field))
        row.setPlaceholder(field.placeholder.isEmpty ? "YYYY-MM-DD" : field.placeholder)
        popover = Popover(child: calendar)
        row.addSuffix(MenuButton(iconName: "x-office-calendar-symbolic", accessibleLabel: context.strings(.chooseDate), popover: popover))
        chrome = FieldChrome(row: row, optionalLabel: context.optionalLabel)
        chrome.attach(input: row, field: field)
        row.setText(field.answer?.textValue ?? "")
        showOnCalendar(field.answer?.textValue ?? "")
        let id = field.id
        row.onChanged { [unowned self] in
            showOnCalendar(row.text)
            context.report([id: .text(row.text)])
        }
        row.onActivated(context.activate)
        calendar.onDaySelected { [unowned self] in
            let day = calendar.selection
            guard let date = CivilDate(year: day.year, month: day.month, day: day.day) else { return }
            row.setText(date.description)
            popover.popdown()
            context.report([id: .text(date.description)])
        }
    }

    /// Puts the calendar on the typed date, or on the first allowed day.
    private func showOnCalendar(_ text: String) {
        if let date = CivilDate(iso: text) ?? DateEditor.firstAllowedDay(after: earliest) {
            calendar.selection = (date.year, date.month, date.day)
        }
    }

    /// The day after `after` (dates must be after it), when there is a lower bound.
    nonisolated static func firstAllowedDay(after: CivilDate?) -> CivilDate? {
        after?.adding(days: 1)
    }

    func update(_ field: StepField) {
        row.title = chrome.label(field)
        earliest = field.earliest
        chrome.update(field)
        let value = field.answer?.textValue ?? ""
        if !row.hasFocusWithin, row.text != value {
            row.setText(value)
            showOnCalendar(value)
        }
    }

}

/// `time`: an entry row for `HH:MM` with hour and minute spin buttons in a popover.
@MainActor
final class TimeEditor: FieldEditor {
    private let row: EntryRow
    private let hours = SpinButton(minimum: 0, maximum: 23, step: 1, digits: 0)
    private let minutes = SpinButton(minimum: 0, maximum: 59, step: 5, digits: 0)
    let chrome: FieldChrome
    var focusTarget: Widget { row }

    init(_ field: StepField, context: EditorContext) {
        row = EntryRow(title: context.label(field))
        row.setPlaceholder(field.placeholder.isEmpty ? "HH:MM" : field.placeholder)
        hours.setAccessibleLabel(context.strings(.hours))
        minutes.setAccessibleLabel(context.strings(.minutes))
        let pickers = Box(.horizontal, spacing: 6)
        pickers.setMargins(top: 6, bottom: 6, start: 6, end: 6)
        pickers.append(hours)
        pickers.append(Label(":"))
        pickers.append(minutes)
        row.addSuffix(MenuButton(iconName: "preferences-system-time-symbolic", accessibleLabel: context.strings(.chooseTime), popover: Popover(child: pickers)))
        chrome = FieldChrome(row: row, optionalLabel: context.optionalLabel)
        chrome.attach(input: row, field: field)
        show(field.answer?.textValue ?? "")
        let id = field.id
        row.onChanged { [unowned self] in
            showOnPickers(row.text)
            context.report([id: .text(row.text)])
        }
        row.onActivated(context.activate)
        for spin in [hours, minutes] {
            spin.onChanged { [unowned self] in
                guard let time = CivilTime(hour: Int(hours.number ?? 0), minute: Int(minutes.number ?? 0)) else { return }
                let text = time.description
                row.setText(text)
                context.report([id: .text(text)])
            }
        }
    }

    private func show(_ text: String) {
        row.setText(text)
        showOnPickers(text)
    }

    private func showOnPickers(_ text: String) {
        guard let time = CivilTime(iso: text) else { return }
        hours.number = Double(time.hour)
        minutes.number = Double(time.minute)
    }

    func update(_ field: StepField) {
        row.title = chrome.label(field)
        chrome.update(field)
        let value = field.answer?.textValue ?? ""
        if !row.hasFocusWithin, row.text != value { show(value) }
    }

}
