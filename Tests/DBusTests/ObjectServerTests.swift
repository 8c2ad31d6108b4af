import DBus
import Foundation
import FoundationXML
import Reactor
import Testing
import TestSupport

/// Against a real dbus-daemon: a server object driven by the Reactor loop,
/// called from a client-mode connection.
@Suite("ObjectServer on a private bus")
struct ObjectServerTests {
    @Test("method calls reply with typed values")
    func methodCalls() throws {
        let fixture = try BusFixture()
        try fixture.exportService()
        let test = fixture.proxy(TestService.path, TestService.interface)
        #expect(try test.call("Add", .int32(2), .int32(3), returning: Int32.self) == 5)
        let values: [String: DBusValue] = ["name": "Ada", "n": .uint64(7), "list": .strings(["a", "b"]),
                                           "nested": .vardict(["deep": .variant(.bool(true))])]
        #expect(try test.call("Echo", .vardict(values), returning: [String: DBusValue].self) == values)
        let errors = try test.call("Store", .vardict(["a": "b"]), returning: [String: String].self)
        #expect(errors.isEmpty)
    }

    @Test("a wrong signature is refused with InvalidArgs before the handler runs")
    func wrongSignature() throws {
        let fixture = try BusFixture()
        let service = try fixture.exportService()
        let test = fixture.proxy(TestService.path, TestService.interface)
        let error = #expect(throws: DBusError.self) { try test.call("Store", .strings(["a"])) }
        #expect(error?.name == .invalidArgs)
        #expect(error?.message == "org.flowd.Test.Store expects arguments 'a{sv}', got 'as'")
        #expect(throws: DBusError.self) { try test.call("Add", .int32(1)) }
        #expect(throws: DBusError.self) { try test.call("Add", .int32(1), .int32(2), .int32(3)) }
        #expect(try fixture.onLoop { service.count } == 0, "the handler never ran")
    }

    @Test("unknown method, interface and object get precise errors")
    func unknownThings() throws {
        let fixture = try BusFixture()
        try fixture.exportService()
        let test = fixture.proxy(TestService.path, TestService.interface)
        #expect(#expect(throws: DBusError.self) { try test.call("Nope") }?.name == .unknownMethod)
        let other = fixture.proxy(TestService.path, "org.flowd.Other")
        #expect(#expect(throws: DBusError.self) { try other.call("Add") }?.name == .unknownInterface)
        let missing = fixture.proxy("/org/flowd/Missing", TestService.interface)
        let error = #expect(throws: DBusError.self) { try missing.call("Add", .int32(1), .int32(2)) }
        #expect(error?.name == .unknownObject)
        #expect(error?.message == "No object at path /org/flowd/Missing")
        // Without an interface, the member is looked up in the object's tables.
        let call = Message.methodCall(destination: fixture.serverName, path: TestService.path, interface: nil, member: "Add")
        try call.append(.int32(4), .int32(4))
        var reply = try fixture.client.call(call).arguments()
        #expect(try reply.next(Int32.self) == 8)
    }

    @Test("handler errors: DBusError passes through, others become a generic Failed and are logged")
    func handlerErrors() throws {
        let fixture = try BusFixture()
        try fixture.exportService()
        let test = fixture.proxy(TestService.path, TestService.interface)
        let refused = #expect(throws: DBusError.self) { try test.call("Fail", .string("no way")) }
        #expect(refused == DBusError("org.flowd.Test.Error.Refused", "no way"))
        let crashed = #expect(throws: DBusError.self) { try test.call("Crash") }
        #expect(crashed?.name == .failed)
        #expect(crashed?.message.contains("internal detail") == false, "details stay out of the reply")
        #expect(fixture.logged.value.contains { $0.contains("Crash") && $0.contains("internal detail") })
        let bad = #expect(throws: DBusError.self) { try test.call("BadReply") }
        #expect(bad?.name == .failed)
        #expect(fixture.logged.value.contains { $0.contains("BadReply") && $0.contains("declared 's'") })
    }

    @Test("a dropped invocation answers the caller with an error and is logged")
    func droppedInvocation() throws {
        let fixture = try BusFixture()
        try fixture.exportService()
        let test = fixture.proxy(TestService.path, TestService.interface)
        let error = #expect(throws: DBusError.self) { try test.call("Drop") }
        #expect(error?.name == .failed)
        #expect(error?.message.contains("dropped") == true)
        #expect(fixture.logged.value.contains { $0.contains("Drop") && $0.contains("without a reply") })
    }

