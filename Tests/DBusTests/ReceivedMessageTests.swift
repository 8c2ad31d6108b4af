import CDBus
@testable import DBus
import Reactor
import Testing
import TestSupport

/// A message flowd read itself (``Message/init(received:)``) behaves as the
/// libdbus message loaded from the same bytes: its header, every typed read
/// and the errors they throw, the replies made to it, and the server's
/// routing, authorization and replies when it is handed to the object
/// server in place of libdbus' message.
@Suite("A received message reads as libdbus' message of the same bytes")
struct ReceivedMessageTests {
    static func both(_ message: Message, serial: UInt32 = 41, sender: BusName? = ":1.7") throws -> (libdbus: Message, own: Message) {
        try ReceivedMessages.both(message, serial: serial, sender: sender)
    }

    static func received(_ bytes: [UInt8]) throws -> Message {
        try ReceivedMessages.received(bytes)
    }

    /// A call of `member` with `values`.
    static func call(_ values: [DBusValue], member: MemberName = "SetAnswers", interface: InterfaceName? = "org.flowd.Flow1.Session")
        throws -> Message
    {
        let call = Message.methodCall(
            destination: "org.flowd.Flow1", path: "/org/flowd/Flow1/session/0123456789abcdef0123456789abcdef",
            interface: interface, member: member)
        try call.append(contentsOf: values)
        return call
    }

    static func header(_ m: Message) -> String { ReceivedMessages.header(m) }
    static let scripts = ReceivedMessages.scripts
    static func read(_ script: String, _ message: Message) -> String { ReceivedMessages.read(script, message) }

    /// Argument lists: flowd's calls (answers, options, ids), the encoder's
    /// samples, repeated keys, deep nesting, every basic type.
    static let argumentLists: [[DBusValue]] = WireEncoderTests.arguments + [
        [.vardict(["name": "Ada", "age": .uint32(36), "tags": .strings(["x", "y"]), "ok": .bool(true), "n": .double(-0.5)])],
        [.string("trip"), .vardict(["locale": "de", "prefill": .vardict(["name": "Ada"])])],
        [.string("0123456789abcdef0123456789abcdef")], [.string("a"), .string("b")], [.stringDictionary(["k": "v", "": "x"])],
        [.dictionary(keyType: .string, valueType: .variant, [
            DBusDictEntry(key: "name", value: .variant("Ada")), DBusDictEntry(key: "name", value: .variant("Grace")),
        ])],
        [.dictionary(keyType: .string, valueType: .string, [DBusDictEntry(key: "a", value: "1"), DBusDictEntry(key: "a", value: "2")])],
        [.variant(.variant(.variant(.structure([.bool(false), .vardict(["n": .int16(-1)])]))))],
        [.array(elementType: "(ss)", [.structure(["a", "b"]), .structure(["", "ü"])])],
        [.dictionary(keyType: .uint32, valueType: .variant, [DBusDictEntry(key: .uint32(3), value: .variant(.byte(1)))])],
        [.vardicts([["id": "a"], [:], ["x": .array(elementType: "y", [.byte(1), .byte(2)])]])],
        [.array(elementType: "y", (0..<40).map { .byte(UInt8($0)) })],
        [.uint32(7)], [.bool(true), .uint32(1)], [.double(.infinity)], [.objectPath("/org/a/b")], [.signature("a{sv}")],
    ]

    @Test("every typed read gives the same values and the same errors", arguments: argumentLists)
    func typedReads(_ values: [DBusValue]) throws {
        let (libdbus, own) = try Self.both(try Self.call(values))
        #expect(Self.header(own) == Self.header(libdbus))
        for script in Self.scripts {
            #expect(Self.read(script, own) == Self.read(script, libdbus), "\(script) of \(values)")
        }
        #expect(try own.readArguments() == values)
    }

