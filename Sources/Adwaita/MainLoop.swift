import CAdw

/// A plain GLib main loop on the default context, for programs without a
/// window (the main-loop probe): `run` blocks until `quit`.
@MainActor
package final class MainLoop {
    private let loop: OpaquePointer

    package init() {
        guard let loop = g_main_loop_new(nil, 0) else { preconditionFailure("g_main_loop_new returned NULL") }
        self.loop = loop
    }

    isolated deinit { g_main_loop_unref(loop) }

    package func run() { g_main_loop_run(loop) }
    package func quit() { g_main_loop_quit(loop) }

    /// True on the thread that is running the default GLib context right now.
    package static var isLoopThread: Bool { g_main_context_is_owner(g_main_context_default()) != 0 }

    /// Runs `action` once when the loop has nothing more urgent to do: after
    /// GTK has laid out and drawn the current frame.
    package static func whenIdle(_ action: @escaping @MainActor () -> Void) {
        let (callback, data, release) = once(action)
        g_idle_add_full(G_PRIORITY_DEFAULT_IDLE, callback, data, release)
    }

    /// Runs `action` once after `milliseconds`, from the loop.
    package static func after(milliseconds: Int, _ action: @escaping @MainActor () -> Void) {
        let (callback, data, release) = once(action)
        g_timeout_add_full(G_PRIORITY_DEFAULT, guint(max(milliseconds, 0)), callback, data, release)
    }

    /// A GSourceFunc that runs `action` once, its user data, and the destroy notify releasing it.
    private static func once(_ action: @escaping @MainActor () -> Void) -> (GSourceFunc, gpointer, GDestroyNotify) {
        let callback: @convention(c) (gpointer?) -> gboolean = { data in
            Signal.runBoxed(data)
            return 0  // G_SOURCE_REMOVE
        }
        let (data, release) = Signal.retained(action)
        return (callback, data, release)
    }
}