    @Test("deferred replies: later from another thread, and held until released")
    func deferredReplies() throws {
        let fixture = try BusFixture()
        let service = try fixture.exportService()
        let test = fixture.proxy(TestService.path, TestService.interface)
        #expect(try test.call("Later", .string("hi"), returning: String.self) == "later: hi")

        // Park a call from one client; release it from another.
        let parkedNow = Latch()
        try fixture.onLoop { service.onPark = { parkedNow.countDown() } }
        let parked = Mailbox<Result<String, DBusError>>()
        let waiter = try Connection(.address(fixture.bus.address))
        let waiterProxy = fixture.proxy(TestService.path, TestService.interface, connection: waiter)
        try? SystemThread.detach(name: "dbus-test-replier") {
            parked.put(Result { () throws(DBusError) -> String in try waiterProxy.call("Park", returning: String.self) })
        }
        #expect(parkedNow.wait())
        #expect(try fixture.onLoop { service.parked.count } == 1)
        try test.call("ReleaseParked", .string("released"))
        let result = try #require(parked.take())
        #expect(try result.get() == "released")
    }

    @Test("no-reply-expected calls run their handler and are not answered")
    func noReplyExpected() throws {
        let fixture = try BusFixture()
        try fixture.exportService()
        let tick = MatchRule(interface: TestService.interface, member: "Tick")
        try fixture.client.addMatch(tick)
        for member: MemberName in ["Drop", "Nope"] {
            let call = Message.methodCall(destination: fixture.serverName, path: TestService.path,
                                          interface: TestService.interface, member: member)
            call.noReplyExpected = true
            fixture.client.send(call)
        }
        let emit = Message.methodCall(destination: fixture.serverName, path: TestService.path,
                                      interface: TestService.interface, member: "Emit")
        try emit.append(.uint32(9))
        emit.noReplyExpected = true
        fixture.client.send(emit)
        // Calls are handled in order: once Emit's signal arrives, Drop ran too.
        #expect(try fixture.client.nextSignal(matching: tick, timeout: .seconds(20))?.readArguments() == [.uint32(9)])
        #expect(!fixture.logged.value.contains { $0.contains("Drop") }, "a dropped no-reply call is not an error")
    }

    @Test("Peer answers with handlers installed, with and without the interface name")
    func peer() throws {
        let fixture = try BusFixture()
        try fixture.exportService()
        let test = fixture.proxy(TestService.path, TestService.interface)
        try test.ping()  // libdbus answers org.freedesktop.DBus.Peer itself
        let bare = Message.methodCall(destination: fixture.serverName, path: TestService.path, interface: nil, member: "Ping")
        #expect(try fixture.client.call(bare).type == .methodReturn)
        let machine = try test.with(interface: .peer).call("GetMachineId", returning: String.self)
        #expect(machine.count == 32)
        // Even on a path with no object at all.
        try fixture.proxy("/nothing/here", .peer).ping()
    }

    @Test("GetConnectionUnixUser through the loop, blocking, and through the cache")
    func unixUser() throws {
        let fixture = try BusFixture()
        try fixture.exportService()
        let test = fixture.proxy(TestService.path, TestService.interface)
        #expect(try test.call("WhoAmI", returning: UInt32.self) == getuid())
        let clientName = try #require(fixture.client.uniqueName)
        #expect(try fixture.client.unixUser(of: clientName) == getuid())
        #expect(throws: DBusError.self) { try fixture.client.unixUser(of: ":1.99999") }

        // The cache answers the second lookup synchronously and forgets a
        // client once NameOwnerChanged says it is gone.
        let server = fixture.server
        let cache = try fixture.onLoop { UnixUserCache(connection: server) }
        let transient = try Connection(.address(fixture.bus.address))
        let transientName = try #require(transient.uniqueName)
        let first = Mailbox<UInt32>()
        try fixture.onLoop {
            cache.unixUser(of: transientName) { if case .success(let uid) = $0 { first.put(uid) } }
        }
        #expect(first.take() == getuid())
        let synchronous = try fixture.onLoop { () -> Bool in
            let answered = Locked(false)
            cache.unixUser(of: transientName) { _ in answered.withLock { $0 = true } }
            return answered.value && cache.count == 1
        }
        #expect(synchronous)
        let gone = Mailbox<Int>()
        let subscription = try fixture.onLoop {
            server.onNameOwnerChanged { change in
                if change.name == transientName && change.isClientGone { gone.put(cache.count) }
            }
        }
        transient.close()
        #expect(gone.take() == 0, "the cache dropped the departed client first")
        try fixture.onLoop { subscription.cancel() }
    }

    @Test("a second uid is told apart from the first (setpriv to nobody)")
    func secondUser() throws {
        try #require(getuid() == 0, "needs root to switch to nobody")
        let fixture = try BusFixture(allowUsers: [65534])
        try fixture.exportService()
        let result = try ChildProcess.run(
            "setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "--",
                        "gdbus", "call", "--address", fixture.bus.address, "--dest", fixture.serverName.rawValue,
                        "--object-path", TestService.path.rawValue, "--method", "org.flowd.Test.WhoAmI"])
        #expect(result.status == .exited(0), "\(result.standardError)")
        #expect(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "(uint32 65534,)")
    }
}

