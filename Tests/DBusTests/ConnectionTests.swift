import DBus
import Glibc
import Reactor
import Testing
import TestSupport

@Suite("Connection on a private bus")
struct ConnectionTests {
    @Test("connecting to a bad address throws, and close() is idempotent")
    func connectAndClose() throws {
        let bus = try PrivateBus()
        let error = #expect(throws: DBusError.self) { try Connection(.address("unix:path=/nonexistent/socket")) }
        #expect(error?.name == .noServer || error?.name == .fileNotFoundForTests || error?.name == .failed)
        #expect(throws: DBusError.self) { try Connection(.address("no-such-transport:")) }
        let connection = try Connection(.address(bus.address))
        let name = try #require(connection.uniqueName)
        #expect(name.isUnique)
        #expect(connection.isConnected)
        connection.close()
        connection.close()
        #expect(!connection.isConnected)
        let ping = Message.methodCall(destination: .bus, path: "/org/freedesktop/DBus", interface: .peer, member: "Ping")
        #expect(#expect(throws: DBusError.self) { try connection.call(ping) }?.name == .disconnected)
    }

    @Test("requestName, with DO_NOT_QUEUE, and NameOwnerChanged for it")
    func names() throws {
        let fixture = try BusFixture()
        let rule = MatchRule.nameOwnerChanged(for: "org.flowd.TestName")
        try fixture.client.addMatch(rule)
        let server = fixture.server
        #expect(try fixture.onLoop { () throws(DBusError) in try server.requestName("org.flowd.TestName") } == .primaryOwner)
        #expect(try fixture.onLoop { () throws(DBusError) in try server.requestName("org.flowd.TestName") } == .alreadyOwner)
        #expect(try fixture.client.requestName("org.flowd.TestName", flags: [.doNotQueue]) == .exists)
        #expect(try fixture.client.nameHasOwner("org.flowd.TestName"))
        let signal = try #require(try fixture.client.nextSignal(matching: rule, timeout: .seconds(20)))
        #expect(try signal.readArguments() == ["org.flowd.TestName", "", .string(fixture.serverName.rawValue)])
        #expect(try fixture.onLoop { () throws(DBusError) in try server.releaseName("org.flowd.TestName") })
        #expect(try !fixture.client.nameHasOwner("org.flowd.TestName"))
    }

    @Test("async calls from the loop: replies, error replies and NoReply timeouts arrive on the loop")
    func asyncCalls() throws {
        let fixture = try BusFixture()
        let helper = try BusFixture.Helper(fixture)  // a second served connection to call
        let server = fixture.server
        let loop = fixture.thread.loop
        let results = Mailbox<(String, Bool)>()
        @Sendable func record(_ label: String) -> @Sendable (Result<Message, DBusError>) -> Void {
            { result in
                switch result {
                case .success(let reply):
                    var args = reply.arguments()
                    results.put(("\(label) ok \((try? args.next(Int32.self)).map(String.init) ?? "-")", loop.inEventLoop))
                case .failure(let error): results.put(("\(label) \(error.name.rawValue)", loop.inEventLoop))
                }
            }
        }
        let target = helper.proxy(connection: server)
        try fixture.onLoop { () throws(DBusError) in
            _ = server.sendWithReply(try target.makeCall("Add", arguments: [.int32(20), .int32(22)]), onReply: record("add"))
        }
        #expect(results.take()?.0 == "add ok 42")
        // From another thread: hops to the loop.
        server.sendWithReply(try target.makeCall("Fail", arguments: ["nope"]), onReply: record("fail"))
        let failed = try #require(results.take())
        #expect(failed.0 == "fail org.flowd.Test.Error.Refused")
        #expect(failed.1, "completion on the loop thread")
        // A parked call times out through the loop's timers (libdbus timeout functions).
        server.sendWithReply(try target.makeCall("Park"), timeout: .milliseconds(50), onReply: record("park"))
        #expect(results.take()?.0 == "park org.freedesktop.DBus.Error.NoReply")
        // A name nobody owns.
        let nobody = Message.methodCall(destination: "org.flowd.Nobody", path: "/", interface: .peer, member: "Ping")
        server.sendWithReply(nobody, onReply: record("nobody"))
        #expect(results.take()?.0 == "nobody org.freedesktop.DBus.Error.ServiceUnknown")
    }

    @Test("async/await reply(to:) from a task")
    func awaitReply() async throws {
        let fixture = try BusFixture()
        let helper = try BusFixture.Helper(fixture)
        let call = try helper.proxy(connection: fixture.server).makeCall("Add", arguments: [.int32(1), .int32(2)])
        var args = try await fixture.server.reply(to: call).arguments()
        #expect(try args.next(Int32.self) == 3)
        let failing = try helper.proxy(connection: fixture.server).makeCall("Fail", arguments: ["x"])
        await #expect(throws: DBusError("org.flowd.Test.Error.Refused", "x")) { try await fixture.server.reply(to: failing) }
    }

