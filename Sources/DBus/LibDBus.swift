import CDBus

/// The one seam through which every libdbus call of this module passes.
///
/// Each wrapper names the C function it calls. Functions that report failure
/// through a C `DBusError` throw this module's ``DBusError``; functions that
/// fail only when memory runs out trap, as Swift does on allocation failure.
enum LibDBus {
    // MARK: errors

    /// Runs `body` with an initialized C `DBusError` (`dbus_error_init`) and
    /// converts a set error into ``DBusError`` (`dbus_error_is_set`, `dbus_error_free`).
    static func withError<T>(_ body: (UnsafeMutablePointer<CDBus.DBusError>) -> T) -> (T, DBusError?) {
        var raw = CDBus.DBusError()
        dbus_error_init(&raw)
        let result = body(&raw)
        guard dbus_error_is_set(&raw) != 0 else { return (result, nil) }
        let name = raw.name.map { String(cString: $0) } ?? ErrorName.failed.rawValue
        let message = raw.message.map { String(cString: $0) } ?? ""
        dbus_error_free(&raw)
        return (result, DBusError(ErrorName(trusted: name), message))
    }

    /// Returns `pointer`, or traps: libdbus returns NULL from allocating
    /// functions only when memory is exhausted.
    @inline(__always)
    static func allocated<T>(_ pointer: T?, _ function: StaticString) -> T {
        guard let pointer else { fatalError("libdbus: out of memory in \(function)") }
        return pointer
    }

    /// Traps when an allocating libdbus call returned FALSE.
    @inline(__always)
    static func checkMemory(_ ok: dbus_bool_t, _ function: StaticString) {
        if ok == 0 { fatalError("libdbus: out of memory in \(function)") }
    }

    /// `dbus_free`.
    static func free(_ pointer: UnsafeMutableRawPointer?) {
        dbus_free(pointer)
    }

    // MARK: validation

    /// `dbus_validate_path`.
    static func validatePath(_ s: String) -> DBusError? { s.withCString { p in withError { dbus_validate_path(p, $0) }.1 } }
    /// `dbus_validate_interface`.
    static func validateInterface(_ s: String) -> DBusError? { s.withCString { p in withError { dbus_validate_interface(p, $0) }.1 } }
    /// `dbus_validate_member`.
    static func validateMember(_ s: String) -> DBusError? { s.withCString { p in withError { dbus_validate_member(p, $0) }.1 } }
    /// `dbus_validate_error_name`.
    static func validateErrorName(_ s: String) -> DBusError? { s.withCString { p in withError { dbus_validate_error_name(p, $0) }.1 } }
    /// `dbus_validate_bus_name`.
    static func validateBusName(_ s: String) -> DBusError? { s.withCString { p in withError { dbus_validate_bus_name(p, $0) }.1 } }
    /// `dbus_signature_validate`.
    static func validateSignature(_ s: String) -> DBusError? { s.withCString { p in withError { dbus_signature_validate(p, $0) }.1 } }
    /// `dbus_signature_validate_single`.
    static func validateSingleSignature(_ s: String) -> DBusError? {
        s.withCString { p in withError { dbus_signature_validate_single(p, $0) }.1 }
    }

    /// `dbus_parse_address`: whether `s` is a well-formed server address
    /// (`transport:key=value,…;…`). Says nothing about whether it can be reached.
    static func validateAddress(_ s: String) -> DBusError? {
        s.withCString { p in
            withError { error in
                var entries: UnsafeMutablePointer<OpaquePointer?>?
                var count: Int32 = 0
                if dbus_parse_address(p, &entries, &count, error) != 0 { dbus_address_entries_free(entries) }
            }.1
        }
    }

    // MARK: messages

    /// `dbus_message_new_method_call`.
    static func newMethodCall(destination: String?, path: String, interface: String?, member: String) -> OpaquePointer {
        let raw = withOptionalCString(destination) { destination in
            path.withCString { path in
                withOptionalCString(interface) { interface in
                    member.withCString { member in dbus_message_new_method_call(destination, path, interface, member) }
                }
            }
        }
        return allocated(raw, "dbus_message_new_method_call")
    }

