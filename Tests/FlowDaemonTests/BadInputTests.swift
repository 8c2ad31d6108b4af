import DBus
import Foundation
import Testing
import TestSupport

/// Wrong types, unknown ids, oversized values and impossible moves each get
/// their precise named error, and the daemon keeps serving.
@Suite("Bad input gets the right error and the daemon stays up")
struct BadInputTests {
    static let limits = """
        # Small limits, so that going over them is cheap.
        [Limits]
        MaxStringLength=64
        MaxAnswersPerCall=3
        MaxListLength=4
        """

    /// The daemon still answers a Ping and a real call, and is still running.
    static func expectServing(_ fixture: DaemonFixture, _ session: SessionClient, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(fixture.daemon.child.exitStatus == nil, "flowd died: \(fixture.daemon.standardError)", sourceLocation: sourceLocation)
        #expect(throws: Never.self, sourceLocation: sourceLocation) { try fixture.client.ping() }
        #expect(throws: Never.self, sourceLocation: sourceLocation) { try session.ping() }
        #expect((try? session.step().id) == "traveller", sourceLocation: sourceLocation)
    }

    @Test("wrong D-Bus signatures are refused before any handler runs")
    func wrongSignatures() throws {
        try withDaemon(DaemonSettings(configuration: Self.limits)) { fixture in
            let session = try fixture.client.start("trip")
            try session.next()
            let bus = FlowdErrorName.dbusInvalidArgs
            let cases: [(MemberName, [DBusValue])] = [
                ("SetAnswers", [.string("name")]),
                ("SetAnswers", [.stringDictionary(["name": "Ada"])]),
                ("SetAnswers", []),
                ("SetAnswers", [.vardict(["name": "Ada"]), .string("extra")]),
                ("GetStep", [.string("unexpected")]),
                ("GoTo", [.uint32(1)]),
                ("Continue", [.bool(true)]),
                // One field named twice: refused, not settled by picking a value.
                ("SetAnswers", [.dictionary(keyType: .string, valueType: .variant, [
                    DBusDictEntry(key: .string("name"), value: .variant(.string("Ada"))),
                    DBusDictEntry(key: .string("name"), value: .variant(.string("Grace"))),
                ])]),
            ]
            for (member, arguments) in cases {
                expectDBusError(bus, "\(member) with \(arguments.map(\.signature.rawValue))") {
                    try session.proxy.call(member, arguments: arguments)
                }
                Self.expectServing(fixture, session)
            }
            for (member, arguments) in [
                ("StartSession", [DBusValue.string("trip")]),
                ("StartSession", [.string("trip"), .stringDictionary([:])]),
                ("GetSession", [.uint32(7)]),
                ("ListFlows", [.string("x")]),
            ] as [(MemberName, [DBusValue])] {
                expectDBusError(bus, "\(member) with \(arguments.map(\.signature.rawValue))") {
                    try fixture.client.manager.call(member, arguments: arguments)
                }
                Self.expectServing(fixture, session)
            }
            // Unknown members, interfaces, properties and objects.
            expectDBusError("org.freedesktop.DBus.Error.UnknownMethod") { try session.proxy.call("Explode") }
            expectDBusError("org.freedesktop.DBus.Error.UnknownProperty") { _ = try session.property("Nope") }
            expectDBusError("org.freedesktop.DBus.Error.PropertyReadOnly") { try session.proxy.setProperty("State", .string("submitted")) }
            expectDBusError("org.freedesktop.DBus.Error.UnknownObject") {
                try fixture.client.session("/org/flowd/Flow1/session/not_an_id").proxy.call("GetStep")
            }
            #expect(try session.state() == "editing")
            #expect(try session.answers()["name"] == nil, "a refused SetAnswers stored nothing")
            Self.expectServing(fixture, session)
        }
    }

