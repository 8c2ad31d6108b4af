import DBus
import Foundation
import Testing
import TestSupport

/// What the running daemon introspects must be exactly what the interface
/// XML shipped in `dbus/` says: names, signatures, directions, access and
/// annotations. The XML's `org.gtk.GDBus.DocString` annotations are its own
/// (the source of the documentation; the daemon's tables are the source of
/// the shape), so every member must have one, and the comparison leaves
/// them out.
@Suite("Introspection against dbus/*.xml")
struct IntrospectionTests {
    /// The repository's `dbus/` directory, found from this source file.
    static let xmlDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("dbus").path

    /// The shipped XML of `interface`, without its documentation: the shape
    /// the daemon must introspect.
    static func shipped(_ interface: String) throws -> InterfaceShape {
        try shippedWithDocs(interface).withoutDocStrings
    }

    /// The shipped XML of `interface` as it is.
    static func shippedWithDocs(_ interface: String) throws -> InterfaceShape {
        let text = try String(contentsOfFile: "\(xmlDirectory)/\(interface).xml", encoding: .utf8)
        let interfaces = try InterfaceShape.interfaces(in: text)
        #expect(Array(interfaces.keys) == [interface], "\(interface).xml must describe exactly that interface")
        return try #require(interfaces[interface])
    }

    /// Compares member by member, so a failure names what differs.
    static func expectSame(_ live: InterfaceShape?, _ shipped: InterfaceShape, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let live else {
            Issue.record("the daemon does not introspect \(shipped.name)", sourceLocation: sourceLocation)
            return
        }
        #expect(live.annotations == shipped.annotations, sourceLocation: sourceLocation)
        #expect(Set(live.methods.keys) == Set(shipped.methods.keys), "methods of \(shipped.name)", sourceLocation: sourceLocation)
        #expect(Set(live.signals.keys) == Set(shipped.signals.keys), "signals of \(shipped.name)", sourceLocation: sourceLocation)
        #expect(Set(live.properties.keys) == Set(shipped.properties.keys), "properties of \(shipped.name)", sourceLocation: sourceLocation)
        for (name, method) in shipped.methods {
            #expect(live.methods[name] == method, "method \(name)", sourceLocation: sourceLocation)
        }
        for (name, signal) in shipped.signals {
            #expect(live.signals[name] == signal, "signal \(name)", sourceLocation: sourceLocation)
        }
        for (name, property) in shipped.properties {
            #expect(live.properties[name] == property, "property \(name)", sourceLocation: sourceLocation)
        }
        #expect(live == shipped, sourceLocation: sourceLocation)
    }