    /// `dbus_message_new_signal`.
    static func newSignal(path: String, interface: String, member: String) -> OpaquePointer {
        let raw = path.withCString { path in
            interface.withCString { interface in member.withCString { dbus_message_new_signal(path, interface, $0) } }
        }
        return allocated(raw, "dbus_message_new_signal")
    }

    /// `dbus_message_new_method_return`.
    static func newMethodReturn(_ call: OpaquePointer) -> OpaquePointer {
        allocated(dbus_message_new_method_return(call), "dbus_message_new_method_return")
    }

    /// `dbus_message_new_error`.
    static func newError(_ call: OpaquePointer, name: String, message: String) -> OpaquePointer {
        let raw = name.withCString { name in message.withCString { dbus_message_new_error(call, name, $0) } }
        return allocated(raw, "dbus_message_new_error")
    }

    /// `dbus_message_ref`.
    /// `dbus_message_marshal`: the message in wire format (a message that was
    /// never sent gets serial 1 there, as the wire format needs one).
    static func marshal(_ m: OpaquePointer) -> [UInt8] {
        if dbus_message_get_serial(m) == 0 { dbus_message_set_serial(m, 1) }
        var buffer: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        checkMemory(dbus_message_marshal(m, &buffer, &length), "dbus_message_marshal")
        defer { free(buffer) }
        guard let buffer else { return [] }
        return buffer.withMemoryRebound(to: UInt8.self, capacity: Int(length)) { Array(UnsafeBufferPointer(start: $0, count: Int(length))) }
    }

