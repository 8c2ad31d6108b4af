import DBus
import FlowClient
import FlowProtocol
import Foundation
import Reactor
import Testing
import TestSupport

/// FlowClient against a real dbus-daemon and the built flowd: every member,
/// its events, a restart of flowd, calls from threads that are not its loop,
/// cancellation, timeouts and replies or signals it must not believe.
@Suite("FlowClient through a real bus and flowd")
struct ClientTests {
    @Test("every Manager and Session member, typed; flowd's errors carry their D-Bus name and message")
    func everyMember() async throws {
        try await withDaemon { fixture in
            let client = fixture.client
            #expect(try await client.version().isEmpty == false)
            #expect(try await client.sessionCount() == 0)
            #expect(try await client.listFlows().map(\.id).sorted() == ["durable", "quick", "trip"])
            #expect(try await client.listPlugins().isEmpty)
            try await client.ping()
            #expect(try await client.serviceOwner() != nil)

            // StartSession with a locale and prefill; the listings agree.
            let trip = try await client.startSession(flow: "trip", locale: "de", prefill: ["name": "Ada"])
            #expect(try await client.getSession(trip) == sessionPath(trip))
            let listing = try #require(try await client.listSessions().first { $0.id == trip })
            #expect(listing.flowID == "trip" && listing.state == .editing && listing.path == sessionPath(trip))
            #expect(try await client.step(trip).kind == .content)
            #expect(try await client.continueStep(trip) == [:])
            let traveller = try await client.step(trip)
            #expect(traveller.id == "traveller" && traveller.field("name")?.value == "Ada", "prefill")
            #expect(traveller.continueLabel == "Weiter")
            #expect(try await client.setAnswers(trip, ["email": "not an address"]).keys.sorted() == ["email"])
            try await client.back(trip)
            #expect(try await client.property(.currentStep, of: trip) == "welcome")
            try await client.goTo(trip, step: "traveller")
            #expect(try await client.property(.currentStep, of: trip) == "traveller")

            // Review, answers, properties, submit, close.
            let durable = try await client.start("durable")
            #expect(try await client.setAnswers(durable, ["n": "7", "pin": "4711"]) == [:])
            #expect(try await client.continueStep(durable) == [:])
            #expect(try await client.continueStep(durable) == [:])
            let review = try await client.review(durable)
            #expect(review.group("counter")?.display("n") == "7")
            #expect(try await client.answers(durable) == ["n": "7"], "the secure answer is left out")
            let properties = try await client.properties(durable)
            for property in SessionProperty.allCases {
                #expect(try await client.property(property, of: durable) == properties.value(of: property), "\(property)")
            }
            #expect(properties.state == .review && properties.owner == getuid() && properties.flowID == "durable")
            try await client.submit(durable)
            #expect(try await client.property(.state, of: durable) == "submitted")
            let refused = await #expect(throws: FlowClientError.self) { try await client.cancel(durable) }
            #expect(refused?.kind == .flowd(.invalidState))
            #expect(refused?.name == FlowErrorName.invalidState.errorName)
            #expect(refused?.message.isEmpty == false)
            try await client.close(durable)
            let gone = await #expect(throws: FlowClientError.self) { _ = try await client.step(durable) }
            #expect(gone?.kind == .flowd(.notFound))
            try await client.reload()
            #expect(try await client.sessionCount() == 1)

            // An id that is not one is refused before anything is sent, as flowd would.
            let malformed = await #expect(throws: FlowClientError.self) { _ = try await client.step("../x") }
            #expect(malformed?.name == FlowErrorName.invalidArgs.errorName)
        }
    }

