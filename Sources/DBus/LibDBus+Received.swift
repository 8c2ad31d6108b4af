import CDBus

/// The libdbus calls a message flowd read itself needs (``Message/init(received:)``):
/// replies made from the call's serial and sender alone, and, when a
/// received message must be handed to libdbus and libdbus cannot load its
/// bytes, a message with the same header.
extension LibDBus {
    /// A method return (`error` nil) or an error reply to the call `serial`
    /// from `sender`, as `dbus_message_new_method_return` and
    /// `dbus_message_new_error` make them (the same fields in the same
    /// order: destination, error name, reply serial; no reply expected; the
    /// error's message as its one argument, cut at a NUL as a C string is).
    static func newReply(to serial: UInt32, of sender: String?, error: (name: String, message: String)?) -> OpaquePointer {
        let type = error == nil ? DBUS_MESSAGE_TYPE_METHOD_RETURN : DBUS_MESSAGE_TYPE_ERROR
        let m = allocated(dbus_message_new(type), "dbus_message_new")
        if let sender { checkMemory(sender.withCString { dbus_message_set_destination(m, $0) }, "dbus_message_set_destination") }
        dbus_message_set_no_reply(m, 1)
        if let error {
            checkMemory(error.name.withCString { dbus_message_set_error_name(m, $0) }, "dbus_message_set_error_name")
        }
        checkMemory(dbus_message_set_reply_serial(m, serial), "dbus_message_set_reply_serial")
        if let error {
            var iter = DBusMessageIter()
            dbus_message_iter_init_append(m, &iter)
            error.message.withCString { text in
                var pointer: UnsafePointer<CChar>? = text
                checkMemory(dbus_message_iter_append_basic(&iter, TypeCode.string, &pointer), "dbus_message_iter_append_basic")
            }
        }
        return m
    }

    /// `dbus_message_new`: an empty message of `type`.
    static func newMessage(type: Int32) -> OpaquePointer {
        allocated(dbus_message_new(type), "dbus_message_new")
    }

    /// Sets every header field and flag of `m` (`dbus_message_set_*`) as a received header has them.
    static func setHeader(
        _ m: OpaquePointer, path: String?, interface: String?, member: String?, errorName: String?, destination: String?,
        sender: String?, serial: UInt32, replySerial: UInt32, flags: UInt8
    ) {
        if let path { checkMemory(path.withCString { dbus_message_set_path(m, $0) }, "dbus_message_set_path") }
        if let interface {
            checkMemory(interface.withCString { dbus_message_set_interface(m, $0) }, "dbus_message_set_interface")
        }
        if let member { checkMemory(member.withCString { dbus_message_set_member(m, $0) }, "dbus_message_set_member") }
        if let errorName {
            checkMemory(errorName.withCString { dbus_message_set_error_name(m, $0) }, "dbus_message_set_error_name")
        }
        if let destination {
            checkMemory(destination.withCString { dbus_message_set_destination(m, $0) }, "dbus_message_set_destination")
        }
        if let sender { checkMemory(sender.withCString { dbus_message_set_sender(m, $0) }, "dbus_message_set_sender") }
        if replySerial != 0 { checkMemory(dbus_message_set_reply_serial(m, replySerial), "dbus_message_set_reply_serial") }
        dbus_message_set_serial(m, serial)
        dbus_message_set_no_reply(m, flags & Message.noReplyFlag != 0 ? 1 : 0)
        dbus_message_set_auto_start(m, flags & Message.noAutoStartFlag == 0 ? 1 : 0)
        dbus_message_set_allow_interactive_authorization(m, flags & Message.interactiveFlag != 0 ? 1 : 0)
    }
}
