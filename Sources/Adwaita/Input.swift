import CAdw

/// What an entry is for, so an on-screen keyboard or input method can adapt.
package enum InputPurpose: Sendable, CaseIterable {
    case freeForm, email, number, digits, password

    /// The case for `gtk`; `freeForm` for one this enum does not name.
    init(_ gtk: GtkInputPurpose) {
        self = Self.allCases.first { $0.gtk == gtk } ?? .freeForm
    }

    var gtk: GtkInputPurpose {
        switch self {
        case .freeForm: GTK_INPUT_PURPOSE_FREE_FORM
        case .email: GTK_INPUT_PURPOSE_EMAIL
        case .number: GTK_INPUT_PURPOSE_NUMBER
        case .digits: GTK_INPUT_PURPOSE_DIGITS
        case .password: GTK_INPUT_PURPOSE_PASSWORD
        }
    }
}

/// Reading and writing the text of any `GtkEditable`.
@MainActor
package protocol Editable: Widget {}

extension Editable {
    package var text: String {
        get { String(cString: gtk_editable_get_text(flowd_editable(raw))) }
        set { gtk_editable_set_text(flowd_editable(raw), newValue) }
    }
}

/// `AdwEntryRow`: a boxed-list row with a title that becomes the entry's label.
@MainActor
package final class EntryRow: Widget, Editable {
    private var changedHandler: Signal.HandlerID?

    package init(title: String) {
        super.init(adw_entry_row_new())
        self.title = title
    }

    package var title: String {
        get { String(cString: adw_preferences_row_get_title(flowd_adw_preferences_row(raw))) }
        set { adw_preferences_row_set_title(flowd_adw_preferences_row(raw), newValue) }
    }

    package var purpose: InputPurpose {
        get { InputPurpose(adw_entry_row_get_input_purpose(flowd_adw_entry_row(raw))) }
        set { adw_entry_row_set_input_purpose(flowd_adw_entry_row(raw), newValue.gtk) }
    }

    /// The text input inside the row (a `GtkText`): where focus, typing and
    /// the screen reader's "text" object are.
    private var delegate: UnsafeMutablePointer<GtkText>? {
        gtk_editable_get_delegate(flowd_editable(raw)).map { flowd_text(UnsafeMutableRawPointer($0)) }
    }

    /// An example of the expected input, shown dimmed at the row's end while
    /// the input is empty. (libadwaita 1.2's entry rows have no placeholder: a
    /// GtkText placeholder is drawn over the row's title.)
    package func setPlaceholder(_ text: String) {
        if placeholder == nil, !text.isEmpty {
            let label = Label()
            label.addStyleClass("dim-label")
            label.verticalAlignment = .center
            placeholder = label
            Signal.connect(self, "changed") { [unowned self] in refreshPlaceholder() }
        }
        placeholder?.text = text
        flowd_accessible_set_placeholder(flowd_accessible(raw), text)
        refreshPlaceholder()
    }

    private var placeholder: Label?
    private var placeholderShown = false

    /// Adds the placeholder while the input is empty and removes it after (a
    /// hidden suffix would still shift the row's edit icon).
    private func refreshPlaceholder() {
        guard let placeholder else { return }
        let show = text.isEmpty && !placeholder.text.isEmpty
        guard show != placeholderShown else { return }
        placeholderShown = show
        if show {
            addSuffix(placeholder)
        } else {
            adw_entry_row_remove(flowd_adw_entry_row(raw), placeholder.widget)
        }
    }

    /// The row and its text input alike: a screen reader lands on the input,
    /// whose own labelled-by (the row's two title labels, which GTK 4.8
    /// would read one after the other) the accessible name replaces.
    override var accessibles: [OpaquePointer] {
        super.accessibles + (delegate.map { [flowd_accessible($0)] } ?? [])
    }

    /// Sets the text without reporting it as the person's input.
    package func setText(_ value: String) {
        Signal.blocking(self, changedHandler) { text = value }
        refreshPlaceholder()
    }

    /// Runs `action` when the person edits the text.
    package func onChanged(_ action: @escaping @MainActor () -> Void) {
        changedHandler = Signal.connect(self, "changed", action)
    }

    /// Runs `action` on Enter.
    package func onActivated(_ action: @escaping @MainActor () -> Void) {
        Signal.connect(self, "entry-activated", action)
    }

    package func addSuffix(_ widget: Widget) { adw_entry_row_add_suffix(flowd_adw_entry_row(raw), widget.widget) }
    package func addPrefix(_ widget: Widget) { adw_entry_row_add_prefix(flowd_adw_entry_row(raw), widget.widget) }
}

/// `GtkPasswordEntry` without its "show" icon: the text is never shown,
/// and assistive technologies are told it is a password ("password text"),
/// so a screen reader does not echo the keys. (GTK 4.8 still hands the text
/// itself to a program that asks over AT-SPI, as for every password input.)
@MainActor
package final class PasswordEntry: Widget, Editable {
    package init() {
        super.init(gtk_password_entry_new())
        gtk_password_entry_set_show_peek_icon(OpaquePointer(raw), 0)
    }

    /// Runs `action` when the person edits the text.
    package func onChanged(_ action: @escaping @MainActor () -> Void) {
        Signal.connect(self, "changed", action)
    }

    /// Runs `action` on Enter.
    package func onActivated(_ action: @escaping @MainActor () -> Void) {
        Signal.connect(self, "activate", action)
    }
}

