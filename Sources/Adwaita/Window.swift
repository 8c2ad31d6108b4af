import CAdw

/// `AdwHeaderBar` with an `AdwWindowTitle`.
@MainActor
package final class HeaderBar: Widget {
    private let windowTitle: UnsafeMutablePointer<GtkWidget>

    package init(title: String, subtitle: String = "") {
        guard let titleWidget = adw_window_title_new(title, subtitle) else {
            preconditionFailure("a GTK constructor returned NULL")
        }
        windowTitle = titleWidget
        super.init(adw_header_bar_new())
        adw_header_bar_set_title_widget(flowd_adw_header_bar(raw), titleWidget)
    }

    package func set(title: String, subtitle: String) {
        adw_window_title_set_title(flowd_adw_window_title(windowTitle), title)
        adw_window_title_set_subtitle(flowd_adw_window_title(windowTitle), subtitle)
    }
}

/// `AdwToastOverlay`: shows short notices over its child.
@MainActor
package final class ToastOverlay: Widget {
    package init(child: Widget) {
        super.init(adw_toast_overlay_new())
        adw_toast_overlay_set_child(flowd_adw_toast_overlay(raw), child.widget)
    }

    /// Shows `title` for `seconds` (0 keeps it until dismissed).
    package func show(toast title: String, seconds: Int = 5) {
        guard let toast = adw_toast_new(title) else { return }
        adw_toast_set_timeout(toast, UInt32(seconds))
        adw_toast_overlay_add_toast(flowd_adw_toast_overlay(raw), toast)  // takes ownership
    }
}

/// `AdwApplicationWindow`.
@MainActor
package final class ApplicationWindow: Widget {
    package init(application: Application) {
        super.init(adw_application_window_new(flowd_gtk_application(application.raw)))
    }

    package var title: String {
        get { gtk_window_get_title(flowd_window(raw)).map { String(cString: $0) } ?? "" }
        set { gtk_window_set_title(flowd_window(raw), newValue) }
    }

    package func setContent(_ content: Widget) {
        adw_application_window_set_content(flowd_adw_application_window(raw), content.widget)
    }

    package func setDefaultSize(width: Int, height: Int) {
        gtk_window_set_default_size(flowd_window(raw), Int32(width), Int32(height))
    }

    /// The button Enter activates when the focus is on a widget that does not use Enter itself.
    package func setDefaultWidget(_ widget: Widget?) {
        gtk_window_set_default_widget(flowd_window(raw), widget?.widget)
    }

    package func present() { gtk_window_present(flowd_window(raw)) }

    /// Closes the window for good (no close-request is emitted).
    package func destroy() { gtk_window_destroy(flowd_window(raw)) }

    /// The window's close button and Alt+F4: `handler` returns true to keep the window open.
    package func onCloseRequest(_ handler: @escaping @MainActor () -> Bool) {
        Signal.connectReturning(self, "close-request", handler)
    }
}

/// `AdwApplication`: the process's GApplication; `run` owns the main thread until it ends.
@MainActor
package final class Application: Object {
    /// An application that is not single-instance: each `flowd-gtk` opens its
    /// own window and returns its own exit status, the way a dialog tool does.
    package init(id: String) {
        super.init(adw_application_new(id, G_APPLICATION_NON_UNIQUE))
    }

    /// Runs `action` when the application starts (build and present the window here).
    package func onActivate(_ action: @escaping @MainActor () -> Void) {
        Signal.connect(self, "activate", action)
    }

    /// Runs the GLib main loop until the last window closes; returns the exit status.
    /// Command-line arguments are the program's own: GTK sees only the program name.
    package func run(programName: String) -> Int32 {
        var name = Array(programName.utf8CString)
        return name.withUnsafeMutableBufferPointer { buffer in
            var argv: [UnsafeMutablePointer<CChar>?] = [buffer.baseAddress, nil]
            return argv.withUnsafeMutableBufferPointer { g_application_run(flowd_g_application(raw), 1, $0.baseAddress) }
        }
    }

    /// Ends `run` after the current iteration.
    package func quit() { g_application_quit(flowd_g_application(raw)) }
}
