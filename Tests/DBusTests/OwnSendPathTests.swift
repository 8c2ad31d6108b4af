import DBus
import FlowdSystem
import Glibc
import Reactor
import Testing
import TestSupport

/// flowd's own replies and signals written to the socket without libdbus
/// (`OutgoingQueue`), mixed with messages libdbus sends, through a real
/// dbus-daemon: the order holds, serials never meet libdbus' own, a slow
/// bus neither blocks the loop nor lets libdbus write in between, and a
/// reply leaves with its signals in one `send(2)`.
@Suite("The own send path keeps the connection's order")
struct OwnSendPathTests {
    static let path: ObjectPath = "/org/flowd/Order"
    static let interface: InterfaceName = "org.flowd.Order"

    /// `Burst(count, size)`: `count` unicast signals `Seq(n, filler)` to the
    /// caller, by turns through the own path and through libdbus (every
    /// fifth carrying a file descriptor, which only libdbus can send), then
    /// the reply `count`. `Change`: the reply, then a `PropertiesChanged`.
    static func table(_ objects: LoopBound<ObjectServer>, fd: UnixFD) -> InterfaceTable<Int> {
        InterfaceTable(
            interface,
            methods: [
                .init("Burst", in: [Argument("count", "u"), Argument("size", "u")], out: [Argument("count", "u")]) { _, call in
                    var args = call.arguments()
                    let count = try args.next(UInt32.self)
                    let size = try args.next(UInt32.self)
                    guard let caller = call.sender else { throw DBusError.failed("no sender") }
                    try burst(objects.value, count: count, size: Int(size), to: caller, fd: fd)
                    call.reply(.uint32(count))
                },
                .init("Change") { _, call in
                    call.reply()
                    try objects.value.emitPropertiesChanged(
                        path: path, interface: interface, changed: ["Revision": .uint32(7)], destination: call.sender)
                },
            ],
            signals: [.init("Seq", [Argument("n", "u"), Argument("filler", "s")])])
    }

    /// Emits `Seq` signals 0..<count to `caller`, alternating the two paths.
    static func burst(_ objects: ObjectServer, count: UInt32, size: Int, to caller: BusName, fd: UnixFD) throws(DBusError) {
        let filler = String(repeating: "x", count: size)
        for n in 0..<count {
            switch n % 5 {
            case 1, 3:
                // Built and sent by libdbus.
                let signal = Message.signal(path: path, interface: interface, member: "Seq")
                try signal.append(.uint32(n), .string(filler))
                signal.destination = caller
                objects.connection.send(signal)
            case 4:
                // A file descriptor travels beside the bytes: libdbus sends it.
                try objects.emitSignal(
                    "SeqFD", interface: interface, path: path, arguments: [.uint32(n), .string(filler), .unixFD(fd)],
                    destination: caller)
            default:
                try objects.emitSignal(
                    "Seq", interface: interface, path: path, arguments: [.uint32(n), .string(filler)], destination: caller)
            }
        }
    }

    /// Exports the object; returns the descriptor its signals carry.
    @discardableResult
    static func export(_ fixture: BusFixture) throws -> UnixFD {
        let objects = fixture.objects
        let fd = try UnixFD(duplicating: FileDescriptor.pipe().read)
        try fixture.onLoop { () throws(DBusError) in
            try objects.value.export(0, at: path, interfaces: [table(objects, fd: fd)])
        }
        return fd
    }

    /// The `Seq` numbers the client received, in order, and their serials.
    static func receive(_ count: UInt32, size: Int, on client: Connection) throws -> [(n: UInt32, serial: UInt32)] {
        var received: [(UInt32, UInt32)] = []
        for _ in 0..<count {
            guard let signal = try client.nextSignal(matching: MatchRule(interface: interface), timeout: .seconds(20)) else { break }
            var args = signal.arguments()
            let n = try args.next(UInt32.self)
            #expect(try args.next(String.self).utf8.count == size)
            received.append((n, signal.serial))
        }
        return received
    }

    @Test("own messages and libdbus' mixed in one handler arrive in order; serials never meet")
    func orderAndSerials() throws {
        let fixture = try BusFixture(libdbusClient: true)  // it receives descriptors
        try Self.export(fixture)
        let call = Message.methodCall(destination: fixture.serverName, path: Self.path, interface: Self.interface, member: "Burst")
        try call.append(.uint32(40), .uint32(100))
        var reply = try fixture.client.call(call).arguments()
        #expect(try reply.next(UInt32.self) == 40)
        let received = try Self.receive(40, size: 100, on: fixture.client)
        #expect(received.map(\.n) == Array(0..<40))
        for (n, serial) in received {
            // Own messages count from 2³¹, libdbus' from 1.
            #expect((serial >= 0x8000_0000) == [0, 2].contains(n % 5), "signal \(n) has serial \(serial)")
        }
        #expect(Set(received.map(\.serial)).count == received.count)
    }

    @Test("a reply and the PropertiesChanged its handler emitted leave in one send")
    func replyAndSignalInOneSend() throws {
        let fixture = try BusFixture()
        try Self.export(fixture)
        let server = fixture.server
        let before = try fixture.onLoop { server.ownSendCounts.sends }
        let call = Message.methodCall(destination: fixture.serverName, path: Self.path, interface: Self.interface, member: "Change")
        _ = try fixture.client.call(call)
        let signal = try #require(try fixture.client.nextSignal(matching: MatchRule(interface: .properties), timeout: .seconds(20)))
        #expect(signal.member == "PropertiesChanged")
        #expect(signal.serial >= 0x8000_0000)
        #expect(try fixture.onLoop { server.ownSendCounts.sends } == before + 1)
    }