    @Test("bad values, unknown ids and impossible moves get flowd's named errors")
    func flowdErrors() throws {
        try withDaemon(DaemonSettings(configuration: Self.limits)) { fixture in
            let client = fixture.client
            let session = try client.start("trip")
            expectDBusError(FlowdErrorName.invalidState, "Back on the first step") { try session.back() }
            Self.expectServingAt(fixture, session, step: "welcome")
            try session.next()

            typealias Case = (comment: String, error: String, call: () throws -> Void)
            let unknownID = "0123456789abcdef0123456789abcdef"
            let cases: [Case] = [
                // Values of the wrong type inside the variants.
                ("an integer for a text field", FlowdErrorName.invalidArgs, { try session.set(["name": .int32(5)]) }),
                ("a list for a text field", FlowdErrorName.invalidArgs, { try session.set(["email": .strings(["a@b.c"])]) }),
                ("a struct for a text field", FlowdErrorName.invalidArgs, {
                    try session.set(["name": .structure([.string("a"), .string("b")])])
                }),
                ("a dictionary", FlowdErrorName.invalidArgs, { try session.set(["name": .vardict(["x": "y"])]) }),
                ("an object path", FlowdErrorName.invalidArgs, { try session.set(["name": .objectPath("/x")]) }),
                ("a field of another step", FlowdErrorName.invalidArgs, { try session.set(["mode": "train"]) }),
                ("an unknown field", FlowdErrorName.invalidArgs, { try session.set(["favourite": "x"]) }),
                // Unknown and malformed ids.
                ("an unknown session path", FlowdErrorName.notFound, {
                    _ = try client.session(try ObjectPath("/org/flowd/Flow1/session/\(unknownID)")).step()
                }),
                ("an unknown session id", FlowdErrorName.notFound, { _ = try client.getSession(unknownID) }),
                ("a malformed session id", FlowdErrorName.invalidArgs, { _ = try client.getSession("nothex") }),
                ("an upper-case session id", FlowdErrorName.invalidArgs, { _ = try client.getSession(unknownID.uppercased()) }),
                ("an empty session id", FlowdErrorName.invalidArgs, { _ = try client.getSession("") }),
                ("an unknown flow", FlowdErrorName.notFound, { _ = try client.start("no-such-flow") }),
                ("GoTo an unknown step", FlowdErrorName.notFound, { try session.goTo("nowhere") }),
                // Options of StartSession.
                ("an unknown option", FlowdErrorName.invalidArgs, { _ = try client.start("trip", options: ["colour": "red"]) }),
                ("a locale that is not a string", FlowdErrorName.invalidArgs, { _ = try client.start("trip", options: ["locale": .int32(1)]) }),
                ("a prefill that is not a{sv}", FlowdErrorName.invalidArgs, { _ = try client.start("trip", options: ["prefill": "x"]) }),
                ("a prefill of the wrong type", FlowdErrorName.invalidArgs, {
                    _ = try client.start("trip", options: ["prefill": .vardict(["name": .bool(true)])])
                }),
                // Over the configured limits.
                ("a string over MaxStringLength", FlowdErrorName.limitExceeded, { try session.set(["name": .string(String(repeating: "x", count: 65))]) }),
                ("a megabyte string", FlowdErrorName.limitExceeded, { try session.set(["name": .string(String(repeating: "é", count: 500_000))]) }),
                ("a field id over MaxStringLength", FlowdErrorName.limitExceeded, { try session.set([String(repeating: "f", count: 65): "x"]) }),
                ("a flow id over MaxStringLength", FlowdErrorName.limitExceeded, { _ = try client.start(String(repeating: "t", count: 65)) }),
                ("a step id over MaxStringLength", FlowdErrorName.limitExceeded, { try session.goTo(String(repeating: "s", count: 65)) }),
                ("too many answers", FlowdErrorName.limitExceeded, { try session.set(["a": "1", "b": "2", "c": "3", "d": "4"]) }),
                ("a list over MaxListLength", FlowdErrorName.limitExceeded, { try session.set(["extras": .strings(["a", "b", "c", "d", "e"])]) }),
                ("a prefill over MaxStringLength", FlowdErrorName.limitExceeded, {
                    _ = try client.start("trip", options: ["prefill": .vardict(["name": .string(String(repeating: "p", count: 65))])])
                }),
                // Moves the state does not allow.
                ("GoTo a step not visited", FlowdErrorName.invalidState, { try session.goTo("account") }),
                ("GoTo review early", FlowdErrorName.invalidState, { try session.goTo("review") }),
                ("Submit with unfinished steps", FlowdErrorName.validationFailed, { try session.submit() }),
            ]
            for item in cases {
                expectDBusError(item.error, "\(item.comment)", item.call)
                Self.expectServing(fixture, session)
            }
            // Nothing of that changed the session or made a session.
            #expect(try session.step().field("name")?.isSet == false)
            #expect(try client.listSessions().map(\.id) == [session.id])
            #expect(fixture.daemon.child.exitStatus == nil)
            // At the limit exactly is fine.
            #expect(try session.set(["name": .string(String(repeating: "x", count: 40)), "email": "a@example.org"]) == [:])
            // The maximum is 64 bytes of UTF-8: 32 two-byte characters fit in a field without maxLength.
            #expect(try session.next() == [:])
            #expect(try session.set(["mode": "other", "mode.other": .string(String(repeating: "ü", count: 32))]) == [:])
            expectDBusError(FlowdErrorName.limitExceeded) {
                try session.set(["mode.other": .string(String(repeating: "ü", count: 33))])
            }
        }
    }

