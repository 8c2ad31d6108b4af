import CAdw
import FlowdSystem

/// Makes `@MainActor`, `Task { @MainActor in … }` and `DispatchQueue.main`
/// work while GLib's main loop owns the main thread.
///
/// On Linux the main actor's jobs go to libdispatch's main queue, and only
/// Foundation's RunLoop or `dispatchMain()` ever drain it: under
/// `g_application_run` a main-actor task would silently never run.
/// libdispatch signals new main-queue work on an eventfd; this watches that
/// descriptor from the GLib loop and drains the queue when it is readable,
/// the way Foundation's RunLoop does.
///
/// Call ``install()`` once, on the main thread, before running the loop.
package enum MainQueueBridge {
    nonisolated(unsafe) private static var source: guint = 0

    /// Starts draining the main queue from the thread-default GLib context.
    /// Does nothing the second time.
    @MainActor
    package static func install() {
        guard source == 0 else { return }
        let fd = _dispatch_get_main_queue_handle_4CF()
        precondition(fd >= 0, "libdispatch has no main-queue descriptor")
        let callback: @convention(c) (Int32, GIOCondition, gpointer?) -> gboolean = { fd, _, _ in
            // Clear the eventfd first: a job queued during the drain writes it
            // again, so no wake-up is lost. Non-blocking; EAGAIN means
            // libdispatch cleared it already.
            var counter = [UInt8](repeating: 0, count: 8)
            _ = try? FileDescriptor.read(from: fd, into: &counter)
            _dispatch_main_queue_callback_4CF(nil)
            return 1  // G_SOURCE_CONTINUE
        }
        source = g_unix_fd_add_full(G_PRIORITY_DEFAULT, fd, G_IO_IN, callback, nil, nil)
    }
}
