import CAdw

/// Process-wide look and feel: the app's style sheet, text direction, and the
/// desktop's animation setting.
@MainActor
package enum Style {
    /// Adds `css` for every window of the display, above the theme.
    package static func addStyleSheet(_ css: String) {
        guard let display = gdk_display_get_default(), let provider = gtk_css_provider_new() else { return }
        var bytes = Array(css.utf8)
        bytes.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                gtk_css_provider_load_from_data(provider, $0.baseAddress, gssize($0.count))
            }
        }
        gtk_style_context_add_provider_for_display(
            display, OpaquePointer(provider), guint(GTK_STYLE_PROVIDER_PRIORITY_APPLICATION))
        g_object_unref(provider)
    }

    /// Lays every widget out right to left (or back), before any is created.
    package static func setRightToLeft(_ rtl: Bool) {
        gtk_widget_set_default_direction(rtl ? GTK_TEXT_DIR_RTL : GTK_TEXT_DIR_LTR)
    }

    /// The desktop's "animations" setting (`gtk-enable-animations`; off when
    /// the person asked for reduced motion).
    package static var animationsEnabled: Bool { flowd_settings_enable_animations() != 0 }
}
