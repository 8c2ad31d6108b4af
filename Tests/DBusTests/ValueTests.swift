import CDBus
@testable import DBus
import Glibc
import Testing
import TestSupport

/// Writes `values` into a real libdbus message and reads them back.
func roundTrip(_ values: [DBusValue]) throws -> [DBusValue] {
    let message = Message.methodCall(destination: nil, path: "/t", interface: "org.flowd.Test", member: "M")
    try message.append(contentsOf: values)
    return try message.readArguments()
}

@Suite("Values through a real Message")
struct ValueTests {
    static let basics: [DBusValue] = [
        .byte(0), .byte(255), .bool(true), .bool(false), .int16(-32768), .uint16(65535),
        .int32(-7), .uint32(4_000_000_000), .int64(.min), .uint64(.max), .double(-2.5), .double(.infinity),
        .string(""), .string("grüße 🌍"), .objectPath("/org/flowd"), .signature("a{sv}"), .signature(""),
    ]

    @Test("every basic type round-trips", arguments: basics)
    func basic(_ value: DBusValue) throws {
        #expect(try roundTrip([value]) == [value])
        #expect(try roundTrip([value]).first?.signature == value.signature)
    }

    @Test("containers round-trip, nested, and keep the element type when empty")
    func containers() throws {
        let values: [DBusValue] = [
            .array(elementType: .string, []),
            .array(elementType: "a{sv}", []),
            .strings(["a", "b"]),
            .array(elementType: .byte, [.byte(1), .byte(2), .byte(3)]),
            .vardict(["name": .string("Ada"), "age": .uint32(36), "tags": .strings(["x"])]),
            .vardicts([["id": .string("a")], [:]]),
            .stringDictionary(["b": "2", "a": "1"]),
            .structure([.string("s"), .objectPath("/p"), .int32(1)]),
            .array(elementType: "(sss)", [.structure(["a", "b", "c"])]),
            .variant(.variant(.structure([.bool(true), .double(1)]))),
            .dictionary(keyType: .uint32, valueType: "as", [DBusDictEntry(key: .uint32(7), value: .strings([]))]),
            .dictionary(keyType: .objectPath, valueType: "a{sv}",
                        [DBusDictEntry(key: .objectPath("/a"), value: .vardict(["k": .variant(.int64(1))]))]),
        ]
        let back = try roundTrip(values)
        #expect(back == values)
        #expect(back.map(\.signature.rawValue) == [
            "as", "aa{sv}", "as", "ay", "a{sv}", "aa{sv}", "a{ss}", "(soi)", "a(sss)", "v", "a{uas}", "a{oa{sv}}",
        ])
    }

    @Test("typed reads and writes, with the conversions the daemon uses")
    func typed() throws {
        let message = Message.methodCall(destination: nil, path: "/t", interface: "org.flowd.Test", member: "M")
        let answers: [String: DBusValue] = ["name": "Ada", "ok": true, "n": .int64(3)]
        let steps: [[String: DBusValue]] = [["id": "a"], ["id": "b", "index": .uint32(2)]]
        let sessions = [DBusStruct("0123", "consultation", ObjectPath("/org/flowd/Flow1/session/0123"), "editing")]
        let review = [DBusStruct("field", "Label", "value")]
        try message.append(typed: answers, steps, ["f": "bad"] as [String: String], sessions, review, UInt32(9), [UInt8](arrayLiteral: 1, 2))
        #expect(message.signature == "a{sv}aa{sv}a{ss}a(ssos)a(sss)uay")

        var reader = message.arguments()
        #expect(try reader.next([String: DBusValue].self) == answers)
        #expect(try reader.next([[String: DBusValue]].self) == steps)
        #expect(try reader.next([String: String].self) == ["f": "bad"])
        let readSessions = try reader.next([DBusStruct<String, String, ObjectPath, String>].self)
        #expect(readSessions.count == 1)
        #expect(readSessions.first?.fields.2 == "/org/flowd/Flow1/session/0123")
        #expect(readSessions.first?.fields.3 == "editing")
        let readReview = try reader.next([DBusStruct<String, String, String>].self)
        #expect(readReview.first?.fields.1 == "Label")
        #expect(try reader.next(UInt32.self) == 9)
        #expect(try reader.next([UInt8].self) == [1, 2])
        #expect(reader.isAtEnd)

        // The same through DBusValue conversions.
        let values = try message.readArguments()
        #expect(values[0].vardict == answers)
        #expect(values[1].vardicts == steps)
        #expect(values[2].stringDictionary == ["f": "bad"])
        #expect(values[3].decode([DBusStruct<String, String, ObjectPath, String>].self)?.first?.fields.0 == "0123")
        #expect(values[4].decode([DBusStruct<String, String, String>].self)?.first?.fields.2 == "value")
        #expect(values[5].uint32 == 9)
        #expect(values[5].integer == 9)
        #expect(values[0].strings == nil)
        #expect(values[3].decode([DBusStruct<String, String, String>].self) == nil)
    }

    @Test("a typed read of the wrong type throws InvalidArgs naming both types")
    func mismatch() throws {
        let message = Message.methodCall(destination: nil, path: "/t", interface: "org.flowd.Test", member: "M")
        try message.append(.strings(["a"]), .uint32(1))
        var reader = message.arguments()
        let error = #expect(throws: DBusError.self) { try reader.next([String: DBusValue].self) }
        #expect(error?.name == .invalidArgs)
        #expect(error?.message == "argument 1: expected 'a{sv}', got 'as'")
        _ = try reader.next([String].self)
        #expect(throws: DBusError.self) { try reader.next(String.self) }
        #expect(try reader.next(UInt32.self) == 1)
        let missing = #expect(throws: DBusError.self) { try reader.next(String.self) }
        #expect(missing?.message.contains("got nothing") == true)
    }

    @Test("invalid values are refused before anything reaches libdbus")
    func invalidValues() throws {
        let bad: [DBusValue] = [
            .string("nul\0inside"),
            .array(elementType: .string, [.string("a"), .uint32(1)]),
            .array(elementType: "ss", []),
            .dictionary(keyType: .variant, valueType: .string, []),
            .dictionary(keyType: .string, valueType: .string, [DBusDictEntry(key: "a", value: .bool(true))]),
            .structure([]),
        ]
        for value in bad {
            #expect(throws: DBusError.self) { try roundTrip([value]) }
        }
    }

    @Test("nesting is bounded when writing and when reading")
    func depth() throws {
        var value: DBusValue = .int32(1)
        for _ in 0..<MessageReader.maximumDepth { value = .variant(value) }
        #expect(try roundTrip([value]) == [value], "64 levels are fine")
        let tooDeep: DBusValue = .variant(value)
        let error = #expect(throws: DBusError.self) { try roundTrip([tooDeep]) }
        #expect(error?.message.contains("nested deeper") == true)

        // A message built with raw libdbus, deeper than the reader follows.
        let message = Message.methodCall(destination: nil, path: "/t", interface: "org.flowd.Test", member: "M")
        try appendRawNestedVariants(to: message, depth: 100)
        let readError = #expect(throws: DBusError.self) { try message.readArguments() }
        #expect(readError?.name == .invalidArgs)
    }

    @Test("unix fds are duplicated into and out of a message")
    func unixFD() throws {
        let (reader, writer) = try FileDescriptor.pipe()
        let original = try UnixFD(duplicating: writer)
        let back = try roundTrip([.unixFD(original)])
        guard case .unixFD(let received)? = back.first else {
            Issue.record("expected a unix fd, got \(back)")
            return
        }
        #expect(received.fileDescriptor != original.fileDescriptor)
        var byte: UInt8 = 42
        #expect(write(received.fileDescriptor, &byte, 1) == 1)
        var got: UInt8 = 0
        #expect(read(reader.rawValue, &got, 1) == 1)
        #expect(got == 42)
    }

    @Test("message header fields")
    func header() throws {
        let call = Message.methodCall(destination: "org.flowd.Flow1", path: "/org/flowd/Flow1", interface: "org.flowd.Flow1.Manager", member: "ListFlows")
        #expect(call.type == .methodCall)
        #expect(call.destination == "org.flowd.Flow1")
        #expect(call.path == "/org/flowd/Flow1")
        #expect(call.interface == "org.flowd.Flow1.Manager")
        #expect(call.member == "ListFlows")
        #expect(call.signature == "")
        #expect(!call.noReplyExpected)
        call.noReplyExpected = true
        #expect(call.noReplyExpected)
        #expect(!call.isSignal(interface: "org.flowd.Flow1.Manager", member: "ListFlows"))

        dbus_message_set_serial(call.raw, 7)  // as if sent; replies need a serial
        let reply = call.makeReturn()
        #expect(reply.replySerial == 7)
        #expect(reply.type == .methodReturn)
        #expect(reply.error == nil)
        let error = call.makeError(DBusError("org.flowd.Flow1.Error.NotFound", "no flow \"x\""))
        #expect(error.type == .error)
        #expect(error.error == DBusError("org.flowd.Flow1.Error.NotFound", "no flow \"x\""))

        let signal = Message.signal(path: "/org/flowd/Flow1", interface: "org.flowd.Flow1.Manager", member: "SessionNew")
        signal.destination = ":1.5"
        #expect(signal.type == .signal)
        #expect(signal.destination == ":1.5")
        #expect(signal.isSignal(interface: "org.flowd.Flow1.Manager", member: "SessionNew"))
    }
}

/// Nests `depth` variants with libdbus directly, bypassing the writer's bound.
private func appendRawNestedVariants(to message: Message, depth: Int) throws {
    let iters = UnsafeMutablePointer<DBusMessageIter>.allocate(capacity: depth + 1)
    iters.initialize(repeating: DBusMessageIter(), count: depth + 1)
    defer { iters.deallocate() }
    dbus_message_iter_init_append(message.raw, iters)
    for level in 0..<depth {
        let contained = level == depth - 1 ? "i" : "v"
        try #require(dbus_message_iter_open_container(iters + level, Int32(UInt8(ascii: "v")), contained, iters + level + 1) != 0)
    }
    var value: Int32 = 5
    _ = dbus_message_iter_append_basic(iters + depth, Int32(UInt8(ascii: "i")), &value)
    for level in stride(from: depth - 1, through: 0, by: -1) {
        _ = dbus_message_iter_close_container(iters + level, iters + level + 1)
    }
}
