import CAdw

/// `GtkButton`.
@MainActor
package final class Button: Widget {
    private var clickedHandler: Signal.HandlerID?

    /// A button whose label may carry a mnemonic (`"_Continue"`: Alt+C).
    package init(mnemonic label: String) {
        super.init(gtk_button_new_with_mnemonic(label))
        flowd_accessible_reset_label(flowd_accessible(raw))
    }

    /// A button showing `label` as it is (no mnemonic: daemon text may hold `_`).
    package init(label: String) {
        super.init(gtk_button_new_with_label(label))
    }

    /// An icon-only button; `accessibleLabel` names it for screen readers.
    package init(iconName: String, accessibleLabel: String) {
        super.init(gtk_button_new_from_icon_name(iconName))
        setAccessibleLabel(accessibleLabel)
        tooltip = accessibleLabel
    }

    /// The label, mnemonic underscore included.
    package var label: String {
        get { gtk_button_get_label(flowd_button(raw)).map { String(cString: $0) } ?? "" }
        set {
            gtk_button_set_use_underline(flowd_button(raw), 1)
            gtk_button_set_label(flowd_button(raw), newValue)
            // The name is the label's text, without the mnemonic mark.
            flowd_accessible_reset_label(flowd_accessible(raw))
        }
    }

    /// Runs `action` on click, Enter or Space. Replaces an earlier handler.
    package func onClicked(_ action: @escaping @MainActor () -> Void) {
        if let clickedHandler { Signal.disconnect(self, clickedHandler) }
        clickedHandler = Signal.connect(self, "clicked", action)
    }
}

/// `GtkToggleButton`: a chip that stays pressed. Chips in one group act as radio buttons.
@MainActor
package final class ToggleButton: Widget {
    private var toggledHandler: Signal.HandlerID?

    package init(label: String) {
        super.init(gtk_toggle_button_new_with_label(label))
    }

    package var isActive: Bool {
        get { gtk_toggle_button_get_active(flowd_toggle_button(raw)) != 0 }
        set { Signal.blocking(self, toggledHandler) { gtk_toggle_button_set_active(flowd_toggle_button(raw), newValue ? 1 : 0) } }
    }

    /// Makes this chip one of `group`'s: pressing one releases the others.
    package func join(_ group: ToggleButton) {
        gtk_toggle_button_set_group(flowd_toggle_button(raw), flowd_toggle_button(group.raw))
    }

    /// Runs `action` when the person presses or releases the chip (not when the model sets it).
    package func onToggled(_ action: @escaping @MainActor () -> Void) {
        toggledHandler = Signal.connect(self, "toggled", action)
    }

    /// Shows an icon before the label. The button keeps its accessible name
    /// (``setAccessibleLabel(_:)``); the icon is decoration.
    package func setIcon(_ iconName: String, label: String) {
        let content = Box(.horizontal, spacing: 6)
        content.append(Image(iconName: iconName))
        content.append(Label(label))
        gtk_button_set_child(flowd_button(raw), content.widget)
    }
}

/// `GtkCheckButton`: a check box, or a radio button once it joins a group.
@MainActor
package final class CheckButton: Widget {
    private var toggledHandler: Signal.HandlerID?

    /// A check box; `radio` makes it read as a radio button (it should then
    /// ``join(_:)`` a group): GTK 4.8 keeps the check box role for grouped ones.
    package init(radio: Bool = false) {
        if radio {
            super.init(flowd_widget_new_with_role(gtk_check_button_get_type(), GTK_ACCESSIBLE_ROLE_RADIO))
        } else {
            super.init(gtk_check_button_new())
        }
    }

    package var isActive: Bool {
        get { gtk_check_button_get_active(flowd_check_button(raw)) != 0 }
        set { Signal.blocking(self, toggledHandler) { gtk_check_button_set_active(flowd_check_button(raw), newValue ? 1 : 0) } }
    }

    /// Makes this a radio button in `group`'s group.
    package func join(_ group: CheckButton) {
        gtk_check_button_set_group(flowd_check_button(raw), flowd_check_button(group.raw))
    }

    /// Runs `action` when the person changes the state (not when the model sets it).
    package func onToggled(_ action: @escaping @MainActor () -> Void) {
        toggledHandler = Signal.connect(self, "toggled", action)
    }
}

/// `GtkSwitch`.
@MainActor
package final class Switch: Widget {
    private var activeHandler: Signal.HandlerID?

    package init() {
        super.init(gtk_switch_new())
        verticalAlignment = .center
    }

    /// On or off. Setting the value it already has changes nothing: GTK
    /// applies a click at the end of the switch's 100 ms slide, and any
    /// `gtk_switch_set_active` before then ends the slide and drops the
    /// click, so a model re-stating "off" just after the person flipped it
    /// on would swallow the flip without a signal.
    package var isOn: Bool {
        get { gtk_switch_get_active(flowd_switch(raw)) != 0 }
        set {
            guard newValue != isOn else { return }
            Signal.blocking(self, activeHandler) { gtk_switch_set_active(flowd_switch(raw), newValue ? 1 : 0) }
        }
    }

    /// Runs `action` when the person flips the switch (not when the model sets it).
    package func onChanged(_ action: @escaping @MainActor () -> Void) {
        activeHandler = Signal.notify(self, "active", action)
    }
}

/// `GtkPopover`: a bubble attached to a menu button.
@MainActor
package final class Popover: Widget {
    package init(child: Widget) {
        super.init(gtk_popover_new())
        gtk_popover_set_child(flowd_popover(raw), child.widget)
    }

    package func popdown() { gtk_popover_popdown(flowd_popover(raw)) }
}

/// `GtkMenuButton` that opens a popover.
@MainActor
package final class MenuButton: Widget {
    package init(iconName: String, accessibleLabel: String, popover: Popover) {
        super.init(gtk_menu_button_new())
        let button = flowd_menu_button(raw)
        gtk_menu_button_set_icon_name(button, iconName)
        gtk_menu_button_set_popover(button, popover.widget)
        verticalAlignment = .center
        tooltip = accessibleLabel
        setAccessibleLabel(accessibleLabel)
    }
}
