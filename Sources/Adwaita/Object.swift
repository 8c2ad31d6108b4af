import CAdw

/// A strong reference to a GObject, taken when the wrapper is made
/// (`g_object_ref_sink`, which also claims a floating widget) and dropped
/// when the wrapper goes away.
///
/// GTK is single-threaded: every wrapper lives on the main actor, the
/// thread that runs `g_application_run`.
@MainActor
package class Object {
    /// The instance, as the `gpointer` every cast helper takes.
    package let raw: gpointer

    /// Wraps a constructor's result, taking a reference of its own (which
    /// also claims a floating widget). A nil result is a programming error:
    /// GTK constructors return NULL only for a type that does not exist.
    init(_ raw: gpointer?) {
        guard let raw else { preconditionFailure("a GTK constructor returned NULL") }
        self.raw = raw
        g_object_ref_sink(raw)
    }

    isolated deinit {
        g_object_unref(raw)
    }
}

/// The instance pointer of a wrapper as the typed pointer a GTK function takes.
func typed<T>(_ raw: gpointer) -> UnsafeMutablePointer<T> {
    raw.assumingMemoryBound(to: T.self)
}