    /// ``expectServing(_:_:sourceLocation:)`` for a session on another step.
    static func expectServingAt(_ fixture: DaemonFixture, _ session: SessionClient, step: String,
                                sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(fixture.daemon.child.exitStatus == nil, sourceLocation: sourceLocation)
        #expect(throws: Never.self, sourceLocation: sourceLocation) { try fixture.client.ping() }
        #expect((try? session.step().id) == step, sourceLocation: sourceLocation)
    }

    @Test("the total session limit: LimitExceeded, and a closed session frees its place")
    func totalSessionLimit() throws {
        try withDaemon(DaemonSettings(configuration: "[Limits]\nMaxSessions=3\n")) { fixture in
            let first = try fixture.client.start("quick")
            _ = try fixture.client.start("quick")
            _ = try fixture.client.start("trip")
            let refused = expectDBusError(FlowdErrorName.limitExceeded) { _ = try fixture.client.start("quick") }
            #expect(refused?.message.isEmpty == false, "every error carries a human message")
            #expect(try fixture.client.listSessions().count == 3)
            try first.close()
            _ = try fixture.client.start("quick")
            expectDBusError(FlowdErrorName.limitExceeded) { _ = try fixture.client.start("quick") }
            try fixture.client.ping()
        }
    }

    @Test("concurrent StartSession calls from many connections never pass the limits together")
    func concurrentStartsRespectTheLimit() throws {
        try withDaemon(DaemonSettings(configuration: "[Limits]\nMaxSessionsPerUser=5\n")) { fixture in
            let threads = 12
            let outcomes = Locked<[String]>([])
            let done = Latch(count: threads)
            let gate = Latch(count: 1)
            let address = fixture.bus.address
            for _ in 0..<threads {
                Foundation.Thread {
                    defer { done.countDown() }
                    guard let client = try? FlowClient(address: address) else {
                        outcomes.withLock { $0.append("no connection") }
                        return
                    }
                    defer { client.connection.close() }
                    _ = gate.wait(timeout: .seconds(30))
                    for _ in 0..<2 {
                        do {
                            _ = try client.start("quick")
                            outcomes.withLock { $0.append("started") }
                        } catch let error as DBusError {
                            outcomes.withLock { $0.append(error.name.rawValue) }
                        } catch {
                            outcomes.withLock { $0.append("\(error)") }
                        }
                    }
                }.start()
            }
            gate.countDown()
            #expect(done.wait(timeout: .seconds(60)))
            let results = outcomes.value
            #expect(results.count == threads * 2)
            #expect(results.filter { $0 == "started" }.count == 5, "\(results)")
            #expect(results.filter { $0 == FlowdErrorName.limitExceeded }.count == threads * 2 - 5, "\(results)")
            let listed = try fixture.client.listSessions()
            #expect(listed.count == 5)
            #expect(try fixture.client.manager.property("SessionCount", as: UInt32.self) == 5)
        }
    }

    @Test("a client that disconnects in the middle does not disturb the daemon")
    func clientGoesAway() throws {
        try withDaemon { fixture in
            let leaving = try fixture.connect()
            let session = try leaving.start("trip")
            // Send calls without waiting for their replies, then vanish.
            for _ in 0..<50 {
                leaving.connection.send(try session.proxy.makeCall("GetStep"))
                leaving.connection.send(try session.proxy.makeCall("Continue"))
            }
            leaving.connection.close()
            let path = session.path
            let mine = fixture.client.session(path)
            #expect(try mine.step().id.isEmpty == false)
            try fixture.client.ping()
        }
    }
}
