import DBus
import FlowdSystem
import Logging
import Reactor
import Testing
import TestSupport

/// Bus connections flowd reads itself (`BusLink`): the authentication, the
/// hand-over after `Hello`, messages cut anywhere by the reads, the answers
/// libdbus used to give (compared with a connection libdbus still reads),
/// replies and their timeouts without libdbus' pending calls, and the end of
/// the connection.
@Suite("The own receive path")
struct OwnReceivePathTests {
    // MARK: authentication and Hello

    @Test("a bus that refuses EXTERNAL, or closes during the authentication, is a clear error")
    func authenticationFailures() throws {
        let refusing = try FakeBus { peer in
            _ = peer.readLine()
            try peer.write("REJECTED DBUS_COOKIE_SHA1 ANONYMOUS\r\n")
            _ = peer.readLine()
        }
        let refused = #expect(throws: DBusError.self) { try Connection(.address(refusing.address)) }
        #expect(refused?.name == "org.freedesktop.DBus.Error.AuthFailed")
        #expect(refused?.message == "the bus refused EXTERNAL authentication as uid \(CurrentProcess.userID) (it offers: DBUS_COOKIE_SHA1 ANONYMOUS)")

        let closing = try FakeBus { peer in _ = peer.readLine() }
        let closed = #expect(throws: DBusError.self) { try Connection(.address(closing.address)) }
        #expect(closed?.name == "org.freedesktop.DBus.Error.AuthFailed")
        #expect(closed?.message == "the bus closed the connection during authentication")

        let garbling = try FakeBus { peer in
            _ = peer.readLine()
            try peer.write("OK 0123\r\n")
            _ = peer.readLine()
            try peer.write("WHAT\u{1}\r\n")
        }
        let garbled = #expect(throws: DBusError.self) { try Connection(.address(garbling.address)) }
        #expect(garbled?.message == "the bus sent a line that is not ASCII text during authentication")

        let closingAfterBegin = try FakeBus { peer in
            try peer.authenticate()
            _ = try peer.readMessage()  // Hello, never answered
        }
        let noHello = #expect(throws: DBusError.self) { try Connection(.address(closingAfterBegin.address)) }
        #expect(noHello?.name == .disconnected)
        for bus in [refusing, closing, garbling, closingAfterBegin] {
            #expect(bus.finished.wait())
            #expect(bus.failure.value == nil)
        }
    }

    @Test("a socket that is not there fails as libdbus fails")
    func noSocket() throws {
        let directory = try TemporaryDirectory(prefix: "flowd-nobus")
        let error = #expect(throws: DBusError.self) { try Connection(.address("unix:path=\(directory.file("none"))")) }
        #expect(error?.name == .fileNotFoundForTests)
        #expect(error?.message == "Failed to connect to socket \(directory.file("none")): No such file or directory")
    }

    // MARK: the hand-over and the framing

    @Test("NameAcquired, sent right after the Hello reply, reaches a subscription made before attaching")
    func nameAcquiredAfterHello() throws {
        let bus = try PrivateBus()
        let thread = try EventLoopThread(name: "own-receive")
        defer { thread.stop() }
        let loop = thread.loop
        let seen = Mailbox<String>()
        let address = bus.address
        let connection = try thread.sync { () throws(DBusError) -> Connection in
            let connection = try Connection(.address(address))
            _ = connection.subscribe(MatchRule(interface: .bus, member: "NameAcquired")) { message in
                var reader = message.arguments()
                seen.put((try? reader.next(String.self)) ?? "-")
            }
            try connection.attach(to: loop)
            return connection
        }
        #expect(seen.take() == connection.uniqueName?.rawValue)
        thread.sync { connection.close() }

        // In client mode, the same signal is waiting for nextSignal.
        let client = try Connection(.address(address))
        let signal = try client.nextSignal(matching: MatchRule(interface: .bus, member: "NameAcquired"), timeout: .seconds(20))
        var reader = try #require(signal).arguments()
        #expect(try reader.next(String.self) == client.uniqueName?.rawValue)
    }