    @Test("headers: calls with and without interface, flags, signals, returns and errors")
    func headers() throws {
        var messages: [Message] = [
            try Self.call([]), try Self.call([.string("x")], member: "Ping", interface: nil),
            Message.signal(path: "/org/a", interface: "org.a.B", member: "C"),
        ]
        // Each flag alone, and all three.
        for flags in 1...4 {
            let flagged = try Self.call([.uint32(1)])
            flagged.noReplyExpected = flags == 1 || flags == 4
            flagged.allowsInteractiveAuthorization = flags == 2 || flags == 4
            flagged.autoStart = !(flags == 3 || flags == 4)
            messages.append(flagged)
        }
        let call = try Self.call([])
        dbus_message_set_serial(call.raw, 9)
        call.sender = ":1.9"
        messages += [call.makeReturn(), call.makeError(.invalidArgs("no, \"really\""))]
        for message in messages {
            let (libdbus, own) = try Self.both(message, serial: 12, sender: message.sender == nil ? ":1.3" : nil)
            #expect(Self.header(own) == Self.header(libdbus))
            #expect(own.marshaled() == libdbus.marshaled())
        }
    }

    @Test("replies to a received call are the bytes libdbus makes for its own")
    func replies() throws {
        for sender: BusName? in [":1.7", nil] {
            let (libdbus, own) = try Self.both(try Self.call([.vardict(["a": "b"])]), serial: 77, sender: sender)
            #expect(own.makeReturn().marshaled() == libdbus.makeReturn().marshaled())
            for error in [DBus.DBusError.invalidArgs("bad"), DBus.DBusError("org.flowd.Flow1.Error.Nope", "a\u{0}b"), .failed("")] {
                #expect(own.makeError(error).marshaled() == libdbus.makeError(error).marshaled())
                // The own send path numbers each message it makes: the serial (bytes 8–11) differs.
                let ours = Result { Self.withoutSerial(try WireMessage.error(error, to: own).bytes) }
                let theirs = Result { Self.withoutSerial(try WireMessage.error(error, to: libdbus).bytes) }
                #expect("\(ours)" == "\(theirs)", "\(error) to \(sender as Any)")
            }
            var body = WireEncoder()
            body.string("x")
            #expect(Self.withoutSerial(try WireMessage.methodReturn(to: own, signature: "s", body: body).bytes)
                == Self.withoutSerial(try WireMessage.methodReturn(to: libdbus, signature: "s", body: body).bytes))
        }
    }

    static func withoutSerial(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        bytes.replaceSubrange(8..<12, with: [0, 0, 0, 0])
        return bytes
    }

    @Test("a received message libdbus must hold is loaded lazily, the same message")
    func lazyLibDBusMessage() throws {
        let (libdbus, own) = try Self.both(try Self.call([.vardict(["a": .strings(["b"])]), .uint32(3)]))
        // Reading and replying never needed libdbus' message.
        _ = try own.readArguments()
        _ = own.makeReturn()
        #expect(own.hasLoadedLibDBusMessage == false)
        // Writing it out through libdbus does.
        #expect(LibDBus.marshal(own.raw) == libdbus.marshaled())
        #expect(own.hasLoadedLibDBusMessage)
    }

    @Test("a big-endian call reads as libdbus reads it, typed")
    func bigEndian() throws {
        var raw = RawMessage()
        raw.bigEndian = true
        raw.fields += [(7, "s", .string(":1.5")), (8, "g", .signature("sa{sv}"))]
        var body = raw.uint32(4) + Array("trip".utf8) + [0, 0, 0, 0]  // s "trip", its NUL, padding to 12
        // a{sv}: its length, then one entry at 16: {"n": <u 258>} (the u padded to 28)
        let entry = raw.uint32(1) + Array("n".utf8) + [0] + [1] + Array("u".utf8) + [0] + [0, 0, 0] + raw.uint32(258)
        body += raw.uint32(UInt32(entry.count)) + entry
        raw.body = body
        let libdbus = try Message.demarshaling(raw.bytes)
        let own = try Self.received(raw.bytes)
        #expect(Self.header(own) == Self.header(libdbus))
        #expect(Self.read("s a{sv}", own) == "trip | n=uint32(258)")
        for script in Self.scripts {
            #expect(Self.read(script, own) == Self.read(script, libdbus), "\(script)")
        }
    }

    /// Every single-byte change of a few calls, header included: flowd's
    /// reading refuses exactly what libdbus refuses, or both read the same.
    @Test("single-byte corruptions of calls: both refuse, or both read the same")
    func corruptions() throws {
        let calls: [Message] = [
            try Self.call([.vardict(["name": "Ada", "tags": .strings(["x"]), "n": .int64(-3)])]),
            try Self.call([.string("trip"), .vardict(["locale": "de"])], member: "StartSession", interface: "org.flowd.Flow1.Manager"),
            try Self.call([.string("org.flowd.Flow1.Session"), .string("Progress")], member: "Get", interface: .properties),
        ]
        var refused = 0, read = 0
        for call in calls {
            dbus_message_set_serial(call.raw, 5)
            call.sender = ":1.42"
            let bytes = call.marshaled()
            ReceivedMessages.eachCorruption(of: bytes) { changed, offset, value in
                let own = Result { try Self.received(changed) }
                let libdbus = Result { try Message.demarshaling(changed) }
                switch (own, libdbus) {
                case (.success(let a), .success(let b)):
                    read += 1
                    #expect(Self.header(a) == Self.header(b), "byte \(offset) = \(value)")
                    for script in ["all", "a{sv}", "s a{sv}", "s s", "skip value"] {
                        let (x, y) = (Self.read(script, a), Self.read(script, b))
                        // A corrupted double may be a NaN: compared as text, it is the same.
                        #expect(x == y, "byte \(offset) = \(value), \(script)")
                    }
                case (.failure, .failure): refused += 1
                default: Issue.record("byte \(offset) = \(value): ours \(own), libdbus \(libdbus)")
                }
            }
        }
        #expect(refused > 0 && read > 0)
    }

    /// The whole server path with flowd's own messages: the test's
    /// connection hands each call to the object server as
    /// `Message(received:)` of its bytes, as flowd's own reader will.
    @Test("routing, authorization and replies are the same with received messages")
    func serverPath() throws {
        let fixture = try BusFixture()
        try fixture.exportService()
        let objects = fixture.objects
        let seen = Locked<[String]>([])
        try fixture.onLoop { () throws(DBus.DBusError) in
            try objects.value.export(
                TestService(), at: "/org/flowd/Guarded", interfaces: [TestService.table()],
                authorize: { _, call in
                    seen.withLock { $0.append("\(call.sender as Any) \(call.member)") }
                    return call.member == "Add" ? .allow : .refuse(.accessDenied("only Add"))
                })
        }
        let test: (ObjectPath, InterfaceName?) = (TestService.path, TestService.interface)
        let bare: (ObjectPath, InterfaceName?) = (TestService.path, nil)
        let properties: (ObjectPath, InterfaceName?) = (TestService.path, .properties)
        let guarded: (ObjectPath, InterfaceName?) = ("/org/flowd/Guarded", TestService.interface)
        let name = DBusValue.string(TestService.interface.rawValue)
        let calls: [((ObjectPath, InterfaceName?), MemberName, [DBusValue])] = [
            (test, "Add", [.int32(2), .int32(3)]), (test, "Add", [.int32(2)]), (test, "Add", [.string("x"), .int32(1)]),
            (test, "Echo", [.vardict(["a": .strings(["b"]), "c": .variant(.uint32(1))])]), (test, "Store", [.strings([])]),
            (test, "Store", [.dictionary(keyType: .string, valueType: .variant, [
                DBusDictEntry(key: "k", value: .variant("1")), DBusDictEntry(key: "k", value: .variant("2")),
            ])]),
            (test, "Fail", [.string("refused here")]), (test, "Crash", []), (test, "BadReply", []), (test, "Nope", []),
            ((TestService.path, "org.flowd.Other"), "Add", []), (("/org/flowd/Missing", TestService.interface), "Add", []),
            (bare, "Add", [.int32(1), .int32(1)]), (bare, "Ping", []), (bare, "Introspect", []), (bare, "Nope", []),
            ((TestService.path, .peer), "Ping", []), ((TestService.path, .introspectable), "Introspect", []),
            (properties, "Get", [name, .string("Name")]), (properties, "GetAll", [.string("")]),
            (properties, "Set", [name, .string("Name"), .variant("initial")]), (properties, "Set", [name, .string("Count"), .variant(.uint32(1))]),
            (properties, "Get", [.string("x")]), (properties, "Get", [name, .string("Secret")]),
            (guarded, "Add", [.int32(4), .int32(4)]), (guarded, "Echo", [.vardict([:])]),
        ]
        func outcomes() -> [String] {
            calls.map { target, member, arguments in
                do {
                    let call = Message.methodCall(destination: fixture.serverName, path: target.0, interface: target.1, member: member)
                    try call.append(contentsOf: arguments)
                    return "\(try fixture.client.call(call, timeout: .seconds(20)).readArguments())"
                } catch {
                    return "\(error)"
                }
            }
        }
        let viaLibDBus = outcomes()
        let shim = ReceivedPath(server: objects)
        // The loop's closures hold the connection, not the fixture: the loop
        // thread releases a job after the caller resumed, and the fixture's
        // last release there would stop the loop from its own thread.
        let server = fixture.server
        try fixture.onLoop { server.core.methodHandler = shim }
        let viaOwn = outcomes()
        #expect(shim.handled.withLock { $0 } >= calls.count - 2, "the calls went through Message(received:)")
        for (index, (own, libdbus)) in zip(viaOwn, viaLibDBus).enumerated() {
            #expect(own == libdbus, "call \(index): \(calls[index].1)")
        }
        #expect(viaOwn[0].hasSuffix("int32(5)]") && viaOwn.contains { $0.contains("only Add") })
        let callers = seen.withLock { $0 }
        #expect(callers.count == 4 && Set(callers).count == 2, "the authorizer saw the same sender both ways: \(callers)")
        try fixture.onLoop { server.core.methodHandler = objects.value }
    }
}

