import CDBus
@testable import DBus
import Testing
import TestSupport

/// flowd's own name checks (``NameRules``, each name type's `isValid` on
/// bytes) say "valid" exactly when libdbus' validators do, on the same
/// bytes; the framer's verdict on headers with corrupted names is libdbus'
/// loader's, whether or not the framer holds the same field's last name.
@Suite("Names are judged as libdbus judges them")
struct NameCheckTests {
    /// The kinds of name, each with libdbus' validator on a C string.
    enum Kind: CaseIterable, CustomStringConvertible {
        case path, interface, member, errorName, busName

        var description: String {
            switch self {
            case .path: "object path"
            case .interface: "interface name"
            case .member: "member name"
            case .errorName: "error name"
            case .busName: "bus name"
            }
        }

        /// flowd's check of `bytes`.
        func swift(_ bytes: [UInt8]) -> Bool {
            bytes.withUnsafeBytes { raw in
                switch self {
                case .path: ObjectPath.isValid(raw)
                case .interface: InterfaceName.isValid(raw)
                case .member: MemberName.isValid(raw)
                case .errorName: ErrorName.isValid(raw)
                case .busName: BusName.isValid(raw)
                }
            }
        }

        /// libdbus' verdict on `bytes` (no NUL inside), as a C string.
        func libdbus(_ bytes: [UInt8]) -> Bool {
            let terminated = (bytes + [0]).map { CChar(bitPattern: $0) }
            return terminated.withUnsafeBufferPointer { text in
                guard let pointer = text.baseAddress else { return false }
                switch self {
                case .path: return dbus_validate_path(pointer, nil) != 0
                case .interface: return dbus_validate_interface(pointer, nil) != 0
                case .member: return dbus_validate_member(pointer, nil) != 0
                case .errorName: return dbus_validate_error_name(pointer, nil) != 0
                case .busName: return dbus_validate_bus_name(pointer, nil) != 0
                }
            }
        }

        /// The error the typed name's `validate` gives for `text`.
        func validate(_ text: String) -> DBus.DBusError? {
            switch self {
            case .path: ObjectPath.validate(text)
            case .interface: InterfaceName.validate(text)
            case .member: MemberName.validate(text)
            case .errorName: ErrorName.validate(text)
            case .busName: BusName.validate(text)
            }
        }

        /// Valid names to corrupt.
        var seeds: [String] {
            switch self {
            case .path:
                ["/", "/a", "/org/flowd/Forms1", "/org/flowd/Flow1/session/0123456789abcdef", "/_/9/Z_z0", "/A/b/C/d"]
            case .interface, .errorName:
                ["a.b", "org.flowd.Flow1.Session", "org.freedesktop.DBus.Peer", "_a._b.c9", "A.B.C.D.E", "x1.y2", "org.flowd.Error.NotFound"]
            case .member:
                ["a", "Ping", "GetStep", "_x9", "Z", "SetAnswers"]
            case .busName:
                [":1.42", ":1.7", ":a-b.c_d", ":", ":x", ":-.0", "org.flowd.Forms1", "a.b", "-a.-b", "_x.y-z", "org.freedesktop.DBus"]
            }
        }
    }

    /// The names a seed gives: itself, every byte replaced by every other
    /// non-NUL byte (ASCII and not), every byte left out, a byte from
    /// `./:-_0aZ` and two non-ASCII ones put in at every place, every prefix.
    static func variants(of seed: String) -> [[UInt8]] {
        let bytes = Array(seed.utf8)
        var out: [[UInt8]] = [bytes]
        for index in bytes.indices {
            for value in UInt8(1)...UInt8(255) where value != bytes[index] {
                var changed = bytes
                changed[index] = value
                out.append(changed)
            }
            var shorter = bytes
            shorter.remove(at: index)
            out.append(shorter)
            out.append(Array(bytes[..<index]))
        }
        for index in 0...bytes.count {
            for value in Array("./:-_0aZ".utf8) + [0x80, 0xC3] {
                var longer = bytes
                longer.insert(value, at: index)
                out.append(longer)
            }
        }
        return out
    }

    static func disagreements(_ kind: Kind, _ names: [[UInt8]]) -> [String] {
        names.filter { kind.swift($0) != kind.libdbus($0) }.map { String(decoding: $0, as: UTF8.self) }
    }

