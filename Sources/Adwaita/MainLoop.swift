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

    /// Runs `action` once after `milliseconds`, from the loop.
    package static func after(milliseconds: Int, _ action: @escaping @MainActor () -> Void) {
        let callback: @convention(c) (gpointer?) -> gboolean = { data in
            guard let data else { return 0 }
            let box = Unmanaged<Signal.Box<@MainActor () -> Void>>.fromOpaque(data).takeUnretainedValue()
            MainActor.assumeIsolated { box.function() }
            return 0  // G_SOURCE_REMOVE
        }
        let release: @convention(c) (gpointer?) -> Void = { data in
            guard let data else { return }
            Unmanaged<AnyObject>.fromOpaque(data).release()
        }
        let data = Unmanaged.passRetained(Signal.Box(action)).toOpaque()
        g_timeout_add_full(G_PRIORITY_DEFAULT, guint(max(milliseconds, 0)), callback, data, release)
    }
}