    @Test("a bus that stops reading: the loop goes on, nothing interleaves, everything arrives in order")
    func slowReader() throws {
        let fixture = try BusFixture(libdbusClient: true)  // it receives descriptors
        let fd = try Self.export(fixture)
        let objects = fixture.objects
        let server = fixture.server
        let client = try #require(fixture.client.uniqueName)
        let count: UInt32 = 120
        let size = 32 * 1024  // 3.75 MiB in all: far beyond the socket's buffer
        #expect(kill(fixture.bus.pid, SIGSTOP) == 0)
        var resumed = false
        defer { if !resumed { kill(fixture.bus.pid, SIGCONT) } }
        let replies = Mailbox<String>()
        try fixture.onLoop { () throws(DBusError) in
            try Self.burst(objects.value, count: count, size: size, to: client, fd: fd)
            // A call awaiting its reply waits behind the own bytes too.
            let getID = Message.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                           interface: "org.freedesktop.DBus", member: "GetId")
            server.sendWithReply(getID) { result in
                replies.put((try? result.get()).map { _ in "ok" } ?? "failed")
            }
        }
        // The loop still runs jobs while the socket is full.
        let (sends, full) = try fixture.onLoop { server.ownSendCounts }
        #expect(sends >= 1)
        #expect(full >= 1, "the socket never filled: the test proves nothing")
        #expect(kill(fixture.bus.pid, SIGCONT) == 0)
        resumed = true
        let received = try Self.receive(count, size: size, on: fixture.client)
        #expect(received.map(\.n) == Array(0..<count))
        // Server and client still talk: the stream was never corrupted.
        let ping = Message.methodCall(destination: fixture.serverName, path: Self.path, interface: "org.freedesktop.DBus.Peer", member: "Ping")
        _ = try fixture.client.call(ping)
        #expect(replies.take() == "ok")
    }

    @Test("an own error reply reads as libdbus' would: name, message, reply serial, destination")
    func errorReply() throws {
        let call = Message.methodCall(destination: ":1.9", path: "/a", interface: "org.example.I", member: "M")
        call.sender = ":1.7"
        let bytes = try WireMessage.error(.failed("no way"), to: Self.sent(call)).loaded()
        #expect(bytes.type == .error)
        #expect(bytes.errorName == .failed)
        #expect(bytes.error?.message == "no way")
        #expect(bytes.destination == ":1.7")
        #expect(bytes.serial >= 0x8000_0000)
        #expect(throws: DBusError.self) { try WireMessage.error(.failed("a\u{0}b"), to: Self.sent(call)) }
    }

    @Test("an own method return reads as libdbus' would: reply serial, destination, signature, arguments, with and without each")
    func methodReturn() throws {
        for sender in [":1.7", nil] as [BusName?] {
            for signature in ["", "s", "a{sv}u"] as [Signature] {
                let call = Message.methodCall(destination: ":1.9", path: "/a", interface: "org.example.I", member: "M")
                call.sender = sender
                var body = WireEncoder()
                let values: [DBusValue] = switch signature.rawValue {
                case "": []
                case "s": [.string("héllo")]
                default: [.vardict(["k": .string("v")]), .uint32(3)]
                }
                for value in values { try body.value(value) }
                let reply = try WireMessage.methodReturn(to: Self.sent(call), signature: signature, body: body)
                #expect((reply.bytes.count - reply.body.count) % 8 == 0)
                let loaded = try reply.loaded()
                #expect(loaded.type == .methodReturn)
                #expect(loaded.replySerial == 5)
                #expect(loaded.destination == sender)
                #expect(loaded.signature == signature)
                #expect(try loaded.readArguments() == values)
                #expect(loaded.serial >= 0x8000_0000)
            }
        }
    }

    @Test("method returns made from header templates, past the templates kept and back, read as their own fields")
    func methodReturnTemplates() throws {
        // More callers than templates are kept (8), each with every
        // signature, twice: made, replaced, made again.
        let senders: [BusName?] = [nil] + (try (0..<11).map { try BusName(":1.\(100 + $0)") })
        let signatures: [Signature] = ["", "s", "a{sv}u", "as"]
        var serial: UInt32 = 250
        for round in 0..<2 {
            for sender in senders {
                for signature in signatures {
                    serial &+= 257  // every byte of the reply serial moves
                    var bytes = Message.methodCall(destination: ":1.9", path: "/a", interface: "org.example.I", member: "M")
                        .marshaled()
                    withUnsafeBytes(of: serial.littleEndian) { bytes.replaceSubrange(8..<12, with: $0) }
                    let call = try Message.demarshaling(bytes)
                    call.sender = sender
                    var body = WireEncoder()
                    let values: [DBusValue] = switch signature.rawValue {
                    case "": []
                    case "s": [.string("round \(round)")]
                    case "as": [.strings(["a", "bc"])]
                    default: [.vardict(["k": .string("v")]), .uint32(serial)]
                    }
                    for value in values { try body.value(value) }
                    let reply = try WireMessage.methodReturn(to: call, signature: signature, body: body)
                    let loaded = try reply.loaded()
                    #expect(loaded.type == .methodReturn)
                    #expect(loaded.replySerial == serial)
                    #expect(loaded.destination == sender)
                    #expect(loaded.signature == signature)
                    #expect(try loaded.readArguments() == values)
                    #expect(loaded.serial >= 0x8000_0000)
                    #expect(loaded.noReplyExpected)
                }
            }
        }
    }

    /// `call` as if received: marshaled and loaded with a serial.
    static func sent(_ call: Message) throws -> Message {
        var bytes = call.marshaled()
        bytes[8] = 5  // the serial, little-endian
        return try Message.demarshaling(bytes)
    }
}