    /// The three standard interfaces every object must have.
    static func expectStandardInterfaces(_ interfaces: [String: InterfaceShape], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(interfaces["org.freedesktop.DBus.Introspectable"]?.methods["Introspect"]?.arguments
                == [.init(name: "xml_data", type: "s", direction: "out")], sourceLocation: sourceLocation)
        let properties = interfaces["org.freedesktop.DBus.Properties"]
        #expect(Set(properties?.methods.keys ?? [:].keys) == ["Get", "GetAll", "Set"], sourceLocation: sourceLocation)
        #expect(properties?.signals["PropertiesChanged"]?.arguments.map(\.type) == ["s", "a{sv}", "as"], sourceLocation: sourceLocation)
        #expect(Set(interfaces["org.freedesktop.DBus.Peer"]?.methods.keys ?? [:].keys) == ["Ping", "GetMachineId"],
                sourceLocation: sourceLocation)
    }

    @Test("the Manager object and a session object introspect exactly the shipped XML")
    func liveMatchesShipped() async throws {
        let manager = try Self.shipped("org.flowd.Flow1.Manager")
        let session = try Self.shipped("org.flowd.Flow1.Session")
        try await withDaemon { fixture in
            let raw = try fixture.raw()
            let managerXML = try raw.manager.introspect()
            let managerInterfaces = try InterfaceShape.interfaces(in: managerXML)
            Self.expectSame(managerInterfaces[manager.name], manager)
            Self.expectStandardInterfaces(managerInterfaces)
            #expect(managerInterfaces[session.name] == nil)
            // Since 1.1 the Manager object is also the ObjectManager of the sessions.
            Self.expectSame(managerInterfaces[InterfaceShape.objectManager.name], InterfaceShape.objectManager)

            let started = try await fixture.client.start("trip")
            let sessionInterfaces = try InterfaceShape.interfaces(in: try raw.session(id: started).introspect())
            Self.expectSame(sessionInterfaces[session.name], session)
            Self.expectStandardInterfaces(sessionInterfaces)
            #expect(sessionInterfaces[manager.name] == nil)

            // The same through a client nobody here wrote.
            let tool = ExternalClient(fixture)
            let fromGdbus = try tool.succeed(
                "gdbus", ["introspect", "--xml", "--address", tool.address, "--dest", "org.flowd.Flow1",
                          "--object-path", sessionPath(started).rawValue])
            Self.expectSame(try InterfaceShape.interfaces(in: fromGdbus)[session.name], session)
        }
    }

    @Test("the shipped XML names every member of the contract")
    func shippedCoversTheContract() async throws {
        let manager = try Self.shipped("org.flowd.Flow1.Manager")
        #expect(Set(manager.methods.keys) == [
            "ListFlows", "StartSession", "ListSessions", "GetSession", "ListPlugins", "Reload", "ListFlowsWithOptions",
            "GetStatus",
        ])
        #expect(manager.methods["GetStatus"]?.arguments.map(\.type) == ["a{sv}"])
        #expect(manager.methods["StartSession"]?.arguments.map(\.type) == ["s", "a{sv}", "o"])
        #expect(manager.methods["ListSessions"]?.arguments.map(\.type) == ["a(ssos)"])
        #expect(Set(manager.signals.keys) == ["SessionNew", "SessionRemoved"])
        #expect(manager.properties["SessionCount"]?.type == "u")
        let session = try Self.shipped("org.flowd.Flow1.Session")
        #expect(Set(session.methods.keys) == [
            "GetStep", "SetAnswers", "Continue", "Back", "GoTo", "GetReview", "GetAnswers", "Submit", "Cancel", "Close",
            "CheckAnswers", "SetLocale", "SubmitWithOptions",
        ])
        #expect(session.methods["SubmitWithOptions"]?.arguments == [.init(name: "options", type: "a{sv}", direction: "in")])
        #expect(session.methods["GetReview"]?.arguments.map(\.type) == ["aa{sv}", "s"])
        #expect(Set(session.signals.keys) == ["StepCompleted", "Submitted", "SubmitFailed", "Announcement"])
        for name in ["Id", "FlowId", "Owner", "Locale", "State", "CurrentStep", "StepIndex", "StepCount", "CanGoBack",
                     "CanContinue", "ContinueLabel", "ReturningToReview", "LastError", "CreatedAt", "UpdatedAt", "Path"] {
            #expect(session.properties[name]?.access == "read", "\(name)")
        }
        #expect(session.properties["Path"]?.type == "a(sss)")
        #expect(session.properties["CreatedAt"]?.type == "t")
    }

    @Test("every interface and member of the shipped XML has an org.gtk.GDBus.DocString; Submit's says it may block")
    func shippedIsDocumented() throws {
        for name in ["org.flowd.Flow1.Manager", "org.flowd.Flow1.Session"] {
            let shape = try Self.shippedWithDocs(name)
            #expect(shape.undocumented == [], "\(name)")
        }
        let session = try Self.shippedWithDocs("org.flowd.Flow1.Session")
        let submit = session.methods["Submit"]?.annotations[InterfaceShape.docString] ?? ""
        #expect(submit.contains("timeoutSeconds") && submit.contains("SubmitWithOptions"), "\(submit)")
        let manager = try Self.shippedWithDocs("org.flowd.Flow1.Manager")
        #expect(manager.annotations[InterfaceShape.docString]?.contains("org.freedesktop.DBus.ObjectManager") == true)
        // The check sees a member without one.
        var altered = session
        altered.methods["Submit"]?.annotations = [:]
        #expect(altered.undocumented == ["method Submit"])
    }

    @Test("the comparison sees a difference", arguments: [
        // A changed direction, a changed type, a missing annotation, an extra member.
        ("<arg name=\"flow\" type=\"s\" direction=\"in\"/>", "<arg name=\"flow\" type=\"s\" direction=\"out\"/>"),
        ("<arg name=\"flow\" type=\"s\" direction=\"in\"/>", "<arg name=\"flow\" type=\"o\" direction=\"in\"/>"),
        ("<annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"const\"/>", ""),
        ("<method name=\"Reload\">", "<method name=\"Extra\"/><method name=\"Reload\">"),
    ])
    func comparisonCanFail(original: String, changed: String) throws {
        let text = try String(contentsOfFile: "\(Self.xmlDirectory)/org.flowd.Flow1.Manager.xml", encoding: .utf8)
        #expect(text.contains(original))
        let altered = text.replacingOccurrences(of: original, with: changed)
        let name = "org.flowd.Flow1.Manager"
        #expect(try InterfaceShape.interfaces(in: altered)[name] != InterfaceShape.interfaces(in: text)[name])
    }

    @Test("the XML reader refuses malformed documents", arguments: [
        "<node><interface name=\"a\"></node>",
        "<node><interface name=\"a\"/>",
        "<node attr=\"unterminated/>",
        "<node a=\"1\" a=\"2\"/>",
        "<node a=\"&bogus;\"/>",
        "<node/><node/>",
        "",
    ])
    func readerRefusesMalformed(text: String) {
        #expect(throws: TestSupportError.self) { _ = try TinyXMLReader.parse(text) }
    }

    @Test("the XML reader reads entities, comments and self-closing elements")
    func readerReads() async throws {
        let root = try TinyXMLReader.parse("""
            <?xml version="1.0"?>
            <!DOCTYPE node PUBLIC "-//x//y" "http://example.org/x.dtd">
            <!-- a comment -->
            <node name='/a'><interface name="x&amp;y"><!-- inside --><method name="M"/></interface></node>
            """)
        #expect(root.attributes == ["name": "/a"])
        #expect(root.children("interface").first?.attributes["name"] == "x&y")
        #expect(root.children("interface").first?.children("method").count == 1)
    }
}
