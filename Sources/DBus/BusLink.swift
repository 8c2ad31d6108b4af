import FlowdSystem

/// A connection to a bus whose socket flowd owns from the start
/// (docs/performance.md, R3 and R4): it connects, authenticates
/// (``BusAuthentication``), says `Hello` and from then on reads the bus's
/// messages with ``MessageFramer``, so libdbus reads nothing on it. libdbus
/// stays the message library: the calls flowd builds with it are numbered
/// here and marshalled (`dbus_message_marshal`), and leave through the own
/// send path (``OutgoingQueue``).
///
/// Reading without a loop (start-up, client mode) blocks here with a
/// deadline; on a loop the connection's read watch calls
/// ``readAvailable()``. Confined like the ``ConnectionCore`` that holds it.
final class BusLink {
    /// The connected socket.
    let socket: FileDescriptor
    /// The bus passes file descriptors (`AGREE_UNIX_FD`).
    let unixFDs: Bool
    /// The unique name `Hello` returned.
    private(set) var uniqueName = BusName(trusted: ":0.0")
    /// What arrived and is not yet routed: messages a blocking call read
    /// while it waited for its reply come first, then the framer's.
    private var deferred: [IncomingMessage] = []
    private var framer = MessageFramer()
    /// Why the connection ended (end of stream, an error, a malformed
    /// stream); nil while it lasts.
    private(set) var ended: DBusError?
    /// Serials of the messages libdbus builds: from 1, below the own
    /// messages' 2³¹ (``WireMessage``).
    private var lastSerial: UInt32 = 0
    /// Descriptors one `recvmsg` takes: Linux passes at most 253 at once (`SCM_MAX_FD`).
    static let maximumFDs = 253
    /// Bytes read per `recvmsg`.
    static let readSize = 64 * 1024
    private var readBuffer = [UInt8](repeating: 0, count: BusLink.readSize)

    private init(socket: FileDescriptor, unixFDs: Bool, leftover: [UInt8]) {
        self.socket = socket
        self.unixFDs = unixFDs
        framer.append(leftover)
    }

    /// Connects to the first of `sockets` that accepts, authenticates as
    /// this process's uid and registers (`Hello`), all within `timeout`.
    static func open(_ sockets: [UnixSocketAddress], timeout: Duration = .seconds(25)) throws(DBusError) -> BusLink {
        var failure = DBusError(.noServer, "no address to connect to")
        for address in sockets {
            let socket: FileDescriptor
            do {
                socket = try FileDescriptor.connectUnixStream(to: address)
            } catch {
                let name: ErrorName = error.errno == .noSuchFileOrDirectory ? .fileNotFound : .noServer
                failure = DBusError(name, "Failed to connect to socket \(address): \(error.errno)")
                continue
            }
            var authentication = BusAuthentication(fd: socket.rawValue, uid: CurrentProcess.userID, timeout: timeout)
            let outcome = try authentication.run()
            let link = BusLink(socket: socket, unixFDs: outcome.unixFDs, leftover: outcome.leftover)
            try link.hello(deadline: authentication.deadline)
            return link
        }
        throw failure
    }

    /// Registers with the bus and learns the unique name; what the bus
    /// sends after the reply (`NameAcquired`) stays for the first dispatch.
    private func hello(deadline: ContinuousClock.Instant) throws(DBusError) {
        let call = Message.methodCall(destination: .bus, path: "/org/freedesktop/DBus", interface: .bus, member: "Hello")
        let (bytes, _) = marshal(call)
        try writeBlocking(bytes, fds: [], deadline: deadline)
        let reply = try awaitReply(to: call.serial, deadline: deadline)
        if let error = reply.error { throw error }
        var reader = reply.arguments()
        let name = try reader.next(String.self)
        guard let unique = BusName(rawValue: name), unique.isUnique else {
            throw DBusError(.failed, "the bus answered Hello with \"\(name)\", not a unique name")
        }
        uniqueName = unique
    }

    // MARK: writing

    /// Numbers `message` (unless it has a serial) and returns its bytes and
    /// the descriptors it carries, in the order of their indexes.
    func marshal(_ message: Message) -> (bytes: [UInt8], fds: [UnixFD]) {
        if message.serial == 0 {
            lastSerial = lastSerial >= 0x7fff_ffff ? 1 : lastSerial + 1
            LibDBus.setSerial(message.raw, lastSerial)
        }
        let bytes = LibDBus.marshal(message.raw)
        guard LibDBus.containsUnixFDs(message.raw) else { return (bytes, []) }
        // libdbus numbers descriptors as they are appended, which is the
        // order the arguments are read in.
        let values = (try? message.readArguments()) ?? []
        var fds: [UnixFD] = []
        for value in values { value.collectUnixFDs(into: &fds) }
        return (bytes, fds)
    }

    /// Writes all of `bytes` (with `fds` on the first), waiting for the
    /// socket; for start-up and the blocking calls.
    func writeBlocking(_ bytes: [UInt8], fds: [UnixFD], deadline: ContinuousClock.Instant) throws(DBusError) {
        var written = 0
        while written < bytes.count {
            let descriptors = written == 0 ? fds.map(\.fileDescriptor) : []
            let sent: Result<Int, SystemCallError> = bytes.withUnsafeBytes { all in
                Result { () throws(SystemCallError) -> Int in
                    try FileDescriptor.sendSome(socket.rawValue, UnsafeRawBufferPointer(rebasing: all[written...]), fds: descriptors)
                }
            }
            switch sent {
            case .success(let count): written += count
            case .failure(let error) where error.errno == .wouldBlock:
                try wait(for: .writable, until: deadline)
            case .failure(let error):
                throw end(DBusError.disconnected("cannot write to the bus: \(error.description)"))
            }
        }
    }

