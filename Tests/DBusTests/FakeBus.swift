import DBus
import FlowdSystem
import Glibc
import TestSupport

/// A stand-in for a bus daemon that a test scripts byte by byte: it listens
/// on a socket in a temporary directory, accepts one connection and runs
/// the test's script on it in a thread of its own. For what a real
/// dbus-daemon cannot be made to do: refuse or drop the authentication,
/// and split its messages at chosen bytes.
final class FakeBus: @unchecked Sendable {
    let directory: TemporaryDirectory
    let path: String
    private let listener: FileDescriptor
    /// Counted down when the script ended; `failure` says how, if it threw.
    let finished = Latch()
    let failure = Locked<String?>(nil)

    var address: String { "unix:path=\(path)" }

    init(_ script: @escaping @Sendable (FakePeer) throws -> Void) throws {
        directory = try TemporaryDirectory(prefix: "flowd-fakebus")
        path = directory.file("bus")
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes + [0]) }
        let listener = FileDescriptor(owning: socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0))
        self.listener = listener
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener.rawValue, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(listener.rawValue, 4) == 0 else { throw TestSupportError("cannot listen on \(path)") }
        let finished = self.finished
        let failure = self.failure
        try SystemThread.detach(name: "fake-bus") {
            let fd = accept(listener.rawValue, nil, nil)
            if fd >= 0 {
                let peer = FakePeer(FileDescriptor(owning: fd))
                do {
                    try script(peer)
                } catch {
                    failure.withLock { $0 = "\(error)" }
                }
                peer.fd.close()
            } else {
                failure.withLock { $0 = "accept failed" }
            }
            finished.countDown()
        }
    }

    deinit {
        listener.close()
    }
}

/// The fake bus's end of one connection.
final class FakePeer: @unchecked Sendable {
    let fd: FileDescriptor
    private var pending: [UInt8] = []
    private var framer = MessageFramer()
    static let uniqueName = ":1.42"

    init(_ fd: FileDescriptor) {
        self.fd = fd
    }

    /// The next `\r\n`-terminated line (a leading NUL dropped), nil at the end.
    func readLine() -> String? {
        while true {
            if let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                var line = Array(pending[..<end])
                pending.removeSubrange(...end)
                if line.first == 0 { line.removeFirst() }
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            guard let count = try? fd.read(into: &buffer), count > 0 else { return nil }
            pending.append(contentsOf: buffer[..<count])
        }
    }

    /// The next whole message the client sent.
    func readMessage() throws -> IncomingMessage {
        framer.append(pending)
        pending = []
        while true {
            if let message = try framer.next() { return message }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = try fd.read(into: &buffer)
            guard count > 0 else { throw TestSupportError("the client closed the connection") }
            framer.append(Array(buffer[..<count]))
        }
    }

    func write(_ text: String) throws {
        try fd.writeAll(Array(text.utf8))
    }

    /// Writes `bytes`, then waits until the client has read all of them
    /// (`SIOCOUTQ` is 0), so that its next read cannot see what follows.
    func writeAndWaitUntilRead(_ bytes: ArraySlice<UInt8>) throws {
        try fd.writeAll(bytes)
        var unread: Int32 = 1
        var rounds = 0
        while unread > 0 {
            guard ioctl(fd.rawValue, UInt(TIOCOUTQ), &unread) == 0 else { throw TestSupportError("SIOCOUTQ failed") }
            if unread > 0 { usleep(200) }
            rounds += 1
            if rounds > 100_000 { throw TestSupportError("the client stopped reading") }
        }
    }

    /// The authentication a bus does, accepting `EXTERNAL` for `uid`.
    func authenticate(uid: UInt32 = CurrentProcess.userID) throws {
        let hex = String(uid).utf8.map { String($0, radix: 16) }.joined()
        guard let auth = readLine(), auth == "AUTH EXTERNAL \(hex)" else { throw TestSupportError("unexpected AUTH line") }
        try write("OK 0123456789abcdef0123456789abcdef\r\n")
        guard readLine() == "NEGOTIATE_UNIX_FD" else { throw TestSupportError("no NEGOTIATE_UNIX_FD") }
        try write("AGREE_UNIX_FD\r\n")
        guard readLine() == "BEGIN" else { throw TestSupportError("no BEGIN") }
    }

    /// Reads `Hello` and returns the bytes of its reply, to be sent as the test wants.
    func helloReply() throws -> [UInt8] {
        let hello = try readMessage()
        guard hello.header.member == "Hello" else { throw TestSupportError("the first message is not Hello") }
        var body = WireEncoder()
        body.string(Self.uniqueName)
        return try WireMessage.methodReturn(to: Message.demarshaling(hello.bytes), signature: "s", body: body).bytes
    }

    /// A signal from the bus driver to the client, with one string.
    static func signal(_ member: MemberName, _ text: String) throws -> [UInt8] {
        var body = WireEncoder()
        body.string(text)
        return try WireMessage.signal(
            path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: member, destination: BusName(trusted: uniqueName),
            signature: "s", body: body
        ).bytes
    }
}
