import CAdw

/// `AdwPreferencesGroup`: a titled boxed list of rows.
@MainActor
package final class PreferencesGroup: Widget {
    package init(title: String = "", description: String = "") {
        super.init(adw_preferences_group_new())
        let group = flowd_adw_preferences_group(raw)
        if !title.isEmpty { adw_preferences_group_set_title(group, title) }
        if !description.isEmpty { adw_preferences_group_set_description(group, description) }
    }

    package func add(_ child: Widget) { adw_preferences_group_add(flowd_adw_preferences_group(raw), child.widget) }
    package func remove(_ child: Widget) {
        adw_preferences_group_remove(flowd_adw_preferences_group(raw), child.widget)
    }

    package var title: String {
        get { String(cString: adw_preferences_group_get_title(flowd_adw_preferences_group(raw))) }
        set { adw_preferences_group_set_title(flowd_adw_preferences_group(raw), newValue) }
    }

    /// A widget at the end of the group's title line (Review's Edit button).
    package func setHeaderSuffix(_ widget: Widget) {
        adw_preferences_group_set_header_suffix(flowd_adw_preferences_group(raw), widget.widget)
    }
}

/// `AdwActionRow`: a row with a title, a subtitle and widgets at either end.
@MainActor
package final class ActionRow: Widget {
    /// A row; with `wraps`, the title and subtitle wrap onto as many lines
    /// as they need (0 lines: no limit).
    package init(title: String, subtitle: String = "", wraps: Bool = false) {
        super.init(adw_action_row_new())
        self.title = title
        self.subtitle = subtitle
        // Daemon text is never markup.
        adw_preferences_row_set_use_markup(flowd_adw_preferences_row(raw), 0)
        if wraps {
            adw_action_row_set_title_lines(flowd_adw_action_row(raw), 0)
            adw_action_row_set_subtitle_lines(flowd_adw_action_row(raw), 0)
        }
    }

    package var title: String {
        get { String(cString: adw_preferences_row_get_title(flowd_adw_preferences_row(raw))) }
        set { adw_preferences_row_set_title(flowd_adw_preferences_row(raw), newValue) }
    }

    package var subtitle: String {
        get { adw_action_row_get_subtitle(flowd_adw_action_row(raw)).map { String(cString: $0) } ?? "" }
        set { adw_action_row_set_subtitle(flowd_adw_action_row(raw), newValue) }
    }

    package func addPrefix(_ widget: Widget) { adw_action_row_add_prefix(flowd_adw_action_row(raw), widget.widget) }
    package func addSuffix(_ widget: Widget) { adw_action_row_add_suffix(flowd_adw_action_row(raw), widget.widget) }

    /// Clicking the row (or Enter on it) activates `widget`: the row's check button or switch.
    package func setActivatableWidget(_ widget: Widget) {
        adw_action_row_set_activatable_widget(flowd_adw_action_row(raw), widget.widget)
    }

    /// Makes the row itself a button.
    package func onActivated(_ action: @escaping @MainActor () -> Void) {
        gtk_list_box_row_set_activatable(typed(raw), 1)
        Signal.connect(self, "activated", action)
    }
}

/// `AdwStatusPage`: a large icon, a title, a description and a child, centred.
@MainActor
package final class StatusPage: Widget {
    package init(iconName: String = "", title: String = "", description: String = "") {
        super.init(adw_status_page_new())
        set(iconName: iconName, title: title, description: description)
    }

    package func set(iconName: String, title: String, description: String) {
        let page = flowd_adw_status_page(raw)
        adw_status_page_set_icon_name(page, iconName.isEmpty ? nil : iconName)
        adw_status_page_set_title(page, title)
        adw_status_page_set_description(page, description.isEmpty ? nil : description)
    }

    package func setChild(_ child: Widget?) {
        adw_status_page_set_child(flowd_adw_status_page(raw), child?.widget)
    }
}