/// Hands each method call to the object server as flowd's own reader
/// will: the call's bytes framed and read by `Message(received:)`.
final class ReceivedPath: MethodCallHandler, @unchecked Sendable {
    let server: LoopBound<ObjectServer>
    let handled = Locked(0)

    init(server: LoopBound<ObjectServer>) {
        self.server = server
    }

    func handleMethodCall(_ message: Message) -> Bool {
        guard let received = try? ReceivedMessageTests.received(message.marshaled()) else { return false }
        handled.withLock { $0 += 1 }
        return server.value.handleMethodCall(received)
    }
}

/// flowd's own signature check says "valid" exactly when libdbus does
/// (``Signature/validate(_:)`` asks libdbus only about the others).
@Suite("Signatures are judged as libdbus judges them")
struct SignatureCheckTests {
    static func agree(_ text: String) -> Bool {
        Signature.isValid(text) == (LibDBus.validateSignature(text) == nil)
    }

    @Test("every signature of up to five codes from a{}()svyih, and each single byte")
    func exhaustive() {
        let alphabet: [Character] = ["a", "{", "}", "(", ")", "s", "v", "y", "i", "h"]
        var current = [""]
        var disagreements: [String] = []
        var valid = 0
        for _ in 0..<5 {
            var next: [String] = []
            for prefix in current {
                for code in alphabet {
                    let text = prefix + String(code)
                    if !Self.agree(text) { disagreements.append(text) }
                    if Signature.isValid(text) { valid += 1 }
                    next.append(text)
                }
            }
            current = next
        }
        for byte in UInt8(1)...UInt8(255) {
            let text = String(decoding: [byte], as: UTF8.self)
            if !Self.agree(text) { disagreements.append(text) }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(20))")
        #expect(valid > 1000)
    }

    @Test("the limits: length, arrays in a row, nested structs and dict entries")
    func limits() {
        var cases: [String] = [String(repeating: "y", count: 255), String(repeating: "y", count: 256), ""]
        for depth in [31, 32, 33] {
            cases.append(String(repeating: "a", count: depth) + "y")
            cases.append(String(repeating: "(", count: depth) + "y" + String(repeating: ")", count: depth))
            cases.append(String(repeating: "a{s", count: depth) + "y" + String(repeating: "}", count: depth))
            cases.append(String(repeating: "a(", count: depth) + "y" + String(repeating: ")", count: depth))
        }
        cases += ["a{vs}", "a{(y)s}", "a{sv}a{ss}", "{sv}", "a{s}", "a{svs}", "a", "aa", "a)", "(a)", "a{sa}", "()", "(y))", "a{sv", "ay}"]
        for text in cases {
            #expect(Self.agree(text), "\(text)")
        }
        #expect(Signature.isValid(String(repeating: "a", count: 32) + "y"))
        #expect(!Signature.isValid(String(repeating: "a", count: 33) + "y"))
    }
}