    @Test("each seed's corruptions, deletions, insertions and prefixes", arguments: Kind.allCases)
    func corruptions(_ kind: Kind) {
        var checked = 0, valid = 0
        var disagreements: [String] = []
        for seed in kind.seeds {
            #expect(kind.swift(Array(seed.utf8)), "\(kind) \(seed)")
            let names = Self.variants(of: seed)
            disagreements += Self.disagreements(kind, names)
            checked += names.count
            valid += names.filter(kind.swift).count
        }
        #expect(disagreements.isEmpty, "\(kind): \(disagreements.prefix(20))")
        #expect(checked > 5_000 && valid > 100)
    }

    @Test("every name of up to five bytes from a Z _ 0 - . : /", arguments: Kind.allCases)
    func exhaustive(_ kind: Kind) {
        let alphabet = Array("aZ_0-.:/".utf8)
        var current: [[UInt8]] = [[]]
        var disagreements = Self.disagreements(kind, current)
        var valid = 0
        for _ in 0..<5 {
            current = current.flatMap { prefix in alphabet.map { prefix + [$0] } }
            disagreements += Self.disagreements(kind, current)
            valid += current.filter(kind.swift).count
        }
        #expect(disagreements.isEmpty, "\(kind): \(disagreements.prefix(20))")
        #expect(valid > 0)
    }

    @Test("the length limits: 255 bytes for every name but a path, which has none", arguments: Kind.allCases)
    func lengths(_ kind: Kind) {
        var names: [[UInt8]] = []
        for length in [1, 2, 254, 255, 256, 257, 1000] {
            // One long element, and elements of two bytes.
            let long: [UInt8]
            let short: [UInt8]
            switch kind {
            case .path:
                long = [UInt8(ascii: "/")] + Array(repeating: UInt8(ascii: "a"), count: max(0, length - 1))
                short = Array(String(repeating: "/a", count: (length + 1) / 2).utf8.prefix(length))
            case .member:
                long = Array(repeating: UInt8(ascii: "M"), count: length)
                short = long
            case .interface, .errorName:
                long = Array(("a." + String(repeating: "b", count: max(0, length - 2))).utf8.prefix(length))
                short = Array(String(repeating: "a.", count: length).utf8.prefix(length))
            case .busName:
                long = Array((":1." + String(repeating: "9", count: max(0, length - 3))).utf8.prefix(length))
                short = Array(String(repeating: "a.", count: length).utf8.prefix(length))
            }
            names += [long, short]
        }
        #expect(Self.disagreements(kind, names).isEmpty, "\(kind)")
        let limit: (Int) -> [UInt8] = { length in
            switch kind {
            case .path: [UInt8(ascii: "/")] + Array(repeating: UInt8(ascii: "a"), count: length - 1)
            case .member: Array(repeating: UInt8(ascii: "M"), count: length)
            case .interface, .errorName: Array(("a." + String(repeating: "b", count: length - 2)).utf8)
            case .busName: Array(("a." + String(repeating: "b", count: length - 2)).utf8)
            }
        }
        #expect(kind.swift(limit(255)))
        #expect(kind.swift(limit(256)) == (kind == .path))
    }

    @Test("empty elements, leading digits and dots, non-ASCII bytes", arguments: Kind.allCases)
    func edges(_ kind: Kind) {
        let texts = [
            "", ".", "..", "/", "//", "/a/", "/a//b", "a..b", ".a.b", "a.b.", "1a.b", "a.1b", "a.b1", ":1.2", ":1..2", ":.1", ":1.",
            "::1", "a:b.c", "-a.b", "a.-b", "a-b", "a.b-c", "_.a", "a._", "0", "_0", "a/b", "/a.b", "/0", "/-", "/_",
            "org.flowd.Forms1", "/org/flowd", "ab", "a b.c", "a\tb.c", "é.a", "a.é", "/é", "ÿ",
        ]
        let names = texts.map { Array($0.utf8) } + [[0x80], [UInt8(ascii: "a"), 0xFF, UInt8(ascii: "."), UInt8(ascii: "b")], [UInt8(ascii: "/"), 0xC0]]
        #expect(Self.disagreements(kind, names).isEmpty, "\(kind): \(Self.disagreements(kind, names))")
    }