    @Test("the server learns when the bus goes away")
    func disconnection() throws {
        let fixture = try BusFixture()
        let server = fixture.server
        let loop = fixture.thread.loop
        let lost = Mailbox<Bool>()
        try fixture.onLoop { server.onDisconnect { lost.put(loop.inEventLoop) } }
        // A call still waiting when the bus dies gets an error, not silence.
        let helper = try BusFixture.Helper(fixture)
        let parked = Latch()
        try fixture.onLoop { helper.service.onPark = { parked.countDown() } }
        let pending = Mailbox<Result<Message, DBusError>>()
        server.sendWithReply(try helper.proxy(connection: server).makeCall("Park")) { pending.put($0) }
        #expect(parked.wait())
        fixture.bus.stop()
        #expect(lost.take() == true)
        let answer = try #require(pending.take())
        #expect(throws: DBusError.self) { try answer.get() }
        #expect(!server.isConnected)
        // A late registration is told at once.
        let late = Latch()
        try fixture.onLoop { server.onDisconnect { late.countDown() } }
        #expect(late.wait())
        // Client mode: waiting for a signal reports the loss (NameAcquired,
        // queued since connecting, does not match the rule).
        let never = MatchRule(interface: "org.flowd.Never")
        let error = #expect(throws: DBusError.self) { try fixture.client.nextSignal(matching: never, timeout: .seconds(20)) }
        #expect(error?.name == .disconnected)
        #expect(try fixture.client.nextSignal(timeout: .zero)?.member == "NameAcquired")
    }

    @Test("sends from many threads all arrive, in per-thread order")
    func concurrentSends() throws {
        let fixture = try BusFixture()
        let rule = MatchRule(interface: "org.flowd.Burst", member: "N")
        try fixture.client.addMatch(rule)
        let server = fixture.server
        let threads = 4
        let perThread = 50
        let done = Latch(count: threads)
        for t in 0..<threads {
            try? SystemThread.detach(name: "dbus-test-replier") {
                for n in 0..<perThread {
                    let signal = Message.signal(path: "/burst", interface: "org.flowd.Burst", member: "N")
                    _ = try? signal.append(.uint32(UInt32(t * 1000 + n)))
                    server.send(signal)
                }
                done.countDown()
            }
        }
        #expect(done.wait())
        var last = [Int](repeating: -1, count: threads)
        for _ in 0..<(threads * perThread) {
            let signal = try #require(try fixture.client.nextSignal(matching: rule, timeout: .seconds(20)))
            var args = signal.arguments()
            let value = Int(try args.next(UInt32.self))
            #expect(value % 1000 > last[value / 1000])
            last[value / 1000] = value % 1000
        }
        #expect(last == [Int](repeating: perThread - 1, count: threads))
    }
}

extension ErrorName {
    static let fileNotFoundForTests: ErrorName = "org.freedesktop.DBus.Error.FileNotFound"
}

extension BusFixture {
    /// A second connection on the fixture's bus, served on the fixture's loop,
    /// exporting a TestService: something for the server connection to call.
    final class Helper: @unchecked Sendable {
        let connection: Connection
        let objects: LoopBound<ObjectServer>
        let service = TestService()

        init(_ fixture: BusFixture) throws {
            let address = fixture.bus.address
            let loop = fixture.thread.loop
            let service = self.service
            (connection, objects) = try fixture.onLoop { () throws(DBusError) -> (Connection, LoopBound<ObjectServer>) in
                let connection = try Connection(.address(address))
                try connection.attach(to: loop)
                let objects = ObjectServer(connection: connection)
                service.objects = objects
                service.loop = loop
                try objects.export(service, at: TestService.path, interfaces: [TestService.table()])
                return (connection, LoopBound(objects, loop: loop))
            }
        }

        func proxy(connection: Connection) -> Proxy {
            Proxy(connection: connection, destination: self.connection.uniqueName ?? ":0.0",
                  path: TestService.path, interface: TestService.interface)
        }
    }
}

@Suite("Connection teardown and load")
struct ConnectionLoadTests {
    @Test("closing a connection still answers its pending calls")
    func closeAnswersPending() throws {
        let fixture = try BusFixture()
        let helper = try BusFixture.Helper(fixture)
        let server = fixture.server
        let replies = Mailbox<Result<Message, DBusError>>()
        let parked = Latch()
        try fixture.onLoop { helper.service.onPark = { parked.countDown() } }
        server.sendWithReply(try helper.proxy(connection: server).makeCall("Park")) { replies.put($0) }
        #expect(parked.wait())
        try fixture.onLoop { server.close() }
        let result = try #require(replies.take())
        #expect(throws: DBusError.self) { try result.get() }
    }

    @Test("many clients calling at once all get their answers")
    func concurrentClients() throws {
        let fixture = try BusFixture()
        try fixture.exportService()
        let clients = 4
        let callsEach = 100
        let wrong = Locked(0)
        let done = Latch(count: clients)
        for index in 0..<clients {
            let connection = try Connection(.address(fixture.bus.address))
            let proxy = fixture.proxy(TestService.path, TestService.interface, connection: connection)
            try? SystemThread.detach(name: "dbus-test-replier") {
                for n in 0..<callsEach {
                    let sum = try? proxy.call("Add", .int32(Int32(index)), .int32(Int32(n)), returning: Int32.self)
                    if sum != Int32(index + n) { wrong.withLock { $0 += 1 } }
                }
                withExtendedLifetime(connection) {}
                done.countDown()
            }
        }
        #expect(done.wait(timeout: .seconds(60)))
        #expect(wrong.value == 0)
    }
}