    @Test("messages split at every byte across reads, and several in one read, all arrive in order")
    func splitAtEveryByte() throws {
        let messages = try ["one", "two", "three"].map { try FakePeer.signal("Test", $0) }
        let stream = messages.flatMap { $0 }
        let bus = try FakeBus { peer in
            try peer.authenticate()
            // The Hello reply and the first message in one read.
            try peer.writeAndWaitUntilRead(ArraySlice(try peer.helloReply() + messages[0]))
            for split in 1..<stream.count {
                try peer.writeAndWaitUntilRead(stream[..<split])
                try peer.writeAndWaitUntilRead(stream[split...])
            }
            // The rest byte by byte.
            for byte in stream { try peer.writeAndWaitUntilRead([byte]) }
            _ = peer.readLine()  // until the client closes
        }
        let connection = try Connection(.address(bus.address))
        #expect(connection.uniqueName?.rawValue == FakePeer.uniqueName)
        var texts: [String] = []
        while texts.count < 1 + 3 * stream.count, let signal = try connection.nextSignal(timeout: .seconds(20)) {
            var reader = signal.arguments()
            texts.append(try reader.next(String.self))
        }
        #expect(texts.count == 1 + 3 * stream.count)
        #expect(texts == ["one"] + Array(repeating: ["one", "two", "three"], count: stream.count).flatMap { $0 })
        connection.close()
        #expect(bus.finished.wait())
        #expect(bus.failure.value == nil)
    }

    @Test("bytes that are not a D-Bus message end the connection: disconnect handlers run")
    func malformedStream() throws {
        let bus = try FakeBus { peer in
            try peer.authenticate()
            try peer.writeAndWaitUntilRead(ArraySlice(try peer.helloReply()))
            try peer.writeAndWaitUntilRead(ArraySlice(Array("this is not D-Bus at all".utf8)))
            _ = peer.readLine()
        }
        let thread = try EventLoopThread(name: "own-receive")
        defer { thread.stop() }
        let loop = thread.loop
        let gone = Latch()
        let address = bus.address
        let connection = try thread.sync { () throws(DBusError) -> Connection in
            let connection = try Connection(.address(address))
            connection.onDisconnect { gone.countDown() }
            try connection.attach(to: loop)
            return connection
        }
        #expect(gone.wait())
        #expect(thread.sync { connection.isConnected } == false)
        thread.sync { connection.close() }
        #expect(bus.finished.wait())
    }

    @Test("a call carrying a file descriptor is read with it and routed: a handler's signature check answers, and the connection goes on")
    func callWithDescriptor() throws {
        let fixture = try BusFixture(libdbusClient: true)
        try fixture.exportService()
        let call = Message.methodCall(destination: fixture.serverName, path: TestService.path, interface: TestService.interface, member: "Add")
        try call.append(.int32(1), .unixFD(try UnixFD(duplicating: FileDescriptor.pipe().read)))
        let error = #expect(throws: DBusError.self) { try fixture.client.call(call) }
        #expect(error?.name == .invalidArgs)
        #expect(error?.message.hasSuffix("got 'ih'") == true, "the handler saw the call's own signature: \(error?.message ?? "")")
        let sum = try fixture.proxy(TestService.path, TestService.interface).call("Add", .int32(2), .int32(3), returning: Int32.self)
        #expect(sum == 5)
    }

    // MARK: what libdbus answered

    /// The calls libdbus answers itself, or answers for a missing handler.
    static let unansweredCalls: [(interface: InterfaceName?, member: MemberName, path: ObjectPath)] = [
        (.peer, "Ping", "/"),
        (.peer, "GetMachineId", "/anywhere"),
        (.peer, "Nope", "/"),
        ("org.flowd.Nobody", "Nothing", "/org/flowd/Nobody"),
        (nil, "NoInterface", "/"),
    ]

