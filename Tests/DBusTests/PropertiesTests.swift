import DBus
import Testing
import TestSupport

@Suite("Properties and signals on a private bus")
struct PropertiesTests {
    @Test("Get, GetAll and Set, with the standard errors")
    func getSet() throws {
        let fixture = try BusFixture()
        let service = try fixture.exportService()
        let test = fixture.proxy(TestService.path, TestService.interface)
        #expect(try test.property("Name") == "initial")
        #expect(try test.property("Version", as: String.self) == "1.0")
        #expect(try test.allProperties() == ["Name": "initial", "Count": .uint32(0), "Version": "1.0"],
                "write-only Secret is not listed")
        try test.setProperty("Name", "changed")
        #expect(try test.property("Name", as: String.self) == "changed")
        try test.setProperty("Secret", "hunter2")
        #expect(try fixture.onLoop { service.secret } == "hunter2")

        #expect(#expect(throws: DBusError.self) { try test.setProperty("Version", "2") }?.name == .propertyReadOnly)
        #expect(#expect(throws: DBusError.self) { try test.property("Nope") }?.name == .unknownProperty)
        #expect(#expect(throws: DBusError.self) { try test.setProperty("Name", .uint32(1)) }?.name == .invalidArgs)
        #expect(#expect(throws: DBusError.self) { try test.setProperty("Name", "") }?.message == "Name must not be empty")
        #expect(#expect(throws: DBusError.self) { try test.property("Secret") }?.name == .accessDenied)
        #expect(#expect(throws: DBusError.self) { try test.property("Name", as: UInt32.self) }?.name == .invalidArgs)
        let other = fixture.proxy(TestService.path, "org.flowd.Other")
        #expect(#expect(throws: DBusError.self) { try other.allProperties() }?.name == .unknownInterface)
        #expect(#expect(throws: DBusError.self) { try other.property("Name") }?.name == .unknownInterface)
        // A malformed Properties call is refused like any other.
        let properties = fixture.proxy(TestService.path, .properties)
        #expect(#expect(throws: DBusError.self) { try properties.call("Get", .string("x")) }?.name == .invalidArgs)
        // GetAll with an empty interface name lists every interface.
        #expect(try properties.call("GetAll", .string(""), returning: [String: DBusValue].self).count == 3)
    }

    @Test("PropertiesChanged reaches a second connection: on Set, and from emitPropertiesChanged")
    func propertiesChanged() throws {
        let fixture = try BusFixture()
        let service = try fixture.exportService()
        let watcher = try Connection(.address(fixture.bus.address))
        let rule = MatchRule(interface: .properties, member: "PropertiesChanged", path: TestService.path)
        try watcher.addMatch(rule)

        try fixture.proxy(TestService.path, TestService.interface).setProperty("Name", "watched")
        let first = try #require(try watcher.nextSignal(matching: rule, timeout: .seconds(20)))
        var args = first.arguments()
        #expect(try args.next(String.self) == TestService.interface.rawValue)
        #expect(try args.next([String: DBusValue].self) == ["Name": "watched"])
        #expect(try args.next([String].self) == [])
        #expect(first.sender == fixture.serverName)

        // Count invalidates, Version is const (never sent), Name sends its value.
        let objects = fixture.objects
        try fixture.onLoop { () throws(DBusError) in
            service.count = 5
            service.name = "again"
            try objects.value.emitPropertiesChanged(
                path: TestService.path, interface: TestService.interface, properties: ["Count", "Version", "Name"])
            try objects.value.emitPropertiesChanged(path: TestService.path, interface: TestService.interface, properties: ["Version"])
        }
        let second = try #require(try watcher.nextSignal(matching: rule, timeout: .seconds(20)))
        var more = second.arguments()
        _ = try more.next(String.self)
        #expect(try more.next([String: DBusValue].self) == ["Name": "again"])
        #expect(try more.next([String].self) == ["Count"])
        // Setting the write-only, non-emitting Secret sends nothing; a later
        // Set of Name does, and it is the next signal.
        try fixture.proxy(TestService.path, TestService.interface).setProperty("Secret", "x")
        try fixture.proxy(TestService.path, TestService.interface).setProperty("Name", "last")
        let third = try #require(try watcher.nextSignal(matching: rule, timeout: .seconds(20)))
        var last = third.arguments()
        _ = try last.next(String.self)
        #expect(try last.next([String: DBusValue].self) == ["Name": "last"])
    }

    @Test("signals: declared ones are checked, unicast ones reach only their destination")
    func signals() throws {
        let fixture = try BusFixture()
        try fixture.exportService()
        let tick = MatchRule(interface: TestService.interface, member: "Tick")
        try fixture.client.addMatch(tick)
        let other = try Connection(.address(fixture.bus.address))
        try other.addMatch(tick)

        try fixture.proxy(TestService.path, TestService.interface).call("Emit", .uint32(7))
        let received = try #require(try fixture.client.nextSignal(matching: tick, timeout: .seconds(20)))
        #expect(try received.readArguments() == [.uint32(7)])
        #expect(try other.nextSignal(matching: tick, timeout: .seconds(20))?.readArguments() == [.uint32(7)])

        let objects = fixture.objects
        let clientName = try #require(fixture.client.uniqueName)
        try fixture.onLoop { () throws(DBusError) in
            let wrong = #expect(throws: DBusError.self) {
                try objects.value.emitSignal("Tick", interface: TestService.interface, path: TestService.path, arguments: [.string("x")])
            }
            #expect(wrong?.name == .invalidArgs)
            try objects.value.emitSignal("Tick", interface: TestService.interface, path: TestService.path,
                                   arguments: [.uint32(1)], destination: clientName)
            try objects.value.emitSignal("Tick", interface: TestService.interface, path: TestService.path, arguments: [.uint32(2)])
        }
        #expect(try fixture.client.nextSignal(matching: tick, timeout: .seconds(20))?.readArguments() == [.uint32(1)])
        #expect(try fixture.client.nextSignal(matching: tick, timeout: .seconds(20))?.readArguments() == [.uint32(2)])
        // The other connection never saw the unicast one: its next is the broadcast.
        #expect(try other.nextSignal(matching: tick, timeout: .seconds(20))?.readArguments() == [.uint32(2)])
        #expect(try other.nextSignal(matching: tick, timeout: .milliseconds(1)) == nil)
    }

    @Test("subscribe() delivers matching signals on the loop thread")
    func subscribe() throws {
        let fixture = try BusFixture()
        let server = fixture.server
        let loop = fixture.thread.loop
        let seen = Mailbox<(String, Bool)>()
        let rule = MatchRule(interface: "org.flowd.Client", member: "Hello")
        let subscription = try fixture.onLoop {
            server.subscribe(rule) { message in
                var args = message.arguments()
                seen.put(((try? args.next(String.self)) ?? "?", loop.inEventLoop))
            }
        }
        // AddMatch was sent without waiting: a blocking round trip to the server orders it.
        _ = try fixture.client.call(Message.methodCall(destination: .bus, path: "/org/freedesktop/DBus", interface: .peer, member: "Ping"))
        _ = try fixture.client.call(Message.methodCall(destination: fixture.serverName, path: "/", interface: .peer, member: "Ping"))
        let signal = Message.signal(path: "/x", interface: "org.flowd.Client", member: "Hello")
        try signal.append(.string("there"))
        fixture.client.send(signal)
        let first = try #require(seen.take())
        #expect(first.0 == "there")
        #expect(first.1)
        try fixture.onLoop { subscription.cancel() }
    }
}
