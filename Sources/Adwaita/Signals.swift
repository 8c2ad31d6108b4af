import CAdw

/// Connecting Swift closures to GObject signals.
///
/// `g_signal_connect` is a macro, so signals go through
/// `g_signal_connect_data`: the closure is boxed, retained for as long as the
/// handler is connected, and released by GLib's destroy notify (when the
/// handler is disconnected or the object is disposed). Every callback runs on
/// the GTK thread, which is the main actor's.
@MainActor
package enum Signal {
    /// A boxed Swift closure passed through a signal's `user_data`. Made and
    /// called on the GTK thread only; GLib just carries the pointer.
    final class Box<F>: @unchecked Sendable {
        let function: F
        init(_ function: F) { self.function = function }
    }

    /// The handler id `g_signal_connect_data` returned.
    package struct HandlerID: Sendable, Hashable {
        let value: gulong
    }

    /// `void handler(GObject *instance, gpointer data)`: clicked, changed, toggled, activate, destroy.
    @discardableResult
    package static func connect(_ object: Object, _ name: String, _ action: @escaping @MainActor () -> Void)
        -> HandlerID
    {
        let callback: @convention(c) (gpointer?, gpointer?) -> Void = { _, data in Signal.runBoxed(data) }
        return connect(object, name, unsafeBitCast(callback, to: GCallback.self), Box(action))
    }

    /// `void handler(GObject *instance, GParamSpec *pspec, gpointer data)`: `notify::property`.
    @discardableResult
    package static func notify(_ object: Object, _ property: String, _ action: @escaping @MainActor () -> Void)
        -> HandlerID
    {
        let callback: @convention(c) (gpointer?, gpointer?, gpointer?) -> Void = { _, _, data in Signal.runBoxed(data) }
        return connect(object, "notify::\(property)", unsafeBitCast(callback, to: GCallback.self), Box(action))
    }

    /// `gboolean handler(GObject *instance, gpointer data)`: close-request; true stops the default.
    @discardableResult
    package static func connectReturning(
        _ object: Object, _ name: String, _ action: @escaping @MainActor () -> Bool
    ) -> HandlerID {
        let callback: @convention(c) (gpointer?, gpointer?) -> gboolean = { _, data in
            guard let data else { return 0 }
            let box = Unmanaged<Box<@MainActor () -> Bool>>.fromOpaque(data).takeUnretainedValue()
            return MainActor.assumeIsolated { box.function() } ? 1 : 0
        }
        return connect(object, name, unsafeBitCast(callback, to: GCallback.self), Box(action))
    }

    /// `action` boxed and retained for a C callback's user data, with the
    /// destroy notify that releases it (shortcuts, main-loop sources).
    static func retained(_ action: @escaping @MainActor () -> Void) -> (gpointer, GDestroyNotify) {
        let release: @convention(c) (gpointer?) -> Void = { data in
            guard let data else { return }
            Unmanaged<AnyObject>.fromOpaque(data).release()
        }
        return (Unmanaged.passRetained(Box(action)).toOpaque(), release)
    }

    /// Runs the action ``retained(_:)`` boxed, from a C callback on the GTK thread.
    nonisolated static func runBoxed(_ data: gpointer?) {
        guard let data else { return }
        let box = Unmanaged<Box<@MainActor () -> Void>>.fromOpaque(data).takeUnretainedValue()
        MainActor.assumeIsolated { box.function() }
    }

    /// Disconnects a handler (its closure is released by the destroy notify).
    package static func disconnect(_ object: Object, _ id: HandlerID) {
        g_signal_handler_disconnect(object.raw, id.value)
    }

    /// Blocks a handler while `body` runs: programmatic changes (filling a
    /// field from the model) must not look like the person's input.
    package static func blocking(_ object: Object, _ id: HandlerID?, _ body: () -> Void) {
        guard let id else { return body() }
        g_signal_handler_block(object.raw, id.value)
        body()
        g_signal_handler_unblock(object.raw, id.value)
    }

    private static func connect<F>(_ object: Object, _ name: String, _ callback: GCallback, _ box: Box<F>)
        -> HandlerID
    {
        let data = Unmanaged.passRetained(box).toOpaque()
        let release: @convention(c) (gpointer?, UnsafeMutablePointer<GClosure>?) -> Void = { data, _ in
            guard let data else { return }
            Unmanaged<AnyObject>.fromOpaque(data).release()
        }
        let id = g_signal_connect_data(object.raw, name, callback, data, release, GConnectFlags(rawValue: 0))
        precondition(id != 0, "no signal '\(name)' on this object")
        return HandlerID(value: id)
    }
}