    /// `dbus_message_demarshal`: a message from wire format, which libdbus
    /// validates as it would a message from the bus.
    static func demarshal(_ bytes: [UInt8]) -> (OpaquePointer?, DBusError?) {
        bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                withError { dbus_message_demarshal(chars.baseAddress, Int32(chars.count), $0) }
            }
        }
    }

    static func ref(message: OpaquePointer) { _ = dbus_message_ref(message) }
    /// `dbus_message_unref`.
    static func unref(message: OpaquePointer) { dbus_message_unref(message) }
    /// `dbus_message_get_type`.
    static func type(_ m: OpaquePointer) -> Int32 { dbus_message_get_type(m) }
    /// `dbus_message_get_path`.
    static func path(_ m: OpaquePointer) -> UnsafePointer<CChar>? { dbus_message_get_path(m) }
    /// `dbus_message_get_interface`.
    static func interface(_ m: OpaquePointer) -> UnsafePointer<CChar>? { dbus_message_get_interface(m) }
    /// `dbus_message_get_member`.
    static func member(_ m: OpaquePointer) -> UnsafePointer<CChar>? { dbus_message_get_member(m) }
    /// `dbus_message_get_error_name`.
    static func errorName(_ m: OpaquePointer) -> UnsafePointer<CChar>? { dbus_message_get_error_name(m) }
    /// `dbus_message_get_sender`.
    static func sender(_ m: OpaquePointer) -> UnsafePointer<CChar>? { dbus_message_get_sender(m) }
    /// `dbus_message_get_destination`.
    static func destination(_ m: OpaquePointer) -> UnsafePointer<CChar>? { dbus_message_get_destination(m) }
    /// `dbus_message_get_signature` (never NULL).
    static func signature(_ m: OpaquePointer) -> UnsafePointer<CChar>? { dbus_message_get_signature(m) }
    /// `dbus_message_has_signature`.
    static func hasSignature(_ m: OpaquePointer, _ signature: String) -> Bool {
        signature.withCString { dbus_message_has_signature(m, $0) != 0 }
    }
    /// `dbus_message_set_destination`.
    static func setDestination(_ m: OpaquePointer, _ name: String?) {
        checkMemory(withOptionalCString(name) { dbus_message_set_destination(m, $0) }, "dbus_message_set_destination")
    }
    /// `dbus_message_set_sender`.
    static func setSender(_ m: OpaquePointer, _ name: String?) {
        checkMemory(withOptionalCString(name) { dbus_message_set_sender(m, $0) }, "dbus_message_set_sender")
    }
    /// `dbus_message_get_serial`.
    static func serial(_ m: OpaquePointer) -> UInt32 { dbus_message_get_serial(m) }
    /// `dbus_message_set_serial` (before the message is sent).
    static func setSerial(_ m: OpaquePointer, _ serial: UInt32) { dbus_message_set_serial(m, serial) }
    /// `dbus_message_contains_unix_fds`.
    static func containsUnixFDs(_ m: OpaquePointer) -> Bool { dbus_message_contains_unix_fds(m) != 0 }
    /// `dbus_message_get_reply_serial`.
    static func replySerial(_ m: OpaquePointer) -> UInt32 { dbus_message_get_reply_serial(m) }
    /// `dbus_message_get_no_reply`.
    static func noReply(_ m: OpaquePointer) -> Bool { dbus_message_get_no_reply(m) != 0 }
    /// `dbus_message_set_no_reply`.
    static func setNoReply(_ m: OpaquePointer, _ value: Bool) { dbus_message_set_no_reply(m, value ? 1 : 0) }
    /// `dbus_message_get_auto_start`.
    static func allowsInteractiveAuthorization(_ m: OpaquePointer) -> Bool {
        dbus_message_get_allow_interactive_authorization(m) != 0
    }

    static func setAllowsInteractiveAuthorization(_ m: OpaquePointer, _ value: Bool) {
        dbus_message_set_allow_interactive_authorization(m, value ? 1 : 0)
    }

    static func autoStart(_ m: OpaquePointer) -> Bool { dbus_message_get_auto_start(m) != 0 }
    /// `dbus_message_set_auto_start`.
    static func setAutoStart(_ m: OpaquePointer, _ value: Bool) { dbus_message_set_auto_start(m, value ? 1 : 0) }

    // MARK: iterators

    /// `dbus_message_iter_init`; false when the message has no arguments.
    static func iterInit(_ m: OpaquePointer, _ iter: inout DBusMessageIter) -> Bool {
        dbus_message_iter_init(m, &iter) != 0
    }
    /// `dbus_message_iter_init_append`.
    static func iterInitAppend(_ m: OpaquePointer, _ iter: inout DBusMessageIter) {
        dbus_message_iter_init_append(m, &iter)
    }
    /// `dbus_message_iter_get_arg_type`.
    static func iterArgType(_ iter: inout DBusMessageIter) -> Int32 { dbus_message_iter_get_arg_type(&iter) }
    /// `dbus_message_iter_next`.
    static func iterNext(_ iter: inout DBusMessageIter) { _ = dbus_message_iter_next(&iter) }
    /// `dbus_message_iter_recurse`.
    static func iterRecurse(_ iter: inout DBusMessageIter, _ sub: inout DBusMessageIter) {
        dbus_message_iter_recurse(&iter, &sub)
    }
    /// `dbus_message_iter_get_basic`.
    static func iterGetBasic(_ iter: inout DBusMessageIter, _ value: UnsafeMutableRawPointer) {
        dbus_message_iter_get_basic(&iter, value)
    }
    /// `dbus_message_iter_get_signature`, copied into a Swift string (`dbus_free`d).
    static func iterSignature(_ iter: inout DBusMessageIter) -> String {
        let raw = allocated(dbus_message_iter_get_signature(&iter), "dbus_message_iter_get_signature")
        defer { dbus_free(raw) }
        return String(cString: raw)
    }
    /// `dbus_message_iter_get_fixed_array`.
    static func iterFixedArray(_ iter: inout DBusMessageIter) -> UnsafeRawBufferPointer {
        var pointer: UnsafeRawPointer?
        var count: Int32 = 0
        withUnsafeMutablePointer(to: &pointer) { dbus_message_iter_get_fixed_array(&iter, $0, &count) }
        guard let pointer else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: pointer, count: Int(count))
    }
    /// `dbus_message_iter_append_basic`.
    static func iterAppendBasic(_ iter: inout DBusMessageIter, _ type: Int32, _ value: UnsafeRawPointer) {
        checkMemory(dbus_message_iter_append_basic(&iter, type, value), "dbus_message_iter_append_basic")
    }
    /// `dbus_message_iter_append_fixed_array` for `count` elements at `elements`.
    static func iterAppendFixedArray(_ iter: inout DBusMessageIter, _ type: Int32, _ elements: UnsafeRawPointer, _ count: Int) {
        var pointer: UnsafeRawPointer? = elements
        let ok = withUnsafePointer(to: &pointer) { dbus_message_iter_append_fixed_array(&iter, type, $0, Int32(count)) }
        checkMemory(ok, "dbus_message_iter_append_fixed_array")
    }
    /// `dbus_message_iter_open_container`.
    static func iterOpen(_ iter: inout DBusMessageIter, _ type: Int32, _ contained: String?, _ sub: inout DBusMessageIter) {
        let ok = withOptionalCString(contained) { dbus_message_iter_open_container(&iter, type, $0, &sub) }
        checkMemory(ok, "dbus_message_iter_open_container")
    }
    /// `dbus_message_iter_close_container`.
    static func iterClose(_ iter: inout DBusMessageIter, _ sub: inout DBusMessageIter) {
        checkMemory(dbus_message_iter_close_container(&iter, &sub), "dbus_message_iter_close_container")
    }
    /// `dbus_message_iter_abandon_container_if_open`: drops a half-written container.
    static func iterAbandon(_ iter: inout DBusMessageIter, _ sub: inout DBusMessageIter) {
        dbus_message_iter_abandon_container_if_open(&iter, &sub)
    }

    // MARK: connections

    /// `dbus_bus_get_private`.
    static func busGetPrivate(system: Bool) -> (OpaquePointer?, DBusError?) {
        withError { dbus_bus_get_private(system ? DBUS_BUS_SYSTEM : DBUS_BUS_SESSION, $0) }
    }
    /// `dbus_connection_open_private`.
    static func openPrivate(address: String) -> (OpaquePointer?, DBusError?) {
        address.withCString { address in withError { dbus_connection_open_private(address, $0) } }
    }
    /// `dbus_bus_register`: the Hello call that gives the connection its unique name.
    static func busRegister(_ c: OpaquePointer) -> DBusError? {
        withError { dbus_bus_register(c, $0) }.1
    }
    /// `dbus_connection_close`.
    static func close(_ c: OpaquePointer) { dbus_connection_close(c) }
    /// `dbus_connection_unref`.
    static func unref(connection c: OpaquePointer) { dbus_connection_unref(c) }
    /// `dbus_connection_set_exit_on_disconnect`.
    static func setExitOnDisconnect(_ c: OpaquePointer, _ value: Bool) {
        dbus_connection_set_exit_on_disconnect(c, value ? 1 : 0)
    }
    /// `dbus_connection_get_is_connected`.
    static func isConnected(_ c: OpaquePointer) -> Bool { dbus_connection_get_is_connected(c) != 0 }
    /// `dbus_bus_get_unique_name`.
    static func uniqueName(_ c: OpaquePointer) -> String? { dbus_bus_get_unique_name(c).map { String(cString: $0) } }
    /// `dbus_connection_get_unix_fd`.
    static func unixFD(_ c: OpaquePointer) -> Int32? {
        var fd: Int32 = -1
        return dbus_connection_get_unix_fd(c, &fd) != 0 ? fd : nil
    }
    /// `dbus_connection_send`; returns the serial.
    static func send(_ c: OpaquePointer, _ m: OpaquePointer) -> UInt32 {
        var serial: UInt32 = 0
        checkMemory(dbus_connection_send(c, m, &serial), "dbus_connection_send")
        return serial
    }
    /// `dbus_connection_flush`.
    static func flush(_ c: OpaquePointer) { dbus_connection_flush(c) }
    /// `dbus_connection_has_messages_to_send`: libdbus holds outgoing bytes
    /// it has not written yet.
    static func hasMessagesToSend(_ c: OpaquePointer) -> Bool { dbus_connection_has_messages_to_send(c) != 0 }
    /// `dbus_connection_send_with_reply_and_block`.
    static func sendWithReplyAndBlock(_ c: OpaquePointer, _ m: OpaquePointer, timeout: Int32) -> (OpaquePointer?, DBusError?) {
        withError { dbus_connection_send_with_reply_and_block(c, m, timeout, $0) }
    }
    /// `dbus_connection_send_with_reply`; nil pending call when disconnected.
    static func sendWithReply(_ c: OpaquePointer, _ m: OpaquePointer, timeout: Int32) -> OpaquePointer? {
        var pending: OpaquePointer?
        checkMemory(dbus_connection_send_with_reply(c, m, &pending, timeout), "dbus_connection_send_with_reply")
        return pending
    }
    /// `dbus_connection_read_write_dispatch`; false once disconnected.
    static func readWriteDispatch(_ c: OpaquePointer, timeout: Int32) -> Bool {
        dbus_connection_read_write_dispatch(c, timeout) != 0
    }
    /// `dbus_connection_dispatch`; true when more data remains.
    static func dispatch(_ c: OpaquePointer) -> Bool {
        dbus_connection_dispatch(c) == DBUS_DISPATCH_DATA_REMAINS
    }
    /// `dbus_connection_get_dispatch_status`; true when data remains.
    static func hasDataToDispatch(_ c: OpaquePointer) -> Bool {
        dbus_connection_get_dispatch_status(c) == DBUS_DISPATCH_DATA_REMAINS
    }
    /// `dbus_connection_set_watch_functions`; false when an add function refused a watch.
    static func setWatchFunctions(
        _ c: OpaquePointer, add: DBusAddWatchFunction?, remove: DBusRemoveWatchFunction?,
        toggled: DBusWatchToggledFunction?, data: UnsafeMutableRawPointer?, free: DBusFreeFunction?
    ) -> Bool {
        dbus_connection_set_watch_functions(c, add, remove, toggled, data, free) != 0
    }
    /// `dbus_connection_set_timeout_functions`; false when an add function refused a timeout.
    static func setTimeoutFunctions(
        _ c: OpaquePointer, add: DBusAddTimeoutFunction?, remove: DBusRemoveTimeoutFunction?,
        toggled: DBusTimeoutToggledFunction?, data: UnsafeMutableRawPointer?, free: DBusFreeFunction?
    ) -> Bool {
        dbus_connection_set_timeout_functions(c, add, remove, toggled, data, free) != 0
    }
    /// `dbus_connection_set_wakeup_main_function`.
    static func setWakeupMain(_ c: OpaquePointer, _ f: DBusWakeupMainFunction?, data: UnsafeMutableRawPointer?, free: DBusFreeFunction?) {
        dbus_connection_set_wakeup_main_function(c, f, data, free)
    }
    /// `dbus_connection_set_dispatch_status_function`.
    static func setDispatchStatus(
        _ c: OpaquePointer, _ f: DBusDispatchStatusFunction?, data: UnsafeMutableRawPointer?, free: DBusFreeFunction?
    ) {
        dbus_connection_set_dispatch_status_function(c, f, data, free)
    }
    /// `dbus_connection_add_filter`.
    static func addFilter(_ c: OpaquePointer, _ f: DBusHandleMessageFunction, data: UnsafeMutableRawPointer?, free: DBusFreeFunction?) {
        checkMemory(dbus_connection_add_filter(c, f, data, free), "dbus_connection_add_filter")
    }

    // MARK: watches, timeouts, pending calls

    /// `dbus_watch_get_unix_fd`.
    static func watchFD(_ w: OpaquePointer) -> Int32 { dbus_watch_get_unix_fd(w) }
    /// `dbus_watch_get_flags`.
    static func watchFlags(_ w: OpaquePointer) -> UInt32 { dbus_watch_get_flags(w) }
    /// `dbus_watch_get_enabled`.
    static func watchEnabled(_ w: OpaquePointer) -> Bool { dbus_watch_get_enabled(w) != 0 }
    /// `dbus_watch_handle`.
    static func watchHandle(_ w: OpaquePointer, flags: UInt32) { _ = dbus_watch_handle(w, flags) }
    /// `dbus_watch_get_data`.
    static func watchData(_ w: OpaquePointer) -> UnsafeMutableRawPointer? { dbus_watch_get_data(w) }
    /// `dbus_watch_set_data`.
    static func setWatchData(_ w: OpaquePointer, _ data: UnsafeMutableRawPointer?, free: DBusFreeFunction?) {
        dbus_watch_set_data(w, data, free)
    }
    /// `dbus_timeout_get_interval` (milliseconds).
    static func timeoutInterval(_ t: OpaquePointer) -> Int32 { dbus_timeout_get_interval(t) }
    /// `dbus_timeout_get_enabled`.
    static func timeoutEnabled(_ t: OpaquePointer) -> Bool { dbus_timeout_get_enabled(t) != 0 }
    /// `dbus_timeout_handle`.
    static func timeoutHandle(_ t: OpaquePointer) { _ = dbus_timeout_handle(t) }
    /// `dbus_timeout_get_data`.
    static func timeoutData(_ t: OpaquePointer) -> UnsafeMutableRawPointer? { dbus_timeout_get_data(t) }
    /// `dbus_timeout_set_data`.
    static func setTimeoutData(_ t: OpaquePointer, _ data: UnsafeMutableRawPointer?, free: DBusFreeFunction?) {
        dbus_timeout_set_data(t, data, free)
    }
    /// `dbus_pending_call_set_notify`.
    static func setNotify(
        _ p: OpaquePointer, _ f: DBusPendingCallNotifyFunction, data: UnsafeMutableRawPointer?, free: DBusFreeFunction?
    ) {
        checkMemory(dbus_pending_call_set_notify(p, f, data, free), "dbus_pending_call_set_notify")
    }
    /// `dbus_pending_call_get_completed`.
    static func pendingCompleted(_ p: OpaquePointer) -> Bool { dbus_pending_call_get_completed(p) != 0 }
    /// `dbus_pending_call_steal_reply`.
    static func stealReply(_ p: OpaquePointer) -> OpaquePointer? { dbus_pending_call_steal_reply(p) }
    /// `dbus_pending_call_unref`.
    static func unref(pending p: OpaquePointer) { dbus_pending_call_unref(p) }
    /// `dbus_pending_call_cancel`.
    static func cancel(pending p: OpaquePointer) { dbus_pending_call_cancel(p) }

    /// `dbus_try_get_local_machine_id`: this machine's D-Bus id (`/etc/machine-id`).
    static func machineID() -> String? {
        let (raw, error) = withError { dbus_try_get_local_machine_id($0) }
        guard error == nil, let raw else { return nil }
        defer { dbus_free(raw) }
        return String(cString: raw)
    }

    // MARK: C types and constants the other files use by these names

    /// `DBusMessageIter`: a cursor into a message's arguments.
    typealias MessageIterator = DBusMessageIter
    /// `dbus_bool_t`: libdbus's 32-bit boolean.
    typealias Bool32 = dbus_bool_t
    /// `DBusFreeFunction`.
    typealias FreeFunction = DBusFreeFunction
    /// `DBusHandleMessageFunction`: a filter.
    typealias HandleMessageFunction = DBusHandleMessageFunction
    /// `DBusAddWatchFunction`.
    typealias AddWatchFunction = DBusAddWatchFunction
    /// `DBusRemoveWatchFunction`.
    typealias RemoveWatchFunction = DBusRemoveWatchFunction
    /// `DBusWatchToggledFunction`.
    typealias WatchToggledFunction = DBusWatchToggledFunction
    /// `DBusAddTimeoutFunction`.
    typealias AddTimeoutFunction = DBusAddTimeoutFunction
    /// `DBusRemoveTimeoutFunction`.
    typealias RemoveTimeoutFunction = DBusRemoveTimeoutFunction
    /// `DBusTimeoutToggledFunction`.
    typealias TimeoutToggledFunction = DBusTimeoutToggledFunction
    /// `DBusDispatchStatusFunction`.
    typealias DispatchStatusFunction = DBusDispatchStatusFunction
    /// `DBusWakeupMainFunction`.
    typealias WakeupMainFunction = DBusWakeupMainFunction
    /// `DBusPendingCallNotifyFunction`.
    typealias PendingCallNotifyFunction = DBusPendingCallNotifyFunction

    /// `DBUS_WATCH_READABLE`.
    static let watchReadable = DBUS_WATCH_READABLE.rawValue
    /// `DBUS_WATCH_WRITABLE`.
    static let watchWritable = DBUS_WATCH_WRITABLE.rawValue
    /// `DBUS_WATCH_HANGUP`.
    static let watchHangUp = DBUS_WATCH_HANGUP.rawValue
    /// `DBUS_WATCH_ERROR`.
    static let watchError = DBUS_WATCH_ERROR.rawValue

    /// `DBUS_HANDLER_RESULT_HANDLED` or `DBUS_HANDLER_RESULT_NOT_YET_HANDLED`.
    static func handlerResult(handled: Bool) -> DBusHandlerResult {
        handled ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
    }

    /// True for `DBUS_DISPATCH_DATA_REMAINS`.
    static func dataRemains(_ status: DBusDispatchStatus) -> Bool {
        status == DBUS_DISPATCH_DATA_REMAINS
    }

    // MARK: helpers

    private static func withOptionalCString<T>(_ s: String?, _ body: (UnsafePointer<CChar>?) -> T) -> T {
        guard let s else { return body(nil) }
        return s.withCString(body)
    }
}

