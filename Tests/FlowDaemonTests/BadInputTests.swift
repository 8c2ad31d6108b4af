import DBus
import FlowClient
import FlowProtocol
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
    static func expectServing(
        _ fixture: DaemonFixture, _ raw: RawFlowd, _ session: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        #expect(fixture.daemon.child.exitStatus == nil, "flowd died: \(fixture.daemon.standardError)", sourceLocation: sourceLocation)
        await #expect(throws: Never.self, sourceLocation: sourceLocation) { try await fixture.client.ping() }
        #expect(throws: Never.self, sourceLocation: sourceLocation) { try raw.session(id: session).ping() }
        #expect((try? await fixture.client.step(session).id) == "traveller", sourceLocation: sourceLocation)
    }

    @Test("wrong D-Bus signatures are refused before any handler runs")
    func wrongSignatures() async throws {
        try await withDaemon(DaemonSettings(configuration: Self.limits)) { fixture in
            let raw = try fixture.raw()
            let session = try await fixture.client.startSession(flow: "trip", locale: nil, prefill: [:])
            try await fixture.client.continueStep(session)
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
                await expectDBusError(bus, "\(member) with \(arguments.map(\.signature.rawValue))") {
                    try raw.session(id: session).call(member, arguments: arguments)
                }
                await Self.expectServing(fixture, raw, session)
            }
            for (member, arguments) in [
                ("StartSession", [DBusValue.string("trip")]),
                ("StartSession", [.string("trip"), .stringDictionary([:])]),
                ("GetSession", [.uint32(7)]),
                ("ListFlows", [.string("x")]),
            ] as [(MemberName, [DBusValue])] {
                await expectDBusError(bus, "\(member) with \(arguments.map(\.signature.rawValue))") {
                    try raw.manager.call(member, arguments: arguments)
                }
                await Self.expectServing(fixture, raw, session)
            }
            // Unknown members, interfaces, properties and objects.
            await expectDBusError("org.freedesktop.DBus.Error.UnknownMethod") { try raw.session(id: session).call("Explode") }
            await expectDBusError("org.freedesktop.DBus.Error.UnknownProperty") { _ = try raw.session(id: session).property("Nope") }
            await expectDBusError("org.freedesktop.DBus.Error.PropertyReadOnly") {
                try raw.session(id: session).setProperty("State", .string("submitted"))
            }
            await expectDBusError("org.freedesktop.DBus.Error.UnknownObject") {
                try raw.session("/org/flowd/Flow1/session/not_an_id").call("GetStep")
            }
            #expect(try await fixture.client.property(.state, of: session) == "editing")
            #expect(try await fixture.client.answers(session)["name"] == nil, "a refused SetAnswers stored nothing")
            await Self.expectServing(fixture, raw, session)
        }
    }

    @Test("bad values, unknown ids and impossible moves get flowd's named errors")
    func flowdErrors() async throws {
        try await withDaemon(DaemonSettings(configuration: Self.limits)) { fixture in
            let client = fixture.client
            let session = try await client.startSession(flow: "trip", locale: nil, prefill: [:])
            await expectDBusError(FlowdErrorName.invalidState, "Back on the first step") { try await client.back(session) }
            await Self.expectServingAt(fixture, session, step: "welcome")
            try await client.continueStep(session)

            typealias Case = (comment: String, error: String, call: @Sendable () async throws -> Void)
            let raw = try fixture.raw()
            let unknownID = "0123456789abcdef0123456789abcdef"
            let cases: [Case] = [
                // Values of the wrong type inside the variants.
                ("an integer for a text field", FlowdErrorName.invalidArgs, { try await client.setAnswers(session, ["name": .int32(5)]) }),
                ("a list for a text field", FlowdErrorName.invalidArgs, { try await client.setAnswers(session, ["email": .strings(["a@b.c"])]) }),
                ("a struct for a text field", FlowdErrorName.invalidArgs, {
                    try await client.setAnswers(session, ["name": .structure([.string("a"), .string("b")])])
                }),
                ("a dictionary", FlowdErrorName.invalidArgs, { try await client.setAnswers(session, ["name": .vardict(["x": "y"])]) }),
                ("an object path", FlowdErrorName.invalidArgs, { try await client.setAnswers(session, ["name": .objectPath("/x")]) }),
                ("a field of another step", FlowdErrorName.invalidArgs, { try await client.setAnswers(session, ["mode": "train"]) }),
                ("an unknown field", FlowdErrorName.invalidArgs, { try await client.setAnswers(session, ["favourite": "x"]) }),
                // Unknown and malformed ids.
                ("an unknown session path", FlowdErrorName.notFound, { _ = try await client.step(unknownID) }),
                ("an unknown session id", FlowdErrorName.notFound, { _ = try await client.getSession(unknownID) }),
                ("a malformed session id", FlowdErrorName.invalidArgs, { _ = try await client.getSession("nothex") }),
                ("an upper-case session id", FlowdErrorName.invalidArgs, { _ = try await client.getSession(unknownID.uppercased()) }),
                ("an empty session id", FlowdErrorName.invalidArgs, { _ = try await client.getSession("") }),
                ("an unknown flow", FlowdErrorName.notFound, {
                    _ = try await client.startSession(flow: "no-such-flow", locale: nil, prefill: [:])
                }),
                ("GoTo an unknown step", FlowdErrorName.notFound, { try await client.goTo(session, step: "nowhere") }),
                // Options of StartSession (no well-behaved client sends these: a raw call).
                ("an unknown option", FlowdErrorName.invalidArgs, {
                    try raw.manager.call("StartSession", .string("trip"), .vardict(["colour": "red"]))
                }),
                ("a locale that is not a string", FlowdErrorName.invalidArgs, {
                    try raw.manager.call("StartSession", .string("trip"), .vardict(["locale": .int32(1)]))
                }),
                ("a prefill that is not a{sv}", FlowdErrorName.invalidArgs, {
                    try raw.manager.call("StartSession", .string("trip"), .vardict(["prefill": "x"]))
                }),
                ("a prefill of the wrong type", FlowdErrorName.invalidArgs, {
                    _ = try await client.startSession(flow: "trip", locale: nil, prefill: ["name": .bool(true)])
                }),
                // Over the configured limits.
                ("a string over MaxStringLength", FlowdErrorName.limitExceeded, {
                    try await client.setAnswers(session, ["name": .string(String(repeating: "x", count: 65))])
                }),
                ("a megabyte string", FlowdErrorName.limitExceeded, {
                    try await client.setAnswers(session, ["name": .string(String(repeating: "é", count: 500_000))])
                }),
                ("a field id over MaxStringLength", FlowdErrorName.limitExceeded, {
                    try await client.setAnswers(session, [String(repeating: "f", count: 65): "x"])
                }),
                ("a flow id over MaxStringLength", FlowdErrorName.limitExceeded, {
                    _ = try await client.startSession(flow: String(repeating: "t", count: 65), locale: nil, prefill: [:])
                }),
                ("a step id over MaxStringLength", FlowdErrorName.limitExceeded, {
                    try await client.goTo(session, step: String(repeating: "s", count: 65))
                }),
                ("too many answers", FlowdErrorName.limitExceeded, {
                    try await client.setAnswers(session, ["a": "1", "b": "2", "c": "3", "d": "4"])
                }),
                ("a list over MaxListLength", FlowdErrorName.limitExceeded, {
                    try await client.setAnswers(session, ["extras": .strings(["a", "b", "c", "d", "e"])])
                }),
                ("a prefill over MaxStringLength", FlowdErrorName.limitExceeded, {
                    _ = try await client.startSession(
                        flow: "trip", locale: nil, prefill: ["name": .string(String(repeating: "p", count: 65))])
                }),
                // Moves the state does not allow.
                ("GoTo a step not visited", FlowdErrorName.invalidState, { try await client.goTo(session, step: "account") }),
                ("GoTo review early", FlowdErrorName.invalidState, { try await client.goTo(session, step: "review") }),
                ("Submit with unfinished steps", FlowdErrorName.validationFailed, { try await client.submit(session) }),
            ]
            for item in cases {
                await expectDBusError(item.error, "\(item.comment)", item.call)
                await Self.expectServing(fixture, raw, session)
            }
            // Nothing of that changed the session or made a session.
            #expect(try await client.step(session).field("name")?.isSet == false)
            #expect(try await client.listSessions().map(\.id) == [session])
            #expect(fixture.daemon.child.exitStatus == nil)
            // At the limit exactly is fine.
            #expect(try await client.setAnswers(session, ["name": .string(String(repeating: "x", count: 40)), "email": "a@example.org"]) == [:])
            // The maximum is 64 bytes of UTF-8: 32 two-byte characters fit in a field without maxLength.
            #expect(try await fixture.client.continueStep(session) == [:])
            #expect(try await client.setAnswers(session, ["mode": "other", "mode.other": .string(String(repeating: "ü", count: 32))]) == [:])
            await expectDBusError(FlowdErrorName.limitExceeded) {
                try await client.setAnswers(session, ["mode.other": .string(String(repeating: "ü", count: 33))])
            }
        }
    }

    /// ``expectServing(_:_:sourceLocation:)`` for a session on another step.
    static func expectServingAt(_ fixture: DaemonFixture, _ session: String, step: String,
                                sourceLocation: SourceLocation = #_sourceLocation) async {
        #expect(fixture.daemon.child.exitStatus == nil, sourceLocation: sourceLocation)
        await #expect(throws: Never.self, sourceLocation: sourceLocation) { try await fixture.client.ping() }
        #expect((try? await fixture.client.step(session).id) == step, sourceLocation: sourceLocation)
    }

    @Test("the total session limit: LimitExceeded, and a closed session frees its place")
    func totalSessionLimit() async throws {
        try await withDaemon(DaemonSettings(configuration: "[Limits]\nMaxSessions=3\n")) { fixture in
            let client = fixture.client
            let first = try await client.startSession(flow: "quick", locale: nil, prefill: [:])
            _ = try await client.startSession(flow: "quick", locale: nil, prefill: [:])
            _ = try await client.startSession(flow: "trip", locale: nil, prefill: [:])
            let refused = await expectDBusError(FlowdErrorName.limitExceeded) {
                _ = try await client.startSession(flow: "quick", locale: nil, prefill: [:])
            }
            #expect(refused?.isEmpty == false, "every error carries a human message")
            #expect(try await client.listSessions().count == 3)
            try await client.close(first)
            _ = try await client.startSession(flow: "quick", locale: nil, prefill: [:])
            await expectDBusError(FlowdErrorName.limitExceeded) {
                _ = try await client.startSession(flow: "quick", locale: nil, prefill: [:])
            }
            try await client.ping()
        }
    }

    @Test("concurrent StartSession calls from many connections never pass the limits together")
    func concurrentStartsRespectTheLimit() async throws {
        try await withDaemon(DaemonSettings(configuration: "[Limits]\nMaxSessionsPerUser=5\n")) { fixture in
            let connections = 12
            var clients: [FlowClient] = []
            for _ in 0..<connections {
                let client = try fixture.connect()
                try await client.ping()
                clients.append(client)
            }
            // Every connection is up: now all of them start sessions at once.
            let ready = clients
            let results = await withTaskGroup(of: String.self) { group in
                for client in ready {
                    for _ in 0..<2 {
                        group.addTask {
                            do throws(FlowClientError) {
                                _ = try await client.startSession(flow: "quick", locale: nil, prefill: [:])
                                return "started"
                            } catch {
                                return error.name?.rawValue ?? error.description
                            }
                        }
                    }
                }
                var outcomes: [String] = []
                for await outcome in group { outcomes.append(outcome) }
                return outcomes
            }
            #expect(results.count == connections * 2)
            #expect(results.filter { $0 == "started" }.count == 5, "\(results)")
            #expect(results.filter { $0 == FlowdErrorName.limitExceeded }.count == connections * 2 - 5, "\(results)")
            let listed = try await fixture.client.listSessions()
            #expect(listed.count == 5)
            #expect(try await fixture.client.sessionCount() == 5)
        }
    }

    @Test("a client that disconnects in the middle does not disturb the daemon")
    func clientGoesAway() async throws {
        try await withDaemon { fixture in
            let leaving = try fixture.raw()
            let session = try await fixture.client.startSession(flow: "trip", locale: nil, prefill: [:])
            // Send calls without waiting for their replies, then vanish.
            for _ in 0..<50 {
                leaving.connection.send(try leaving.session(id: session).makeCall("GetStep"))
                leaving.connection.send(try leaving.session(id: session).makeCall("Continue"))
            }
            leaving.connection.close()
            #expect(try await fixture.client.step(session).id.isEmpty == false)
            try await fixture.client.ping()
        }
    }
}