    @Test("Peer calls and unknown methods are answered as libdbus answers them")
    func peerAndUnknownLikeLibDBus() throws {
        let bus = try PrivateBus()
        let thread = try EventLoopThread(name: "own-receive")
        defer { thread.stop() }
        let loop = thread.loop
        let address = bus.address
        let (own, libdbus) = try thread.sync { () throws(DBusError) -> (Connection, Connection) in
            let own = try Connection(.address(address))
            let libdbus = try Connection(.address(address), libdbusReads: true)
            try own.attach(to: loop)
            try libdbus.attach(to: loop)
            return (own, libdbus)
        }
        let client = try Connection(.address(address))
        func answer(_ server: Connection, _ call: (interface: InterfaceName?, member: MemberName, path: ObjectPath)) throws -> String {
            let message = Message.methodCall(destination: server.uniqueName, path: call.path, interface: call.interface, member: call.member)
            try message.append(.string("an argument"))
            do {
                let reply = try client.call(message)
                return "return \(reply.signature.rawValue) \(try reply.readArguments())"
            } catch {
                return "error \(error.name.rawValue): \(error.message)"
            }
        }
        for call in Self.unansweredCalls {
            let expected = try answer(libdbus, call)
            #expect(try answer(own, call) == expected, "\(call.interface?.rawValue ?? "-").\(call.member)")
        }
        #expect(try answer(own, Self.unansweredCalls[0]) == "return  []")
        thread.sync {
            own.close()
            libdbus.close()
        }
    }

    // MARK: replies

    @Test("a reply after its call timed out is dropped, and later calls still get theirs")
    func replyAfterTimeout() throws {
        let fixture = try BusFixture()
        let helper = try BusFixture.Helper(fixture)
        let server = fixture.server
        let results = Mailbox<String>()
        let target = helper.proxy(connection: server)
        let parked = Latch()
        try fixture.onLoop { helper.service.onPark = { parked.countDown() } }
        server.sendWithReply(try target.makeCall("Park"), timeout: .milliseconds(50)) { result in
            switch result {
            case .success: results.put("park ok")
            case .failure(let error): results.put("park \(error.name.rawValue): \(error.message)")
            }
        }
        #expect(parked.wait())
        let timedOut = try #require(results.take())
        #expect(timedOut.hasPrefix("park org.freedesktop.DBus.Error.NoReply: Did not receive a reply."))
        // Now the parked call is answered: the late reply finds no one.
        server.sendWithReply(try target.makeCall("ReleaseParked", arguments: ["late"])) { result in
            results.put((try? result.get()) == nil ? "release failed" : "released")
        }
        #expect(results.take() == "released")
        server.sendWithReply(try target.makeCall("Add", arguments: [.int32(1), .int32(2)])) { result in
            var reader = (try? result.get())?.arguments()
            results.put("add \((try? reader?.next(Int32.self)).flatMap { $0 }.map(String.init) ?? "-")")
        }
        #expect(results.take() == "add 3")
        #expect(results.take(timeout: .milliseconds(200)) == nil, "the late reply reached no handler")
    }

    @Test("the bus going away fails the calls that wait and runs the disconnect handlers")
    func disconnectWithCallsPending() throws {
        let fixture = try BusFixture()
        let helper = try BusFixture.Helper(fixture)
        let server = fixture.server
        let results = Mailbox<String>()
        let parked = Latch(count: 3)
        try fixture.onLoop { helper.service.onPark = { parked.countDown() } }
        server.onDisconnect { results.put("disconnected") }
        for _ in 0..<3 {
            server.sendWithReply(try helper.proxy(connection: server).makeCall("Park")) { result in
                if case .failure(let error) = result { results.put(error.name.rawValue) }
            }
        }
        #expect(parked.wait())
        fixture.bus.stop()
        var seen: [String] = []
        for _ in 0..<4 { seen.append(results.take() ?? "nothing") }
        #expect(seen.sorted() == ["disconnected"] + Array(repeating: "org.freedesktop.DBus.Error.Disconnected", count: 3))
        #expect(try fixture.onLoop { server.isConnected } == false)
        // A call after the end fails at once.
        server.sendWithReply(Message.methodCall(destination: .bus, path: "/", interface: .peer, member: "Ping")) { result in
            if case .failure(let error) = result { results.put(error.name.rawValue) }
        }
        #expect(results.take() == "org.freedesktop.DBus.Error.Disconnected")
    }
}
