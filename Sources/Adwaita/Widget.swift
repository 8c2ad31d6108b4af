import CAdw

/// Alignment of a widget in the space its parent gives it.
package enum Align: Sendable, CaseIterable {
    case fill, start, end, center

    var gtk: GtkAlign {
        switch self {
        case .fill: GTK_ALIGN_FILL
        case .start: GTK_ALIGN_START
        case .end: GTK_ALIGN_END
        case .center: GTK_ALIGN_CENTER
        }
    }

    /// The case for `gtk`; `fill` for one this enum does not name (baseline).
    init(_ gtk: GtkAlign) {
        self = Self.allCases.first { $0.gtk == gtk } ?? .fill
    }
}

/// An accessible role chosen at construction (GTK's `accessible-role`).
package enum AccessibleRole: Sendable {
    /// A live region: assistive technologies present its changes (the announcement label).
    case status
    /// A group of related widgets.
    case group

    var gtk: GtkAccessibleRole {
        switch self {
        case .status: GTK_ACCESSIBLE_ROLE_STATUS
        case .group: GTK_ACCESSIBLE_ROLE_GROUP
        }
    }
}

/// Any GTK widget: visibility, sensitivity, layout, style classes, focus and
/// the accessible properties a screen reader reads.
@MainActor
package class Widget: Object {
    var widget: UnsafeMutablePointer<GtkWidget> { flowd_widget(raw) }

    package var isVisible: Bool {
        get { gtk_widget_get_visible(widget) != 0 }
        set { gtk_widget_set_visible(widget, newValue ? 1 : 0) }
    }

    /// False dims the widget and makes it ignore input (Continue before a step is valid).
    package var isSensitive: Bool {
        get { gtk_widget_get_sensitive(widget) != 0 }
        set { gtk_widget_set_sensitive(widget, newValue ? 1 : 0) }
    }

    package var horizontalAlignment: Align {
        get { Align(gtk_widget_get_halign(widget)) }
        set { gtk_widget_set_halign(widget, newValue.gtk) }
    }

    package var verticalAlignment: Align {
        get { Align(gtk_widget_get_valign(widget)) }
        set { gtk_widget_set_valign(widget, newValue.gtk) }
    }

    package var expandsHorizontally: Bool {
        get { gtk_widget_get_hexpand(widget) != 0 }
        set { gtk_widget_set_hexpand(widget, newValue ? 1 : 0) }
    }

    package var expandsVertically: Bool {
        get { gtk_widget_get_vexpand(widget) != 0 }
        set { gtk_widget_set_vexpand(widget, newValue ? 1 : 0) }
    }

    package var tooltip: String {
        get { gtk_widget_get_tooltip_text(widget).map { String(cString: $0) } ?? "" }
        set { gtk_widget_set_tooltip_text(widget, newValue.isEmpty ? nil : newValue) }
    }

    /// Margins in pixels; start is the left side in left-to-right text.
    package func setMargins(top: Int = 0, bottom: Int = 0, start: Int = 0, end: Int = 0) {
        gtk_widget_set_margin_top(widget, Int32(top))
        gtk_widget_set_margin_end(widget, Int32(end))
        gtk_widget_set_margin_bottom(widget, Int32(bottom))
        gtk_widget_set_margin_start(widget, Int32(start))
    }

    package func setSizeRequest(width: Int = -1, height: Int = -1) {
        gtk_widget_set_size_request(widget, Int32(width), Int32(height))
    }

    package func addStyleClass(_ names: String...) {
        for name in names { gtk_widget_add_css_class(widget, name) }
    }
    package func removeStyleClass(_ name: String) { gtk_widget_remove_css_class(widget, name) }
    package func setStyleClass(_ name: String, _ on: Bool) {
        if on { addStyleClass(name) } else { removeStyleClass(name) }
    }

    /// Moves keyboard focus here; false when the widget cannot take it.
    @discardableResult
    package func grabFocus() -> Bool { gtk_widget_grab_focus(widget) != 0 }

    package var hasFocus: Bool { gtk_widget_has_focus(widget) != 0 }

    /// True when the focus is on this widget or one inside it (the text of an entry row).
    package var hasFocusWithin: Bool {
        gtk_widget_get_state_flags(widget).rawValue & GTK_STATE_FLAG_FOCUS_WITHIN.rawValue != 0
    }

    /// True while the widget is mapped (on screen, or about to be drawn).
    package var isMapped: Bool { gtk_widget_get_mapped(widget) != 0 }

    /// Runs `action` each time the widget is mapped (about to be shown on screen).
    package func onMap(_ action: @escaping @MainActor () -> Void) {
        Signal.connect(self, "map", action)
    }

    // MARK: Accessibility

    /// What the accessible properties below are set on: the widget, and
    /// what a screen reader lands on inside it (``EntryRow``'s text input).
    var accessibles: [OpaquePointer] { [flowd_accessible(raw)] }

    /// The accessible name a screen reader says for this widget. Replaces a
    /// labelled-by relation GTK or libadwaita set (a row's title labelling
    /// its switch): GTK 4.8 reads the name and those labels one after the
    /// other ("Newsletter Newsletter").
    package func setAccessibleLabel(_ text: String) {
        for accessible in accessibles {
            flowd_accessible_reset_labelled_by(accessible)
            flowd_accessible_set_label(accessible, text)
        }
    }

    /// The accessible description: help, hints and the current error.
    package func setAccessibleDescription(_ text: String) {
        for accessible in accessibles { flowd_accessible_set_description(accessible, text) }
    }

    package func setAccessibleRequired(_ required: Bool) {
        for accessible in accessibles { flowd_accessible_set_required(accessible, required ? 1 : 0) }
    }

    /// Marks the value as invalid (an error is shown for it).
    package func setAccessibleInvalid(_ invalid: Bool) {
        for accessible in accessibles { flowd_accessible_set_invalid(accessible, invalid ? 1 : 0) }
    }

    /// Links the widget that describes this one (an error label), or clears the link.
    package func setDescribedBy(_ other: Widget?) {
        for accessible in accessibles { flowd_accessible_described_by(accessible, other.map { flowd_accessible($0.raw) }) }
    }

    // MARK: Keyboard shortcuts

    /// Runs `action` when `trigger` (GTK syntax: `"<Alt>Left"`, `"Escape"`)
    /// is pressed inside this widget and nothing focused used the key first
    /// (so Escape still closes an open popover before it reaches the window).
    package func addShortcut(_ trigger: String, _ action: @escaping @MainActor () -> Void) {
        guard let controller = gtk_shortcut_controller_new() else { return }
        let callback: @convention(c) (UnsafeMutablePointer<GtkWidget>?, OpaquePointer?, gpointer?) -> gboolean = {
            _, _, data in
            Signal.runBoxed(data)
            return 1
        }
        let (data, release) = Signal.retained(action)
        let shortcut = gtk_shortcut_new(
            gtk_shortcut_trigger_parse_string(trigger), gtk_callback_action_new(callback, data, release))
        gtk_shortcut_controller_add_shortcut(controller, shortcut)  // a GtkShortcutController
        gtk_widget_add_controller(widget, controller)  // takes ownership
    }
}