    @Test("a second client follows a session through its events: applying PropertiesChanged keeps it equal to GetAll")
    func propertyChangesStream() async throws {
        try await withDaemon { fixture in
            let client = fixture.client
            let session = try await client.start("trip")
            let watcher = try fixture.connect()
            let events = try await watcher.events(for: session)
            var mirror = try await watcher.properties(session)
            let calls: [@Sendable () async throws -> Void] = [
                { try await client.continueStep(session) },
                { try await client.setAnswers(session, ["name": "Ada", "email": "ada@example.org"]) },
                { try await client.continueStep(session) },
                { try await client.setAnswers(session, ["mode": "plane"]) },
                { try await client.continueStep(session) },
                { try await client.back(session) },
            ]
            var applied = 0
            for call in calls {
                try await call()
                // flowd sends a call's signals before it answers a later one.
                try await watcher.ping()
                for event in events.drain() {
                    guard case .propertiesChanged(let id, let changed) = event else { continue }
                    #expect(id == session)
                    for (property, value) in changed { try mirror.set(property, from: value) }
                    applied += changed.count
                }
                // UpdatedAt goes out with other changes, never alone: a mirror may hold an older time.
                var fresh = try await watcher.properties(session)
                #expect(fresh.updatedAt >= mirror.updatedAt)
                fresh.updatedAt = mirror.updatedAt
                #expect(mirror == fresh)
            }
            #expect(applied > 10, "the watcher saw the changes (\(applied))")

            // The events as an AsyncSequence: read with for-await until the step is completed.
            try await client.continueStep(session)
            var completed: String?
            for await event in events {
                if case .session(_, .stepCompleted(let step, _)) = event {
                    completed = step
                    break
                }
            }
            #expect(completed == "mode")
            events.cancel()
            #expect(events.isFinished)
        }
    }

    @Test("flowd restarts mid-session: the client says so, resubscribes, and the session is read again",
          arguments: [false, true])
    func restartMidSession(systemMode: Bool) async throws {
        try await withDaemon(DaemonSettings(systemMode: systemMode)) { fixture in
            let client = fixture.client
            let session = try await client.start("trip")
            try await client.continueStep(session)
            try await client.setAnswers(session, ["name": "Ada"])
            let watcherClient = try fixture.connect()
            let watcher = try await EventWatcher(watcherClient, session: session)
            let before = try await watcherClient.step(session)

            #expect(await fixture.stop() == .exited(0))
            #expect(await watcher.next { $0 == .serviceLost } != nil, "no serviceLost when flowd left")
            let outage = await #expect(throws: FlowClientError.self) { _ = try await watcherClient.step(session) }
            #expect(outage?.kind == .notRunning, "\(String(describing: outage))")

            try await fixture.startAgain()
            #expect(await watcher.next { $0 == .reconnected } != nil, "no reconnected once flowd was back")
            // It hears about the session again before it calls it itself: the
            // system service sends a session's signals only to its callers, and
            // the client called the session again when flowd came back.
            try await client.setAnswers(session, ["email": "ada@example.org"])
            #expect(await watcher.nextPropertyChange(.canContinue, of: session) == .bool(true))
            // What a UI does on reconnected: read the session again.
            var expected = before
            expected.canContinue = true
            expected.fields = expected.fields.map { field in
                var field = field
                if field.id == "email" { field.value = "ada@example.org"; field.isSet = true }
                return field
            }
            #expect(try await watcherClient.step(session) == expected)
        }
    }

    @Test("the bus restarts: the client connects again by itself, and says so once flowd is back")
    func busRestart() async throws {
        try await withDaemon { fixture in
            // Reach the bus by its socket: a restarted bus has another guid.
            let client = try FlowClient(bus: .address(fixture.bus.socketAddress))
            let session = try await client.start("quick")
            let watcher = try await EventWatcher(client, session: session)

            try fixture.bus.restart()
            #expect(await watcher.next { $0 == .serviceLost } != nil, "no serviceLost when the bus went away")
            // flowd lost its bus too, and stops (systemd would start it again).
            #expect(await fixture.daemon.ended(timeout: .seconds(30)) != nil)
            try await fixture.startAgain()
            #expect(await watcher.next { $0 == .reconnected } != nil, "no reconnected once the bus and flowd were back")
            #expect(try await client.step(session).id == "rating")
            try await client.setAnswers(session, ["stars": .int64(5)])
            #expect(await watcher.nextPropertyChange(.canContinue, of: session) == .bool(true))
        }
    }

    @Test("calls from threads that are neither the client's loop nor a task, at once")
    func foreignThreads() async throws {
        try await withDaemon { fixture in
            let client = fixture.client
            let session = try await client.start("quick")
            let results = Locked<[String]>([])
            for index in 0..<4 {
                Foundation.Thread {
                    let outcome: String
                    do throws(FlowClientError) {
                        outcome = try Blocking.run { () async throws(FlowClientError) -> String in
                            try await client.step(session).id
                        }
                    } catch {
                        outcome = "thread \(index): \(error)"
                    }
                    results.withLock { $0.append(outcome) }
                }.start()
            }
            #expect(await waitUntil { results.value.count == 4 })
            #expect(results.value == Array(repeating: "rating", count: 4))
        }
    }