/// `GtkTextView`: multi-line text.
@MainActor
package final class TextView: Widget {
    private var changedHandler: Signal.HandlerID?
    private var buffer: UnsafeMutablePointer<GtkTextBuffer> { gtk_text_view_get_buffer(flowd_text_view(raw)) }

    package init() {
        super.init(gtk_text_view_new())
        let view = flowd_text_view(raw)
        gtk_text_view_set_wrap_mode(view, GTK_WRAP_WORD_CHAR)
        gtk_text_view_set_accepts_tab(view, 0)
        gtk_text_view_set_top_margin(view, 8)
        gtk_text_view_set_bottom_margin(view, 8)
        gtk_text_view_set_left_margin(view, 10)
        gtk_text_view_set_right_margin(view, 10)
    }

    package var text: String {
        get {
            var start = GtkTextIter()
            var end = GtkTextIter()
            gtk_text_buffer_get_bounds(buffer, &start, &end)
            guard let chars = gtk_text_buffer_get_text(buffer, &start, &end, 0) else { return "" }
            defer { g_free(chars) }
            return String(cString: chars)
        }
        set {
            Signal.blocking(Buffer(buffer), changedHandler) {
                gtk_text_buffer_set_text(buffer, newValue, -1)
            }
        }
    }

    /// Runs `action` when the person edits the text.
    package func onChanged(_ action: @escaping @MainActor () -> Void) {
        changedHandler = Signal.connect(Buffer(buffer), "changed", action)
    }

    /// The buffer as an object for signals (owned by the view).
    private final class Buffer: Object {
        init(_ pointer: UnsafeMutablePointer<GtkTextBuffer>) { super.init(pointer) }
    }
}

/// `GtkSpinButton`: a number with − and + buttons, kept within a range,
/// that can also show no number at all (a field without an answer): GTK
/// would otherwise write the range's minimum into an empty spin button when
/// it is shown, and the window would claim an answer nobody gave.
@MainActor
package final class SpinButton: Widget, Editable {
    private var changedHandler: Signal.HandlerID?
    private var valueHandler: Signal.HandlerID?
    /// Shows no number: GTK's formatting ("output") is suppressed.
    private var isEmpty = true
    /// The text last reported or set, so GTK re-formatting the same number is no input.
    private var lastText = ""
    private var action: (@MainActor () -> Void)?

    package init(minimum: Double, maximum: Double, step: Double, digits: Int) {
        super.init(gtk_spin_button_new_with_range(minimum, maximum, step))
        let spin = flowd_spin_button(raw)
        gtk_spin_button_set_digits(spin, UInt32(digits))
        gtk_spin_button_set_numeric(spin, 1)
        gtk_spin_button_set_update_policy(spin, GTK_UPDATE_IF_VALID)
        verticalAlignment = .center
        // True means "formatted already": leave the empty text alone.
        Signal.connectReturning(self, "output") { [unowned self] in isEmpty }
        changedHandler = Signal.connect(self, "changed") { [unowned self] in textChanged() }
        // − and + on an empty spin button: show the number they chose.
        valueHandler = Signal.connect(self, "value-changed") { [unowned self] in
            guard isEmpty else { return }
            isEmpty = false
            gtk_spin_button_update(flowd_spin_button(raw))
            text = format(value)
        }
        lastText = text
    }

    /// The number shown, or nil when the spin button is empty. Setting it is
    /// not reported as input.
    package var number: Double? {
        get { isEmpty ? nil : gtk_spin_button_get_value(flowd_spin_button(raw)) }
        set {
            Signal.blocking(self, changedHandler) {
                Signal.blocking(self, valueHandler) {
                    isEmpty = newValue == nil
                    if let newValue {
                        gtk_spin_button_set_value(flowd_spin_button(raw), newValue)
                        text = format(newValue)
                    } else {
                        text = ""
                    }
                }
            }
            lastText = text
        }
    }

    private var value: Double { gtk_spin_button_get_value(flowd_spin_button(raw)) }

    private func format(_ v: Double) -> String {
        let digits = Int(gtk_spin_button_get_digits(flowd_spin_button(raw)))
        if digits == 0, let i = Int64(exactly: v.rounded()) { return String(i) }
        return String(v)
    }

    private func textChanged() {
        let current = text
        guard current != lastText else { return }
        lastText = current
        isEmpty = current.isEmpty
        action?()
    }

    /// Runs `action` when the person types, steps or clears the number; read
    /// `text` (empty: no answer).
    package func onChanged(_ action: @escaping @MainActor () -> Void) {
        self.action = action
    }

    /// Runs `action` on Enter (GTK 4.8's spin button has no "activate" of
    /// its own: its text input has).
    package func onActivated(_ action: @escaping @MainActor () -> Void) {
        guard let delegate = gtk_editable_get_delegate(flowd_editable(raw)) else { return }
        Signal.connect(Object(UnsafeMutableRawPointer(delegate)), "activate", action)
    }
}

/// `GtkCalendar`: a month grid.
@MainActor
package final class Calendar: Widget {
    private var selectedHandler: Signal.HandlerID?

    package init() {
        super.init(gtk_calendar_new())
    }

    /// The selected day as (year, month 1–12, day).
    package var selection: (year: Int, month: Int, day: Int) {
        get {
            guard let date = gtk_calendar_get_date(flowd_calendar(raw)) else { return (1970, 1, 1) }
            defer { g_date_time_unref(date) }
            return (Int(g_date_time_get_year(date)), Int(g_date_time_get_month(date)), Int(g_date_time_get_day_of_month(date)))
        }
        set {
            guard let date = g_date_time_new_local(Int32(newValue.year), Int32(newValue.month), Int32(newValue.day), 12, 0, 0)
            else { return }
            defer { g_date_time_unref(date) }
            Signal.blocking(self, selectedHandler) { gtk_calendar_select_day(flowd_calendar(raw), date) }
        }
    }

    /// Runs `action` when the person picks a day.
    package func onDaySelected(_ action: @escaping @MainActor () -> Void) {
        selectedHandler = Signal.connect(self, "day-selected", action)
    }
}