/// D-Bus type codes (`DBUS_TYPE_*` are cast macros, which Swift does not import).
enum TypeCode {
    static let invalid: Int32 = 0
    static let byte = Int32(UInt8(ascii: "y"))
    static let boolean = Int32(UInt8(ascii: "b"))
    static let int16 = Int32(UInt8(ascii: "n"))
    static let uint16 = Int32(UInt8(ascii: "q"))
    static let int32 = Int32(UInt8(ascii: "i"))
    static let uint32 = Int32(UInt8(ascii: "u"))
    static let int64 = Int32(UInt8(ascii: "x"))
    static let uint64 = Int32(UInt8(ascii: "t"))
    static let double = Int32(UInt8(ascii: "d"))
    static let string = Int32(UInt8(ascii: "s"))
    static let objectPath = Int32(UInt8(ascii: "o"))
    static let signature = Int32(UInt8(ascii: "g"))
    static let unixFD = Int32(UInt8(ascii: "h"))
    static let array = Int32(UInt8(ascii: "a"))
    static let variant = Int32(UInt8(ascii: "v"))
    /// What an iterator reports for a struct (the signature says `(`).
    static let structure = Int32(UInt8(ascii: "r"))
    /// What an iterator reports for a dict entry (the signature says `{`).
    static let dictEntry = Int32(UInt8(ascii: "e"))

    /// A readable name for error messages.
    static func name(_ code: Int32) -> String {
        switch code {
        case invalid: return "nothing"
        case structure: return "a struct"
        case dictEntry: return "a dict entry"
        default:
            guard let scalar = Unicode.Scalar(UInt32(code)) else { return "type \(code)" }
            return "'\(Character(scalar))'"
        }
    }
}

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
