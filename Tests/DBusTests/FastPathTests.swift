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
}