    @Test("cancelling an awaiting call ends the wait at once; the client goes on working")
    func cancellation() async throws {
        let settings = DaemonSettings(flows: PluginFlows.submitFlows, plugins: ["FixtureTestPlugin"])
        try await withDaemon(settings) { fixture in
            let client = fixture.client
            let session = try await client.startSession(flow: "slow", locale: nil, prefill: [:])
            try await client.setAnswers(session, ["name": "Ada"])
            try await client.continueStep(session)
            // The slow action takes two minutes: the submit waits until its task is cancelled.
            let submitting = Task { () -> FlowClientError? in
                do throws(FlowClientError) {
                    try await client.submit(session)
                    return nil
                } catch {
                    return error
                }
            }
            let other = try fixture.connect()
            #expect(await SubmitTests.waitForState(other, session, "submitting"))
            submitting.cancel()
            let error = await submitting.value
            #expect(error?.kind == .cancelled, "\(String(describing: error))")
            // flowd was not told (Cancel is a call of its own): the action still runs.
            #expect(try await client.property(.state, of: session) == "submitting")
            try await client.cancel(session)
            #expect(try await client.property(.state, of: session) == "review")

            // A call whose task is already cancelled is not sent at all.
            let early = await Task { () -> FlowClientError? in
                withUnsafeCurrentTask { $0?.cancel() }
                do throws(FlowClientError) {
                    try await client.setAnswers(session, ["name": "Grace"])
                    return nil
                } catch {
                    return error
                }
            }.value
            #expect(early?.kind == .cancelled)
            #expect(try await client.step(session).id == "review")
            #expect(try await client.answers(session)["name"] == "Ada", "the cancelled call never reached flowd")
        }
    }

    @Test("each call waits its own time: a short submit timeout ends in noReply while flowd goes on")
    func timeouts() async throws {
        let settings = DaemonSettings(flows: PluginFlows.submitFlows, plugins: ["FixtureTestPlugin"])
        try await withDaemon(settings) { fixture in
            let session = try await fixture.client.start("slow")
            try await fixture.client.setAnswers(session, ["name": "Ada"])
            try await fixture.client.continueStep(session)
            var configuration = FlowClient.Configuration(bus: .address(fixture.bus.address))
            configuration.submitTimeout = .milliseconds(300)
            let impatient = try FlowClient(configuration)
            let error = await #expect(throws: FlowClientError.self) { try await impatient.submit(session) }
            #expect(error?.kind == .noReply, "\(String(describing: error))")
            #expect(error?.message.contains("Submit") == true)
            // Ordinary calls keep their own, longer timeout.
            #expect(try await impatient.property(.state, of: session) == "submitting")
            try await impatient.cancel(session)
        }
    }

    @Test("a signal that does not come from flowd is not believed")
    func impostorSignals() async throws {
        try await withDaemon { fixture in
            let client = fixture.client
            let session = try await client.start("quick")
            let watcherClient = try fixture.connect()
            let watcher = try await EventWatcher(watcherClient, session: session)
            let target = try #require(try await watcherClient.uniqueName())
            // Another connection sends the watcher a session signal of its own.
            let impostor = try fixture.raw()
            let forged = Message.signal(path: sessionPath(session), interface: FlowBus.sessionInterface, member: "Announcement")
            try forged.append(.string("forged"))
            forged.destination = target
            impostor.connection.send(forged)
            // The bus has handled the forged signal once it answers the impostor.
            _ = try impostor.connection.nameHasOwner(FlowBus.name)
            // A real one from flowd, after it.
            try await client.setAnswers(session, ["stars": .int64(4)])
            try await client.continueStep(session)
            let received = try await watcher.drain { events in
                events.contains { if case .session(_, .announcement) = $0 { true } else { false } }
            }
            let texts = received.compactMap { event -> String? in
                if case .session(_, .announcement(let text)) = event { return text }
                return nil
            }
            #expect(texts == ["Step 2 of 2, Comment"], "\(received)")
        }
    }
}

/// FlowClient against a stand-in for flowd that owns its name and answers
/// what the contract does not allow: every reply is refused with a clear
/// error, and the client goes on.
@Suite("FlowClient and replies that break the contract")
struct HostileReplyTests {
    /// The stand-in: Manager and Session tables with flowd's signatures and wrong contents.
    final class FakeFlowd: @unchecked Sendable {
        let bus: PrivateBus
        let thread: EventLoopThread
        let connection: Connection
        let objects: LoopBound<ObjectServer>

