import DBus
import Testing

/// ``WireEncoder`` writes the bytes libdbus' iterators write, and what
/// libdbus would refuse it refuses too (docs/performance.md).
@Suite("The wire encoder writes what libdbus writes")
struct WireEncoderTests {
    /// Every basic type, alignment after each size, and nested containers.
    static let arguments: [[DBusValue]] = [
        [], [.string("")], [.string("héllo")], [.bool(true)], [.bool(false)], [.byte(7), .uint32(1)],
        [.byte(1), .int16(-2), .uint16(3), .int32(-4), .uint32(5), .int64(-6), .uint64(7), .double(0.125)],
        [.byte(1), .double(2.5)], [.objectPath("/org/a"), .signature("a{sv}")],
        [.strings([])], [.strings(["a", "bc"])], [.byte(1), .strings([])],
        [.byte(1), .vardict([:])], [.vardict(["k": .uint32(1), "l": .strings(["x"]), "m": .double(1.5)])],
        [.stringDictionary(["a": "b", "c": ""])], [.structure([.byte(1), .structure([.uint64(9)])])],
        [.array(elementType: "(sss)", [.structure([.string("a"), .string("b"), .string("c")])])],
        [.array(elementType: "y", [.byte(1), .byte(2)]), .byte(3), .array(elementType: "x", [.int64(1)])],
        [.variant(.variant(.structure([.bool(true), .vardict(["n": .int16(1)])])))],
        [.vardicts([["a": .bool(true)], [:], ["b": .array(elementType: "d", [])]])],
        [.dictionary(keyType: "u", valueType: "(sv)", [DBusDictEntry(key: .uint32(1), value: .structure([.string("x"), .variant(.byte(2))]))])],
    ]

    /// The body of a message libdbus built, and of one this encoder built.
    static func bodies(_ values: [DBusValue]) throws -> (libdbus: [UInt8], encoder: [UInt8], read: [DBusValue]) {
        let signature = Signature(trusted: values.map(\.signature.rawValue).joined())
        let built = Message.signal(path: "/a", interface: "org.example.I", member: "S")
        try built.append(contentsOf: values)
        let wire = built.marshaled()
        let bodyLength = Int(wire[4]) | Int(wire[5]) << 8 | Int(wire[6]) << 16 | Int(wire[7]) << 24
        var encoder = WireEncoder()
        for value in values { try encoder.value(value) }
        let prebuilt = try Message.prebuiltSignal(
            path: "/a", interface: "org.example.I", member: "S", destination: nil, signature: signature, body: encoder)
        return (Array(wire.suffix(bodyLength)), encoder.bytes, try prebuilt.readArguments())
    }

    @Test("the same bytes as libdbus, and they read back as the values", arguments: arguments)
    func sameBytes(_ values: [DBusValue]) throws {
        let (libdbus, encoder, read) = try Self.bodies(values)
        #expect(encoder == libdbus)
        #expect(read == values)
    }

