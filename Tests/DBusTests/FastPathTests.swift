import DBus
import Testing

/// The allocation-free shortcuts (docs/performance.md) give the answers of
/// the plain definitions they replace. No timing here.
@Suite("Fast paths agree with the definitions")
struct DBusFastPathTests {
    static let values: [DBusValue] = [
        .string("x"), .bool(true), .uint32(1), .int64(-1), .double(0.5), .byte(1), .objectPath("/a"),
        .variant(.string("x")), .variant(.strings(["a"])),
        .strings([]), .strings(["a", "b"]), .array(elementType: "(sss)", [.structure([.string("a"), .string("b"), .string("c")])]),
        .vardict([:]), .vardict(["k": .uint32(1), "l": .strings(["x"])]), .stringDictionary(["a": "b"]),
        .structure([.string("a"), .uint32(2)]), .structure([.structure([.bool(false)]), .vardict([:])]),
        .vardicts([["a": .bool(true)]]), .array(elementType: "ay", [.array(elementType: "y", [.byte(1)])]),
        .dictionary(keyType: "u", valueType: "(sv)", []),
    ]
    /// Valid and invalid ones alike (`trusted:` skips the check on purpose).
    static let signatures: [Signature] = [
        "s", "b", "u", "x", "d", "y", "o", "v", "as", "a(sss)", "a{sv}", "a{ss}", "(su)", "((b)a{sv})", "aa{sv}", "aay",
        "a{u(sv)}", "a", "(", "(s", "a{s", "ss", "a(ss)", "a{sv}s", "(su)x", "", "ai", "a{uv}",
    ].map { Signature(trusted: $0) }

    @Test("hasType is true exactly when the value's signature is the one asked for")
    func hasTypeMatchesSignature() {
        for value in Self.values {
            for signature in Self.signatures {
                #expect(value.hasType(signature) == (value.signature == signature), "\(value.signature) vs \(signature)")
            }
            #expect(value.hasType(value.signature))
        }
    }

    @Test("path components split on slashes", arguments: [
        ("/", [String]()), ("/org", ["org"]), ("/org/flowd/Flow1/session/0123abcd", ["org", "flowd", "Flow1", "session", "0123abcd"]),
    ])
    func components(_ path: String, _ expected: [String]) throws {
        let p = try ObjectPath(path)
        #expect(p.components.map(String.init) == expected)
        #expect(p.lastComponent.map(String.init) == expected.last)
    }

    @Test("ancestors")
    func ancestors() {
        let prefix = ObjectPath(stringLiteral: "/org/flowd/Flow1/session")
        #expect(prefix.isAncestor(of: ObjectPath(stringLiteral: "/org/flowd/Flow1/session/abc")))
        #expect(!prefix.isAncestor(of: ObjectPath(stringLiteral: "/org/flowd/Flow1/sessions/abc")))
        #expect(!prefix.isAncestor(of: prefix))
        #expect(!prefix.isAncestor(of: ObjectPath(stringLiteral: "/org/flowd/Flow1")))
        #expect(!prefix.isAncestor(of: ObjectPath(stringLiteral: "/org/flowd/Flow2/session/abc")))
        #expect(ObjectPath.root.isAncestor(of: prefix))
        #expect(!ObjectPath.root.isAncestor(of: .root))
    }

    static let vardicts: [[String: DBusValue]] = [
        [:], ["k": .uint32(1)], ["a": .string("x"), "b": .strings(["1", "2"]), "c": .vardict(["n": .bool(true)])],
        ["v": .variant(.int64(-3)), "s": .structure([.string("a"), .uint32(2)]), "d": .double(0.25), "e": .strings([])],
    ]

    static func message(_ arguments: DBusValue...) throws -> Message {
        let message = Message.methodCall(destination: nil, path: "/a", interface: nil, member: "M")
        try message.append(contentsOf: arguments)
        return message
    }

    @Test("a{sv} and a{ss} read by their shortcuts as by the generic reader")
    func dictionaryReadsAgree() throws {
        for dict in Self.vardicts {
            let m = try Self.message(.vardict(dict))
            var typed = m.arguments()
            var generic = m.arguments()
            #expect(try typed.next([String: DBusValue].self) == dict)
            #expect(try generic.nextValue().vardict == dict)
            #expect(typed.isAtEnd)
        }
        // A key given twice is refused, by the shortcuts as by the generic reader.
        let twice = try Self.message(.dictionary(keyType: .string, valueType: .variant, [
            DBusDictEntry(key: .string("k"), value: .variant(.uint32(1))),
            DBusDictEntry(key: .string("k"), value: .variant(.uint32(2))),
        ]), .dictionary(keyType: .string, valueType: .string, [
            DBusDictEntry(key: .string("a"), value: .string("1")), DBusDictEntry(key: .string("a"), value: .string("2")),
        ]))
        var reader = twice.arguments()
        #expect(throws: DBusError.invalidArgs(#"the key "k" appears twice in a dictionary"#)) {
            try reader.next([String: DBusValue].self)
        }
        var second = twice.arguments()
        _ = try second.nextValue()
        #expect(throws: DBusError.invalidArgs(#"the key "a" appears twice in a dictionary"#)) {
            try second.next([String: String].self)
        }
        let twiceNumbers = try Self.message(.dictionary(keyType: .uint32, valueType: .string, [
            DBusDictEntry(key: .uint32(7), value: .string("x")), DBusDictEntry(key: .uint32(7), value: .string("y")),
        ]))
        var generic = twiceNumbers.arguments()
        #expect(throws: DBusError.invalidArgs(#"the key "7" appears twice in a dictionary"#)) {
            try generic.next([UInt32: String].self)
        }
        for strings in [[:], ["a": "b"], ["x": "", "": "y", "ünï": "日本"]] as [[String: String]] {
            var r = try Self.message(.stringDictionary(strings)).arguments()
            #expect(try r.next([String: String].self) == strings)
        }
        // Nested in arrays and with the wrong type, as before.
        var nested = try Self.message(.vardicts(Self.vardicts)).arguments()
        #expect(try nested.next([[String: DBusValue]].self) == Self.vardicts)
        var wrong = try Self.message(.stringDictionary(["a": "b"])).arguments()
        #expect(throws: DBusError.self) { try wrong.next([String: DBusValue].self) }
    }

    @Test("a{ss} written by its shortcut reads back, typed and as a value")
    func stringDictionaryWrite() throws {
        for strings in [[:], ["a": "b"], ["x": "", "": "y", "ünï": "日本"]] as [[String: String]] {
            let m = Message.methodCall(destination: nil, path: "/a", interface: nil, member: "M")
            var writer = m.appender()
            try writer.append(strings)
            #expect(m.signature == "a{ss}")
            var r = m.arguments()
            #expect(try r.nextValue().stringDictionary == strings)
        }
        let m = Message.methodCall(destination: nil, path: "/a", interface: nil, member: "M")
        var writer = m.appender()
        #expect(throws: DBusError.self) { try writer.append(["a": "nul\u{0}inside"]) }
    }

    @Test("empty typed containers keep their own type (an empty array casts to any array type)")
    func emptyTypedContainers() throws {
        let m = Message.methodCall(destination: nil, path: "/a", interface: nil, member: "M")
        var writer = m.appender()
        try writer.append([String: DBusValue]())
        try writer.append([String]())
        try writer.append([[String: DBusValue]]())
        try writer.append([UInt8]())
        try writer.append([String: String]())
        #expect(m.signature == "a{sv}asaa{sv}aya{ss}")
    }
}
