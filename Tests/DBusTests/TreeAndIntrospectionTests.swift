import DBus
import Foundation
import FoundationXML
import Testing
import TestSupport

/// One item of a prefix-registered tree.
struct Item: Sendable {
    let id: String

    static let interface: InterfaceName = "org.flowd.Test.Item"
    static let prefix: ObjectPath = "/org/flowd/Test/item"
    /// The items whose `Describe` ran, in order (the authorizer test's
    /// items have ids of their own).
    static let described = Locked<[String]>([])

    static let table = InterfaceTable<Item>(
        interface,
        methods: [
            .init("Describe", out: [Argument("id", "s")]) { item, call in
                described.withLock { $0.append(item.id) }
                call.reply(.string("item " + item.id))
            },
        ],
        properties: [.read("Id", String.self, emitsChange: .const) { $0.id }],
        signals: [.init("Changed", [Argument("what", "s"), Argument("details", "a{sv}")])])
}

/// A minimal introspection reader: interface names with their members, and child nodes.
final class IntrospectionReader: NSObject, XMLParserDelegate {
    var interfaces: [String: [String]] = [:]
    var children: [String] = []
    var annotations: [String: String] = [:]
    private var current: String?
    private var member: String?
    private var depth = 0

    static func parse(_ xml: String) throws -> IntrospectionReader {
        let reader = IntrospectionReader()
        let parser = XMLParser(data: Data(xml.utf8))
        parser.delegate = reader
        try #require(parser.parse(), "well-formed XML: \(parser.parserError.map { "\($0)" } ?? "")")
        return reader
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        switch name {
        case "node":
            depth += 1
            if depth == 2, let child = attributes["name"] { children.append(child) }
        case "interface":
            current = attributes["name"]
            if let current { interfaces[current] = [] }
        case "method", "signal", "property":
            member = attributes["name"]
            if let current, let member { interfaces[current]?.append("\(name):\(member)") }
        case "annotation":
            if let member, let key = attributes["name"], let value = attributes["value"] { annotations["\(member)/\(key)"] = value }
        default: break
        }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if name == "node" { depth -= 1 }
        if name == "interface" { current = nil }
        if ["method", "signal", "property"].contains(name) { member = nil }
    }
}

@Suite("Trees and introspection on a private bus")
struct TreeAndIntrospectionTests {
    /// Exports items under Item.prefix without one registration per item.
    static func exportItems(_ fixture: BusFixture, ids: Set<String>) throws {
        let objects = fixture.objects
        try fixture.onLoop { () throws(DBusError) in
            try objects.value.exportTree(
                under: Item.prefix, interfaces: [Item.table],
                children: { path, _, done in done(path == Item.prefix ? ids.sorted() : []) },
                resolve: { path in
                    guard path.parent == Item.prefix, let id = path.lastComponent, ids.contains(String(id)) else { return nil }
                    return Item(id: String(id))
                })
        }
    }