    @Test("a{sv} entries written through a writer read back as the dictionary")
    func vardictWriter() throws {
        let read = try DBusValue.decoding(signature: "a{sv}as") { (encoder) throws(DBusError) in
            try encoder.vardict { (d) throws(DBusError) in
                d.string(VardictKey("s", "s"), "text")
                d.bool(VardictKey("b", "b"), true)
                d.uint32(VardictKey("u", "u"), 42)
                d.double(VardictKey("d", "d"), -0.5)
                d.entry(VardictKey("as", "as"))
                d.strings(["x", "y"])
                d.entry(VardictKey("ss", "a{ss}"))
                d.stringDictionary(["k": "v"])
                d.entry(VardictKey("v"))
                try d.variant(.int64(-7))
                d.entry(VardictKey("list", "a(ss)"))
                let list = d.arrayStart(elementAlignment: 8)
                d.align(8)
                d.string("id")
                d.string("label")
                d.arrayEnd(list)
            }
            try encoder.strings(["after"])
        }
        #expect(read.count == 2)
        #expect(read.first?.vardict == [
                "s": .string("text"), "b": .bool(true), "u": .uint32(42), "d": .double(-0.5), "as": .strings(["x", "y"]),
                "ss": .stringDictionary(["k": "v"]), "v": .int64(-7),
                "list": .array(elementType: "(ss)", [.structure([.string("id"), .string("label")])]),
        ])
        #expect(read.last == .strings(["after"]))
    }

    @Test("an entry's head is the key and the signature libdbus writes, after any padding, for keys up to 32 bytes")
    func entryHeads() throws {
        for length in [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32] {
            let key = String(repeating: "k", count: length)
            for offset in 0..<8 {
                var encoder = WireEncoder()
                for n in 0..<offset { encoder.byte(UInt8(n)) }
                try encoder.write { (w) throws(DBusError) in
                    let array = w.arrayStart(elementAlignment: 8)
                    w.entry(Self.key(length))
                    w.byte(9)
                    w.arrayEnd(array)
                }
                let libdbus = try Self.bodies(
                    (0..<offset).map { .byte(UInt8($0)) } + [.dictionary(
                        keyType: .string, valueType: .variant,
                        [DBusDictEntry(key: .string(key), value: .variant(.byte(9)))])]).libdbus
                #expect(encoder.bytes == libdbus, "key of \(length) bytes after \(offset)")
            }
        }
    }

    /// A key of `length` bytes with values of type `y` (a ``VardictKey`` is made from literals).
    static func key(_ length: Int) -> VardictKey {
        switch length {
        case 1: VardictKey("k", "y")
        case 2: VardictKey("kk", "y")
        case 3: VardictKey("kkk", "y")
        case 4: VardictKey("kkkk", "y")
        case 5: VardictKey("kkkkk", "y")
        case 7: VardictKey("kkkkkkk", "y")
        case 8: VardictKey("kkkkkkkk", "y")
        case 9: VardictKey("kkkkkkkkk", "y")
        case 15: VardictKey("kkkkkkkkkkkkkkk", "y")
        case 16: VardictKey("kkkkkkkkkkkkkkkk", "y")
        case 17: VardictKey("kkkkkkkkkkkkkkkkk", "y")
        case 31: VardictKey("kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk", "y")
        default: VardictKey("kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk", "y")
        }
    }

    @Test("a writer's bytes are the encoder's own: a copy taken before it is left as it was")
    func writerLeavesCopies() throws {
        var first = WireEncoder()
        first.string("shared")
        let before = first
        try first.write { (w) throws(DBusError) in
            w.uint32(7)
            w.string(String(repeating: "y", count: 3_000))
        }
        #expect(before.bytes == [6, 0, 0, 0] + Array("shared".utf8) + [0])
        #expect(first.count == 12 + 4 + 4 + 3_001)
        first.byte(1)
        #expect(first.bytes.last == 1)
    }

    @Test("what libdbus refuses is refused: a NUL in a string, a body that does not match its signature")
    func refusals() throws {
        var nul = WireEncoder()
        nul.string("a\u{0}b")
        #expect(throws: DBusError.self) {
            try Message.prebuiltSignal(path: "/a", interface: "org.example.I", member: "S", destination: nil, signature: "s", body: nul)
        }
        var short = WireEncoder()
        short.byte(1)
        #expect(throws: DBusError.self) {
            try Message.prebuiltSignal(path: "/a", interface: "org.example.I", member: "S", destination: nil, signature: "u", body: short)
        }
        var mismatched = WireEncoder()
        #expect(throws: DBusError.self) { try mismatched.value(.array(elementType: "s", [.uint32(1)])) }
    }

    @Test("a prebuilt signal carries its header: path, interface, member, destination, a serial")
    func header() throws {
        var body = WireEncoder()
        body.string("x")
        let message = try Message.prebuiltSignal(
            path: "/org/a", interface: "org.example.I", member: "Changed", destination: ":1.42", signature: "s", body: body)
        #expect(message.type == .signal)
        #expect(message.path == "/org/a")
        #expect(message.interface == "org.example.I")
        #expect(message.member == "Changed")
        #expect(message.destination == ":1.42")
        #expect(message.signature == "s")
        #expect(message.serial >= 0x8000_0000)
    }

    @Test("a NUL is found at every place of strings of every length up to three words, and only a NUL")
    func nulAtEveryPlace() throws {
        for length in 0...24 {
            var clean = WireEncoder()
            clean.string(String(repeating: "\u{1}", count: length) + String(repeating: "\u{80}", count: length))
            #expect(clean.invalidity == nil, "length \(length)")
            for place in 0..<length {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                bytes[place] = 0
                var encoder = WireEncoder()
                encoder.string(String(decoding: bytes, as: UTF8.self))
                #expect(encoder.invalidity != nil, "length \(length), NUL at \(place)")
            }
        }
    }

    @Test("a copy of an encoder is a value: writing one leaves the other as it was, past any capacity")
    func copiesAreValues() throws {
        var first = WireEncoder()
        first.string("shared")
        var second = first
        second.uint32(7)
        first.byte(1)
        #expect(first.bytes == [6, 0, 0, 0] + Array("shared".utf8) + [0, 1])
        #expect(second.bytes == [6, 0, 0, 0] + Array("shared".utf8) + [0, 0, 7, 0, 0, 0])
        // Far beyond the first reservation, in an array whose length is patched in at the end.
        let long = String(repeating: "x", count: 5_000)
        let read = try DBusValue.decoding(signature: "as") { (encoder) throws(DBusError) in
            try encoder.strings(Array(repeating: long, count: 3))
        }
        #expect(read == [.strings(Array(repeating: long, count: 3))])
    }
}
