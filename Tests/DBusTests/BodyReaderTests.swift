import DBus
import Testing
import TestSupport

/// ``BodyReader`` reads a received message's arguments from its bytes as
/// libdbus reads them, and refuses what libdbus' loader refuses.
@Suite("The body reader reads arguments as libdbus does")
struct BodyReaderTests {
    /// `values` in a message libdbus built, as bytes.
    static func message(_ values: [DBusValue]) throws -> [UInt8] {
        let message = Message.signal(path: "/a", interface: "org.example.I", member: "S")
        try message.append(contentsOf: values)
        return message.marshaled()
    }

    /// What the framer and the body reader make of `bytes`.
    static func read(_ bytes: [UInt8]) throws -> [DBusValue] {
        var framer = MessageFramer()
        framer.append(bytes)
        guard let message = try framer.next() else { throw DBusError.failed("not a whole message") }
        return try Message(received: message).readArguments()
    }

    /// What libdbus makes of `bytes` (its loader, then flowd's reader over its iterators).
    static func libdbus(_ bytes: [UInt8]) throws -> [DBusValue] {
        try Message.demarshaling(bytes).readArguments()
    }

    @Test("the values libdbus reads", arguments: WireEncoderTests.arguments)
    func sameValues(_ values: [DBusValue]) throws {
        let bytes = try Self.message(values)
        #expect(try Self.read(bytes) == values)
        #expect(try Self.read(bytes) == (try Self.libdbus(bytes)))
    }

    /// A big-endian body, written by hand: libdbus converts it, the reader
    /// reads it in place; both see the same values.
    @Test("a big-endian body reads as libdbus reads it")
    func bigEndian() throws {
        var raw = RawMessage()
        raw.bigEndian = true
        raw.fields.append((8, "g", .signature("qasx(yd)")))
        var body: [UInt8] = [0x01, 0x02, 0, 0]  // q 258, padding
        body += raw.uint32(15) + raw.uint32(1) + Array("a".utf8) + [0, 0, 0] + raw.uint32(2) + Array("bc".utf8) + [0]
        body += [0]  // to 8 for the x
        body += [0, 0, 0, 0, 0, 0, 0x01, 0x00]  // x 256
        body += [9, 0, 0, 0, 0, 0, 0, 0] + [0x3F, 0xF8, 0, 0, 0, 0, 0, 0]  // (y 9, d 1.5)
        raw.body = body
        let expected: [DBusValue] = [
            .uint16(258), .strings(["a", "bc"]), .int64(256), .structure([.byte(9), .double(1.5)]),
        ]
        #expect(try Self.libdbus(raw.bytes) == expected)
        #expect(try Self.read(raw.bytes) == expected)
    }

    /// Every single-byte change of the body of a few messages: the reader
    /// accepts exactly what libdbus accepts, and reads the same values.
    @Test("single-byte corruptions of a body: refused or read as libdbus does")
    func corruptions() throws {
        let samples: [[DBusValue]] = [
            [.vardict(["k": .uint32(1), "l": .strings(["x"]), "m": .double(1.5)]), .bool(true)],
            [.objectPath("/org/a"), .signature("a{sv}"), .structure([.byte(1), .structure([.uint64(9)])])],
            [.variant(.variant(.structure([.bool(true), .vardict(["n": .int16(1)])])))],
            [.stringDictionary(["a": "b", "c": ""]), .array(elementType: "y", [.byte(1), .byte(2)])],
        ]
        var refused = 0
        for values in samples {
            let bytes = try Self.message(values)
            var framer = MessageFramer()
            framer.append(bytes)
            let bodyOffset = try #require(try framer.next()).header.bodyOffset
            ReceivedMessages.eachCorruption(of: bytes, from: bodyOffset) { changed, offset, value in
                let ours = Result { try Self.read(changed) }
                let theirs = Result { try Self.libdbus(changed) }
                switch (ours, theirs) {
                case (.success(let a), .success(let b)):
                    // A corrupted double may be a NaN, never equal to itself: compare the text.
                    #expect(a == b || "\(a)" == "\(b)", "byte \(offset) = \(value)")
                case (.failure, .failure): refused += 1
                default: Issue.record("byte \(offset) = \(value): ours \(ours), libdbus \(theirs)")
                }
            }
        }
        #expect(refused > 0)
    }

    @Test("a file descriptor index past the count is refused")
    func fileDescriptorIndex() throws {
        var raw = RawMessage()
        raw.fields += [(8, "g", .signature("h")), (9, "u", .uint32(0))]
        raw.body = raw.uint32(0)
        #expect(throws: DBusError.self) { _ = try Self.read(raw.bytes) }
    }

    @Test("bytes after the last argument are refused")
    func trailingBytes() throws {
        var raw = RawMessage()
        raw.fields.append((8, "g", .signature("u")))
        raw.body = raw.uint32(1) + [0, 0, 0, 0]
        #expect(throws: DBusError.self) { _ = try Self.read(raw.bytes) }
        #expect(throws: DBusError.self) { _ = try Self.libdbus(raw.bytes) }
    }
}