        init() throws {
            bus = try PrivateBus()
            thread = try EventLoopThread(name: "fake-flowd")
            let address = bus.address
            let loop = thread.loop
            (connection, objects) = try thread.sync { () throws(DBusError) -> (Connection, LoopBound<ObjectServer>) in
                let connection = try Connection(.address(address), logger: .discard)
                try connection.attach(to: loop)
                return (connection, LoopBound(ObjectServer(connection: connection), loop: loop))
            }
            let objects = self.objects
            let connection = self.connection
            try thread.sync { () throws(DBusError) in
                try objects.value.export(Fake(), at: FlowBus.managerPath, interfaces: [Self.manager])
                try objects.value.exportTree(
                    under: FlowBus.sessionPrefix, interfaces: [Self.session], children: { _, _, done in done([]) }, resolve: { _ in Fake() })
                _ = try connection.requestName(FlowBus.name)
            }
        }

        deinit {
            let connection = self.connection
            thread.sync { connection.close() }
            thread.stop()
            bus.stop()
        }

        struct Fake: Sendable {}

        static let manager = InterfaceTable<Fake>(
            FlowBus.managerInterface,
            methods: [
                // An entry without its id, and one whose steps is a string.
                .init(FlowMember.Manager.listFlows, out: [Argument("flows", "aa{sv}")]) { _, call in
                    call.reply(.vardicts([["title": "No id"], ["id": "x", "title": "X", "steps": "two"]]))
                },
                // A state that is not one.
                .init(FlowMember.Manager.listSessions, out: [Argument("sessions", "a(ssos)")]) { _, call in
                    call.reply(.array(elementType: "(ssos)", [
                        .structure([.string("a"), .string("b"), .objectPath("/x"), .string("asleep")]),
                    ]))
                },
                // Not a session's path.
                .init(FlowMember.Manager.startSession, in: [Argument("flow", "s"), Argument("options", "a{sv}")],
                      out: [Argument("session", "o")]) { _, call in
                    call.reply(.objectPath("/elsewhere"))
                },
            ],
            properties: [.read(ManagerProperty.sessionCount.name, String.self) { _ in "many" }])

        static let session = InterfaceTable<Fake>(
            FlowBus.sessionInterface,
            methods: [
                .init(FlowMember.Session.getStep, out: [Argument("step", "a{sv}")]) { _, call in
                    call.reply(.vardict(["id": "s", "kind": "wizard", "title": "T"]))
                },
                // The wrong reply signature altogether.
                .init(FlowMember.Session.setAnswers, in: [Argument("answers", "a{sv}")], out: [Argument("errors", "as")]) {
                    _, call in call.reply(.strings(["no"]))
                },
            ])
    }

    @Test("each malformed reply is a protocolMismatch naming what is wrong; nothing crashes; the client goes on")
    func malformedReplies() async throws {
        let fake = try FakeFlowd()
        let client = try FlowClient(bus: .address(fake.bus.address))
        let id = String(repeating: "a", count: 32)
        let cases: [(String, @Sendable () async throws(FlowClientError) -> Void)] = [
            ("\"id\"", { () async throws(FlowClientError) in _ = try await client.listFlows() }),
            ("asleep", { () async throws(FlowClientError) in _ = try await client.listSessions() }),
            ("path", { () async throws(FlowClientError) in _ = try await client.startSession(flow: "x", locale: nil, prefill: [:]) }),
            ("\"wizard\"", { () async throws(FlowClientError) in _ = try await client.step(id) }),
            ("'as', expected 'a{ss}'", { () async throws(FlowClientError) in _ = try await client.setAnswers(id, [:]) }),
            ("'s', expected 'u'", { () async throws(FlowClientError) in _ = try await client.sessionCount() }),
            ("older version", { () async throws(FlowClientError) in try await client.back(id) }),
        ]
        for (fragment, call) in cases {
            do throws(FlowClientError) {
                try await call()
                Issue.record("a malformed reply was accepted (\(fragment))")
            } catch {
                #expect(error.kind == .protocolMismatch, "\(fragment): \(error)")
                #expect(error.message.contains(fragment), "\(fragment): \(error.message)")
            }
        }
        try await client.ping()
    }
}