    // MARK: reading

    /// Reads what the socket holds now (without blocking) into the framer;
    /// false once the connection ended (``ended`` says why).
    @discardableResult
    func readAvailable() -> Bool {
        while ended == nil {
            let received: Result<(count: Int, fds: [FileDescriptor]), SystemCallError> = readBuffer.withUnsafeMutableBytes { raw in
                Result { () throws(SystemCallError) in
                    try FileDescriptor.receiveSome(socket.rawValue, into: raw, maximumFDs: Self.maximumFDs)
                }
            }
            switch received {
            case .success(let (count, fds)):
                guard count > 0 else {
                    for descriptor in fds { descriptor.close() }
                    _ = end(.disconnected("the bus closed the connection"))
                    return false
                }
                readBuffer.withUnsafeBytes { framer.append(UnsafeRawBufferPointer(rebasing: $0[..<count]), fds: fds) }
                if count < readBuffer.count { return true }
            case .failure(let error) where error.errno == .wouldBlock:
                return true
            case .failure(let error):
                _ = end(.disconnected("cannot read from the bus: \(error.description)"))
                return false
            }
        }
        return false
    }

    /// The next whole message that arrived, or nil until more bytes do. A
    /// malformed stream ends the connection (nil, ``ended`` set).
    func nextMessage() -> IncomingMessage? {
        deferred.isEmpty ? nextFramed() : deferred.removeFirst()
    }

    /// Bytes read and not yet handed out as messages.
    var bufferedBytes: Int { framer.pendingBytes }

    /// True when a whole message may wait (deferred, or bytes in the framer).
    var mayHaveMessages: Bool { !deferred.isEmpty || (ended == nil && framer.pendingBytes >= 16) }

    /// Reads, blocking until `deadline`, until the reply to `serial`
    /// arrives; every other message is kept, in order, for the dispatch.
    func awaitReply(to serial: UInt32, deadline: ContinuousClock.Instant) throws(DBusError) -> Message {
        var skipped: [IncomingMessage] = []
        defer { deferred = skipped + deferred }
        while true {
            while let incoming = deferred.isEmpty ? nextFramed() : deferred.removeFirst() {
                let type = incoming.header.type
                if (type == .methodReturn || type == .error) && incoming.header.replySerial == serial {
                    return try BusLink.message(from: incoming)
                }
                skipped.append(incoming)
            }
            if let ended { throw ended }
            try wait(for: .readable, until: deadline)
            readAvailable()
        }
    }

    private func nextFramed() -> IncomingMessage? {
        guard ended == nil else { return nil }
        do {
            return try framer.next()
        } catch {
            _ = end(DBusError.disconnected("the bus sent bytes that are not a D-Bus message: \(error.message)"))
            return nil
        }
    }

    /// Waits up to `timeout` for bytes (or the end) on the socket.
    func waitReadable(timeout: Duration) {
        guard ended == nil else { return }
        _ = try? Poll.wait([(socket.rawValue, .readable)], timeout: timeout)
    }

    /// Closes the socket (the read watch is cancelled first).
    func close() {
        _ = end(.disconnected("the connection is closed"))
        socket.close()
    }

    /// Waits for the socket; past `deadline` throws `NoReply`.
    private func wait(for events: PollEvents, until deadline: ContinuousClock.Instant) throws(DBusError) {
        try Self.wait(on: socket.rawValue, for: events, until: deadline, expired: ReplyTable.timedOut)
    }

    /// Waits until `fd` is ready for `events` (or something else wakes the
    /// poll: the caller tries again) but not past `deadline`; once it has
    /// passed, throws `expired`. The one wait of the blocking steps:
    /// authentication, `Hello`, the blocking calls.
    static func wait(
        on fd: Int32, for events: PollEvents, until deadline: ContinuousClock.Instant, expired: @autoclosure () -> DBusError
    ) throws(DBusError) {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { throw expired() }
        _ = try? Poll.wait([(fd, events)], timeout: left)
    }

    /// Marks the connection ended with `error` (the first reason stays)
    /// and returns the reason.
    func end(_ error: DBusError) -> DBusError {
        if ended == nil { ended = error }
        return ended ?? error
    }

    /// The one place a received message becomes a ``Message``: read from
    /// its bytes by flowd (``Message/init(received:)``), checked as libdbus'
    /// loader checks it, its file descriptors handed over with it.
    static func message(from incoming: IncomingMessage) throws(DBusError) -> Message {
        try Message(received: incoming)
    }
}

extension DBusValue {
    /// Appends the descriptors in the value, in the order they are written.
    func collectUnixFDs(into fds: inout [UnixFD]) {
        switch self {
        case .unixFD(let fd): fds.append(fd)
        case .variant(let inner): inner.collectUnixFDs(into: &fds)
        case .structure(let fields): for field in fields { field.collectUnixFDs(into: &fds) }
        case .array(_, let items): for item in items { item.collectUnixFDs(into: &fds) }
        case .dictionary(_, _, let entries):
            for entry in entries {
                entry.key.collectUnixFDs(into: &fds)
                entry.value.collectUnixFDs(into: &fds)
            }
        default: break
        }
    }
}

extension ErrorName {
    /// `org.freedesktop.DBus.Error.FileNotFound`: no socket at the bus's path.
    static let fileNotFound: ErrorName = "org.freedesktop.DBus.Error.FileNotFound"
}