    @Test("a tree serves many paths from one registration")
    func tree() throws {
        let fixture = try BusFixture()
        let ids = Set((0..<1000).map { "i\($0)" })
        try Self.exportItems(fixture, ids: ids)
        for id in ["i0", "i500", "i999"] {
            let item = fixture.proxy(try Item.prefix.appending(id), Item.interface)
            #expect(try item.call("Describe", returning: String.self) == "item \(id)")
            #expect(try item.property("Id", as: String.self) == id)
        }
        let missing = fixture.proxy(try Item.prefix.appending("i1000"), Item.interface)
        #expect(#expect(throws: DBusError.self) { try missing.call("Describe") }?.name == .unknownObject)
        let deeper = fixture.proxy(try Item.prefix.appending("i1").appending("x"), Item.interface)
        #expect(#expect(throws: DBusError.self) { try deeper.call("Describe") }?.name == .unknownObject)
        // The prefix itself is no object, but lists the items.
        let root = try IntrospectionReader.parse(fixture.proxy(Item.prefix, .introspectable).introspect())
        #expect(root.children.count == 1000)
        #expect(root.interfaces[Item.interface.rawValue] == nil)
        #expect(#expect(throws: DBusError.self) { try fixture.proxy(Item.prefix, Item.interface).call("Describe") }?.name
                == .unknownObject)
    }

    @Test("a tree that lists no children is still a node its parent's Introspect leads to")
    func privateTreeIsIntrospectable() throws {
        // The D-Bus fuzzer found this: flowd's Manager lists the node
        // "session", and Introspect of it answered UnknownObject, so a
        // recursive introspection (busctl tree, gdbus introspect -r) failed.
        let fixture = try BusFixture()
        try Self.exportItems(fixture, ids: [])
        let parent = try IntrospectionReader.parse(fixture.proxy(Item.prefix.parent ?? "/", .introspectable).introspect())
        #expect(parent.children.contains(String(Item.prefix.lastComponent ?? "")))
        let root = try IntrospectionReader.parse(fixture.proxy(Item.prefix, .introspectable).introspect())
        #expect(root.children.isEmpty)
        #expect(root.interfaces[Item.interface.rawValue] == nil)
        try fixture.proxy(Item.prefix, .peer).call("Ping")
        // Still no object there.
        #expect(#expect(throws: DBusError.self) { try fixture.proxy(Item.prefix, Item.interface).call("Describe") }?.name
                == .unknownObject)
    }

    @Test("Introspect is generated from the tables, with annotations and child nodes")
    func introspection() throws {
        let fixture = try BusFixture()
        try fixture.exportService()
        try Self.exportItems(fixture, ids: ["a", "b"])
        let xml = try fixture.proxy(TestService.path, .introspectable).introspect()
        let parsed = try IntrospectionReader.parse(xml)
        #expect(Set(parsed.interfaces.keys) == [
            "org.freedesktop.DBus.Peer", "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Properties",
            "org.flowd.Test",
        ])
        #expect(parsed.interfaces["org.flowd.Test"]?.prefix(3) == ["method:Add", "method:Echo", "method:Store"])
        #expect(parsed.interfaces["org.flowd.Test"]?.contains("signal:Tick") == true)
        #expect(parsed.interfaces["org.flowd.Test"]?.contains("property:Secret") == true)
        #expect(parsed.annotations["Count/org.freedesktop.DBus.Property.EmitsChangedSignal"] == "invalidates")
        #expect(parsed.annotations["Version/org.freedesktop.DBus.Property.EmitsChangedSignal"] == "const")
        #expect(parsed.annotations["Name/org.freedesktop.DBus.Property.EmitsChangedSignal"] == nil, "true is the default")
        #expect(parsed.children == ["item"], "the tree below shows as a child node")
        #expect(xml.contains(#"<property name="Name" type="s" access="readwrite"/>"#))
        #expect(xml.contains(#"<arg name="values" type="a{sv}" direction="in"/>"#))
        #expect(xml.hasPrefix("<!DOCTYPE node PUBLIC"))

        // Intermediate paths answer with their children only.
        let top = try IntrospectionReader.parse(fixture.proxy("/", .introspectable).introspect())
        #expect(top.children == ["org"])
        #expect(top.interfaces["org.freedesktop.DBus.Properties"] == nil)
        let flowd = try IntrospectionReader.parse(fixture.proxy("/org/flowd", .introspectable).introspect())
        #expect(flowd.children == ["Test"])
        let item = try IntrospectionReader.parse(fixture.proxy("/org/flowd/Test/item/a", .introspectable).introspect())
        #expect(item.interfaces["org.flowd.Test.Item"] == ["method:Describe", "signal:Changed", "property:Id"])
        #expect(#expect(throws: DBusError.self) { try fixture.proxy("/elsewhere", .introspectable).introspect() }?.name
                == .unknownObject)
        // The server can render the same without the bus.
        let objects = fixture.objects
        let local = try fixture.onLoop { () -> String? in objects.value.introspect(TestService.path) }
        #expect(local == xml)
    }

    @Test("an authorizer runs before handlers and Properties, synchronously or later")
    func authorizer() throws {
        let fixture = try BusFixture()
        let objects = fixture.objects
        let loop = fixture.thread.loop
        let asked = Locked<[String]>([])
        try fixture.onLoop { () throws(DBusError) in
            try objects.value.exportTree(
                under: Item.prefix, interfaces: [Item.table],
                authorize: { item, call in
                    asked.withLock { $0.append("\(item.id) \(call.interface).\(call.member)") }
                    switch item.id {
                    case "locked": return .refuse(.accessDenied("item locked is not yours"))
                    case "slow":
                        return .later { proceed in
                            loop.schedule(after: .milliseconds(2)) { try? SystemThread.detach(name: "dbus-test-replier") { proceed(nil) } }
                        }
                    // Decided later, but the answer comes at once, on the loop thread.
                    case "prompt": return .later { proceed in proceed(nil) }
                    // Only the first answer counts: the handler runs once.
                    case "twice":
                        return .later { proceed in
                            proceed(nil)
                            proceed(.accessDenied("too late"))
                        }
                    case "twice_refused":
                        return .later { proceed in
                            proceed(.accessDenied("refused first"))
                            proceed(nil)
                        }
                    default: return .allow
                    }
                },
                resolve: { path in path.parent == Item.prefix ? path.lastComponent.map { Item(id: String($0)) } : nil })
        }
        let open = fixture.proxy(try Item.prefix.appending("open"), Item.interface)
        #expect(try open.call("Describe", returning: String.self) == "item open")
        #expect(try open.property("Id") == .string("open"))
        let slow = fixture.proxy(try Item.prefix.appending("slow"), Item.interface)
        #expect(try slow.call("Describe", returning: String.self) == "item slow")
        let locked = fixture.proxy(try Item.prefix.appending("locked"), Item.interface)
        let denied = #expect(throws: DBusError.self) { try locked.call("Describe") }
        #expect(denied == DBusError.accessDenied("item locked is not yours"))
        #expect(#expect(throws: DBusError.self) { try locked.property("Id") }?.name == .accessDenied)
        _ = try locked.introspect()  // introspection is not gated
        let prompt = fixture.proxy(try Item.prefix.appending("prompt"), Item.interface)
        #expect(try prompt.call("Describe", returning: String.self) == "item prompt")
        #expect(try prompt.property("Id") == .string("prompt"))
        let twice = fixture.proxy(try Item.prefix.appending("twice"), Item.interface)
        #expect(try twice.call("Describe", returning: String.self) == "item twice")
        let refusedFirst = fixture.proxy(try Item.prefix.appending("twice_refused"), Item.interface)
        #expect(#expect(throws: DBusError.self) { try refusedFirst.call("Describe") } == .accessDenied("refused first"))
        // A wrong signature is refused before the authorizer is asked.
        #expect(throws: DBusError.self) { try open.call("Describe", .string("x")) }
        let ran = Item.described.value.filter { ["open", "slow", "locked", "prompt", "twice", "twice_refused"].contains($0) }
        #expect(ran == ["open", "slow", "prompt", "twice"])
        #expect(asked.value == [
            "open org.flowd.Test.Item.Describe", "open org.freedesktop.DBus.Properties.Get",
            "slow org.flowd.Test.Item.Describe",
            "locked org.flowd.Test.Item.Describe", "locked org.freedesktop.DBus.Properties.Get",
            "prompt org.flowd.Test.Item.Describe", "prompt org.freedesktop.DBus.Properties.Get",
            "twice org.flowd.Test.Item.Describe", "twice_refused org.flowd.Test.Item.Describe",
        ])
    }

    @Test("registration mistakes are refused")
    func registrationErrors() throws {
        let fixture = try BusFixture()
        try fixture.exportService()
        let objects = fixture.objects
        try fixture.onLoop { () throws(DBusError) in
            #expect(throws: DBusError.self) {
                try objects.value.export(TestService(), at: TestService.path, interfaces: [TestService.table()])
            }
            #expect(throws: DBusError.self) {
                try objects.value.export(TestService(), at: "/other", interfaces: [TestService.table(), TestService.table()])
            }
            #expect(throws: DBusError.self) {
                try objects.value.export(0, at: "/props", interfaces: [InterfaceTable<Int>(.properties)])
            }
            let twice = InterfaceTable<Int>("org.flowd.Twice", methods: [.init("A") { _, _ in }, .init("A") { _, _ in }])
            #expect(throws: DBusError.self) { try objects.value.export(0, at: "/twice", interfaces: [twice]) }
            let propertyTwice = InterfaceTable<Int>(
                "org.flowd.PropertyTwice",
                properties: [.init("P", "s", get: { _ in .string("") }), .init("P", "s", get: { _ in .string("") })])
            #expect(throws: DBusError.self) { try objects.value.export(0, at: "/propertyTwice", interfaces: [propertyTwice]) }
            let badProperty = InterfaceTable<Int>("org.flowd.Bad", properties: [.init("P", "ss", get: { _ in .string("") })])
            #expect(throws: DBusError.self) { try objects.value.export(0, at: "/bad", interfaces: [badProperty]) }
        }
    }
}
