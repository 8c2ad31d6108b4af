import CAdw

/// `GtkLabel`: text a person reads. Never markup: daemon text is shown as it is.
@MainActor
package final class Label: Widget {
    /// A label; `role` gives it another accessible role (`.status` for the announcement).
    package init(_ text: String = "", role: AccessibleRole? = nil) {
        if let role {
            super.init(flowd_widget_new_with_role(gtk_label_get_type(), role.gtk))
        } else {
            super.init(gtk_label_new(nil))
        }
        self.text = text
        gtk_label_set_use_markup(flowd_label(raw), 0)
    }

    package var text: String {
        get { String(cString: gtk_label_get_text(flowd_label(raw))) }
        set { gtk_label_set_text(flowd_label(raw), newValue) }
    }

    /// Shows `text`; an empty text hides the label.
    package func showText(_ text: String) {
        self.text = text
        isVisible = !text.isEmpty
    }

    /// Wraps at word boundaries (and inside long words when needed).
    package var wraps: Bool {
        get { gtk_label_get_wrap(flowd_label(raw)) != 0 }
        set {
            gtk_label_set_wrap(flowd_label(raw), newValue ? 1 : 0)
            gtk_label_set_wrap_mode(flowd_label(raw), PANGO_WRAP_WORD_CHAR)
        }
    }

    /// 0 is the start side, 1 the end side, 0.5 centred (mirrored in RTL by GTK).
    package var xAlign: Float {
        get { gtk_label_get_xalign(flowd_label(raw)) }
        set { gtk_label_set_xalign(flowd_label(raw), newValue) }
    }

    package var isSelectable: Bool {
        get { gtk_label_get_selectable(flowd_label(raw)) != 0 }
        set { gtk_label_set_selectable(flowd_label(raw), newValue ? 1 : 0) }
    }
}

/// `GtkImage` from an icon name of the theme.
@MainActor
package final class Image: Widget {
    package init(iconName: String, pixelSize: Int? = nil) {
        super.init(gtk_image_new_from_icon_name(iconName))
        if let pixelSize { gtk_image_set_pixel_size(flowd_image(raw), Int32(pixelSize)) }
    }
}

/// `GtkSpinner`: the busy indicator while a submit runs.
@MainActor
package final class Spinner: Widget {
    package init() {
        super.init(gtk_spinner_new())
    }

    package var isSpinning: Bool {
        get { gtk_spinner_get_spinning(flowd_spinner(raw)) != 0 }
        set { gtk_spinner_set_spinning(flowd_spinner(raw), newValue ? 1 : 0) }
    }
}

/// `GtkLevelBar` in discrete mode: a row of segments, the first `value` filled.
@MainActor
package final class SegmentBar: Widget {
    package init() {
        super.init(gtk_level_bar_new())
        let bar = flowd_level_bar(raw)
        gtk_level_bar_set_mode(bar, GTK_LEVEL_BAR_MODE_DISCRETE)
        // No "low"/"high"/"full" colour offsets: every filled segment looks the same.
        gtk_level_bar_remove_offset_value(bar, GTK_LEVEL_BAR_OFFSET_LOW)
        gtk_level_bar_remove_offset_value(bar, GTK_LEVEL_BAR_OFFSET_HIGH)
        gtk_level_bar_remove_offset_value(bar, GTK_LEVEL_BAR_OFFSET_FULL)
    }

    /// `filled` of `count` segments.
    package func set(filled: Int, of count: Int) {
        let bar = flowd_level_bar(raw)
        gtk_level_bar_set_min_value(bar, 0)
        gtk_level_bar_set_max_value(bar, Double(max(count, 1)))
        gtk_level_bar_set_value(bar, Double(min(max(filled, 0), max(count, 1))))
    }
}
