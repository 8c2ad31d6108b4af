import DBus
import Testing

@Suite("Typed names")
struct NameTests {
    @Test("valid bus names", arguments: [":1.42", "org.flowd.Flow1", "a.b", "_x.y-z", ":a.b.c"])
    func goodBusNames(_ text: String) throws {
        let name = try BusName(text)
        #expect(name.rawValue == text)
        #expect(name.isUnique == text.hasPrefix(":"))
    }

    @Test("invalid bus names", arguments: ["", "org", ".org.x", "org..x", "1org.x", "org.x/", String(repeating: "a.", count: 200) + "a"])
    func badBusNames(_ text: String) {
        #expect(throws: DBusError.self) { try BusName(text) }
        #expect(BusName(rawValue: text) == nil)
    }

    @Test("object paths", arguments: ["/", "/org/flowd/Flow1", "/a_b/C9"])
    func goodPaths(_ text: String) throws {
        #expect(try ObjectPath(text).rawValue == text)
    }

    @Test("invalid object paths", arguments: ["", "org", "/org/", "//", "/a-b", "/a//b", "/ä"])
    func badPaths(_ text: String) {
        let error = #expect(throws: DBusError.self) { try ObjectPath(text) }
        #expect(error?.name == .invalidArgs)
        #expect(error?.message.contains("object path") == true)
    }

    /// Runtime strings (not literals: `T("literal")` is literal syntax in
    /// Swift and would trap on a bad name instead of throwing).
    @Test("interface, member and error names")
    func otherNames() throws {
        func text(_ s: String) -> String { s }
        #expect(try InterfaceName(text("org.flowd.Flow1.Session")).rawValue == "org.flowd.Flow1.Session")
        #expect(throws: DBusError.self) { try InterfaceName(text("Session")) }
        #expect(throws: DBusError.self) { try InterfaceName(text("org.flowd.1x")) }
        #expect(try MemberName(text("SetAnswers")).rawValue == "SetAnswers")
        #expect(throws: DBusError.self) { try MemberName(text("Set.Answers")) }
        #expect(throws: DBusError.self) { try MemberName(text("")) }
        #expect(throws: DBusError.self) { try MemberName(text("9lives")) }
        #expect(try ErrorName(text("org.flowd.Flow1.Error.NotFound")).rawValue == "org.flowd.Flow1.Error.NotFound")
        #expect(throws: DBusError.self) { try ErrorName(text("NotFound")) }
        #expect(MemberName(rawValue: text("Bad-Name")) == nil)
    }

    @Test("signatures")
    func signatures() throws {
        let goodOnes: [String] = ["", "s", "a{sv}", "aa{sv}", "(ssos)", "a(sss)", "ssos", "v", "ah", "a{oa{sa{sv}}}"]
        for good in goodOnes {
            #expect(try Signature(good).rawValue == good)
        }
        let badOnes: [String] = ["z", "a", "{sv}", "a{vs}", "(", "()", "a{s}", String(repeating: "a", count: 33) + "s"]
        for bad in badOnes {
            #expect(throws: DBusError.self, "\(bad)") { try Signature(bad) }
        }
        #expect(Signature("ssos").completeTypes.map(\.rawValue) == ["s", "s", "o", "s"])
        #expect(Signature("a{sv}(si)as").completeTypes.map(\.rawValue) == ["a{sv}", "(si)", "as"])
        #expect(Signature("a{sv}").isSingleCompleteType)
        #expect(!Signature("ss").isSingleCompleteType)
        #expect(try Signature.dictionary(key: .string, value: .variant).rawValue == "a{sv}")
        #expect(throws: DBusError.self) { try Signature.dictionary(key: .variant, value: .string) }
    }

    @Test("object path helpers")
    func pathHelpers() throws {
        let base: ObjectPath = "/org/flowd/Flow1"
        let session = try base.appending("session").appending("0123abcd")
        #expect(session.rawValue == "/org/flowd/Flow1/session/0123abcd")
        #expect(session.parent?.rawValue == "/org/flowd/Flow1/session")
        #expect(ObjectPath.root.parent == nil)
        #expect(ObjectPath("/org").parent == .root)
        #expect(base.isAncestor(of: session))
        #expect(!session.isAncestor(of: base))
        #expect(!base.isAncestor(of: "/org/flowd/Flow10"))
        #expect(ObjectPath.root.isAncestor(of: base))
        #expect(base.childComponent(toward: session) == "session")
        #expect(ObjectPath.root.childComponent(toward: base) == "org")
        #expect(throws: DBusError.self) { try base.appending("not-valid") }
        #expect(session.lastComponent == "0123abcd")
    }
}
