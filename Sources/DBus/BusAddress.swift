import FlowdSystem

/// The part of the D-Bus address syntax flowd connects to itself
/// (``Connection``'s own reader): a list of
/// `unix:path=…` and `unix:abstract=…` entries (`;` between entries, `,`
/// between keys, `%XX` escapes; a `guid=` key is allowed and not checked).
/// Any other transport or key (`tcp:`, `unixexec:`, `unix:dir=`,
/// `autolaunch:`, `runtime=yes`…) is left to libdbus, which knows them all.
extension BusAddress {
    /// The sockets `address` names, in order, or nil when an entry is one
    /// libdbus should handle (or the address is not valid: libdbus then says
    /// why).
    static func unixSockets(_ address: String) -> [UnixSocketAddress]? {
        guard LibDBus.validateAddress(address) == nil else { return nil }
        var sockets: [UnixSocketAddress] = []
        for entry in address.split(separator: ";", omittingEmptySubsequences: true) {
            guard let colon = entry.firstIndex(of: ":"), entry[..<colon] == "unix" else { return nil }
            var socket: UnixSocketAddress?
            for pair in entry[entry.index(after: colon)...].split(separator: ",", omittingEmptySubsequences: false) {
                guard let equals = pair.firstIndex(of: "="), let value = unescape(pair[pair.index(after: equals)...]) else {
                    return nil
                }
                switch pair[..<equals] {
                case "path" where socket == nil && !value.isEmpty: socket = .path(value)
                case "abstract" where socket == nil && !value.isEmpty: socket = .abstract(value)
                case "guid": continue
                default: return nil
                }
            }
            guard let socket else { return nil }
            sockets.append(socket)
        }
        return sockets.isEmpty ? nil : sockets
    }

    /// The address of the system or session bus as libdbus finds it: the
    /// environment variable, or for the system bus its well-known socket.
    /// Nil for a session bus without the variable (libdbus then looks
    /// further: `XDG_RUNTIME_DIR/bus`, autolaunch).
    static func of(system: Bool) -> String? {
        let variable = system ? "DBUS_SYSTEM_BUS_ADDRESS" : "DBUS_SESSION_BUS_ADDRESS"
        if let value = CurrentProcess.environmentVariable(variable), !value.isEmpty { return value }
        return system ? "unix:path=/var/run/dbus/system_bus_socket" : nil
    }

    /// `%XX` escapes decoded; nil for a bad escape or a value that is not
    /// UTF-8 (or holds a NUL).
    private static func unescape(_ value: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = value.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        guard !bytes.contains(0) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        Character(Unicode.Scalar(byte)).hexDigitValue.map(UInt8.init)
    }
}
