import FlowdSystem

/// The client side of the authentication a bus asks before the first
/// message (the specification's SASL profile), on a connected socket:
/// `AUTH EXTERNAL` with this process's uid (the decimal number, hex-encoded:
/// the bus checks it against the socket's credentials), `NEGOTIATE_UNIX_FD`,
/// `BEGIN`. The one byte of NUL before it is where libdbus sends
/// credentials; on Linux the bus reads them from the socket
/// (`SO_PEERCRED`), so a plain byte is enough.
///
/// It blocks (with a deadline): it runs once, when flowd connects.
struct BusAuthentication {
    /// What the bus agreed to.
    struct Outcome: Equatable {
        /// The bus's GUID (`OK <guid>`).
        var guid: String
        /// The bus passes file descriptors (`AGREE_UNIX_FD`).
        var unixFDs: Bool
        /// Bytes that arrived after the last line (the start of the bus's
        /// first message, should it not wait for ours).
        var leftover: [UInt8]
    }

    /// The longest line accepted from the bus (libdbus allows 16 KiB).
    static let maximumLine = 16 * 1024

    let fd: Int32
    let uid: UInt32
    let deadline: ContinuousClock.Instant
    private var buffer: [UInt8] = []

    init(fd: Int32, uid: UInt32, timeout: Duration) {
        self.fd = fd
        self.uid = uid
        deadline = ContinuousClock.now.advanced(by: timeout)
    }

    /// The uid as `EXTERNAL` sends it: its decimal digits, each as two hex digits.
    static func hexEncoded(_ uid: UInt32) -> String {
        String(uid).utf8.map { String($0, radix: 16) }.joined()
    }

    /// Runs the exchange; after it the next bytes on the socket are messages.
    mutating func run() throws(DBusError) -> Outcome {
        try write([0] + Array("AUTH EXTERNAL \(Self.hexEncoded(uid))\r\n".utf8))
        let answer = try readLine()
        let guid: String
        switch Self.command(answer) {
        case ("OK", let argument) where !argument.isEmpty:
            guid = argument
        case ("REJECTED", let mechanisms):
            throw DBusError(.authFailed, "the bus refused EXTERNAL authentication as uid \(uid)"
                + (mechanisms.isEmpty ? "" : " (it offers: \(mechanisms))"))
        default:
            throw DBusError(.authFailed, "the bus answered AUTH EXTERNAL with \"\(Self.printable(answer))\"")
        }
        try write(Array("NEGOTIATE_UNIX_FD\r\n".utf8))
        let negotiated = try readLine()
        let unixFDs: Bool
        switch Self.command(negotiated) {
        case ("AGREE_UNIX_FD", _): unixFDs = true
        case ("ERROR", _): unixFDs = false
        default:
            throw DBusError(.authFailed, "the bus answered NEGOTIATE_UNIX_FD with \"\(Self.printable(negotiated))\"")
        }
        try write(Array("BEGIN\r\n".utf8))
        return Outcome(guid: guid, unixFDs: unixFDs, leftover: buffer)
    }

    /// A line's command and the rest after one space.
    private static func command(_ line: String) -> (Substring, String) {
        guard let space = line.firstIndex(of: " ") else { return (Substring(line), "") }
        return (line[..<space], String(line[line.index(after: space)...]))
    }

    /// At most 200 characters, control characters as `?`, for an error text.
    private static func printable(_ line: String) -> String {
        String(line.unicodeScalars.prefix(200).map { $0.value < 0x20 || $0.value == 0x7f ? "?" : Character($0) })
    }

    /// Waits for the socket until the deadline; past it, the authentication failed.
    private func wait(for events: PollEvents) throws(DBusError) {
        try BusLink.wait(
            on: fd, for: events, until: deadline,
            expired: DBusError(.timeout, "the bus did not complete the authentication in time"))
    }

    private func write(_ bytes: [UInt8]) throws(DBusError) {
        var written = 0
        while written < bytes.count {
            let sent: Result<Int, SystemCallError> = bytes.withUnsafeBytes { all in
                Result { () throws(SystemCallError) -> Int in
                    try FileDescriptor.sendSome(fd, UnsafeRawBufferPointer(rebasing: all[written...]))
                }
            }
            switch sent {
            case .success(let count): written += count
            case .failure(let error) where error.errno == .wouldBlock:
                try wait(for: .writable)
            case .failure(let error):
                throw DBusError(.authFailed, "the connection to the bus broke during authentication: \(error.description)")
            }
        }
    }

    /// The next line from the bus, without its `\r\n`.
    private mutating func readLine() throws(DBusError) -> String {
        while true {
            if let end = buffer.indices.first(where: { buffer[$0] == UInt8(ascii: "\n") && $0 > 0 && buffer[$0 - 1] == UInt8(ascii: "\r") }) {
                let line = Array(buffer[..<(end - 1)])
                buffer.removeSubrange(...end)
                guard let text = String(validating: line, as: UTF8.self), text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) else {
                    throw DBusError(.authFailed, "the bus sent a line that is not ASCII text during authentication")
                }
                return text
            }
            guard buffer.count < Self.maximumLine else {
                throw DBusError(.authFailed, "the bus sent a line longer than \(Self.maximumLine) bytes during authentication")
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let received: Result<(count: Int, fds: [FileDescriptor]), SystemCallError> = chunk.withUnsafeMutableBytes { raw in
                Result { () throws(SystemCallError) in try FileDescriptor.receiveSome(fd, into: raw, maximumFDs: 1) }
            }
            switch received {
            case .success(let (count, fds)):
                for descriptor in fds { descriptor.close() }
                guard count > 0 else { throw DBusError(.authFailed, "the bus closed the connection during authentication") }
                buffer.append(contentsOf: chunk[..<count])
            case .failure(let error) where error.errno == .wouldBlock:
                try wait(for: .readable)
            case .failure(let error):
                throw DBusError(.authFailed, "the connection to the bus broke during authentication: \(error.description)")
            }
        }
    }
}

extension ErrorName {
    /// `org.freedesktop.DBus.Error.AuthFailed`: the bus did not accept the authentication.
    package static let authFailed: ErrorName = "org.freedesktop.DBus.Error.AuthFailed"
}