    /// libdbus reads a C string, which ends at the first NUL: a name with a
    /// NUL inside is refused by flowd, even where libdbus would accept the
    /// part before it.
    @Test("a NUL inside a name is refused", arguments: Kind.allCases)
    func nul(_ kind: Kind) {
        for seed in kind.seeds {
            let bytes = Array(seed.utf8)
            for index in 0...bytes.count {
                var changed = bytes
                changed.insert(0, at: index)
                #expect(!kind.swift(changed), "\(kind) \(seed) NUL at \(index)")
                let text = String(decoding: changed, as: UTF8.self)
                #expect(kind.validate(text) != nil, "\(kind) \(seed) NUL at \(index)")
            }
            #expect(kind.validate(seed) == nil)
        }
    }

    @Test("a refused name is told with libdbus' reason")
    func reasons() {
        let error = ObjectPath.validate("/a//b")
        #expect(error?.name == .invalidArgs)
        #expect(error?.message == "invalid object path \"/a//b\": Object path was not valid: '/a//b'")
        #expect(BusName.validate("a..b")?.message == "invalid bus name \"a..b\": Bus name was not valid: 'a..b'")
        #expect(ErrorName.validate("Nope")?.message.hasPrefix("invalid error name \"Nope\": ") == true)
        #expect(Signature.validate("s\u{0}")?.message == "invalid signature \"s\u{0}\": it contains a NUL byte")
    }

    // MARK: the framer

    /// A call, an error and a signal with every name field flowd reads.
    static func messages() throws -> [[UInt8]] {
        var call = RawMessage()
        call.fields = [
            (1, "o", .string("/org/flowd/Flow1/session/0123")), (2, "s", .string("org.flowd.Flow1.Session")),
            (3, "s", .string("SetAnswers")), (6, "s", .string("org.flowd.Flow1")), (7, "s", .string(":1.42")),
            (8, "g", .signature("s")),
        ]
        call.body = call.uint32(2) + Array("ab".utf8) + [0]
        var error = RawMessage()
        error.type = 3
        error.fields = [
            (4, "s", .string("org.flowd.Error.NotFound")), (5, "u", .uint32(9)), (6, "s", .string(":1.9")),
            (7, "s", .string("org.freedesktop.DBus")),
        ]
        var signal = RawMessage()
        signal.type = 4
        signal.fields = [
            (1, "o", .string("/org/freedesktop/DBus")), (2, "s", .string("org.freedesktop.DBus")), (3, "s", .string("NameAcquired")),
            (6, "s", .string(":1.9")), (7, "s", .string("org.freedesktop.DBus")),
        ]
        return [call.bytes, error.bytes, signal.bytes]
    }

    /// What the framer makes of `bytes` after it read `warm` (the same
    /// fields' names, for the names it keeps), as a header or the refusal.
    static func framed(_ bytes: [UInt8], after warm: [UInt8]?) -> [String]? {
        var framer = MessageFramer()
        if let warm {
            framer.append(warm)
            guard (try? framer.next()) != nil else { return ["the warm-up message was refused"] }
        }
        framer.append(bytes)
        guard let incoming = try? framer.next(), let message = try? Message(received: incoming) else { return nil }
        return MessageFramerTests.framerHeader(incoming.header) + [ReceivedMessages.header(message)]
    }

    /// libdbus' loader's reading of `bytes`, in the framer's terms.
    static func loaded(_ bytes: [UInt8]) -> [String]? {
        guard let message = try? Message.demarshaling(bytes), let header = try? MessageFramerTests.libdbusHeader(bytes) else {
            return nil
        }
        return header + [ReceivedMessages.header(message)]
    }

    @Test("every byte of the header fields set to every value: the framer refuses what libdbus' loader refuses")
    func framerVerdicts() throws {
        var refused = 0, read = 0
        for bytes in try Self.messages() {
            let fieldsEnd = 16 + Int(bytes[12]) + Int(bytes[13]) << 8
            #expect(Self.loaded(bytes) != nil)
            for offset in 16..<fieldsEnd {
                for value in UInt8(0)...UInt8(255) where value != bytes[offset] {
                    var changed = bytes
                    changed[offset] = value
                    let expected = Self.loaded(changed)
                    for warm in [nil, bytes] {
                        let own = Self.framed(changed, after: warm)
                        #expect(own == expected, "byte \(offset) = \(value), warm: \(warm != nil)")
                    }
                    if expected == nil { refused += 1 } else { read += 1 }
                }
            }
        }
        #expect(refused > 1000 && read > 100)
    }
}
