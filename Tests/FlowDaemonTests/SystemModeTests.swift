import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// flowd as the system service (`--system`, here pointed at a private bus
/// through `DBUS_SYSTEM_BUS_ADDRESS`): a session's signals go only to the
/// connections that called it, never to the whole bus, so another user
/// cannot watch someone's answers go by.
@Suite("System mode: signals only to a session's callers", .enabled(if: ExternalClient.canSwitchUser, "needs root and setpriv"))
struct SystemModeTests {
    @Test("another uid's monitor sees no session signals; only connections that called the session get them",
          arguments: ["--system", "--address of a bus another user runs"])
    func signalsStayWithCallers(bus: String) async throws {
        // The second: privacy is decided by the bus, not by the option (a
        // bus whose daemon runs as another user, as the system bus does).
        let settings = bus == "--system"
            ? DaemonSettings(allowUsers: [ExternalClient.nobody], systemMode: true)
            : DaemonSettings(allowUsers: [ExternalClient.nobody], busUser: "nobody")
        try await withDaemon(settings) { fixture in
            let nobody = ExternalClient(fixture, uid: ExternalClient.nobody)
            let spy = try nobody.monitor()
            defer { spy.terminate(grace: .seconds(2)) }

            // The creator subscribed before starting; a bystander (also root) never called the session.
            let creator = fixture.client
            let creatorEvents = try await EventWatcher(creator)
            let bystanderClient = try fixture.connect()
            let bystander = try await EventWatcher(bystanderClient)

            let session = try await creator.start("trip")
            try await creator.continueStep(session)
            try await creator.setAnswers(session, ["name": "Root's private name", "email": "root@example.org"])
            try await creator.continueStep(session)

            // The creator gets the session's signals.
            #expect(await creatorEvents.nextManagerSignal { $0 == .sessionNew(id: session) } != nil)
            #expect(await creatorEvents.nextSignal(of: session) { if case .stepCompleted("traveller", _) = $0 { true } else { false } } != nil)
            #expect(await creatorEvents.nextPropertyChange(.currentStep, of: session) { $0 == .string("mode") } != nil)

            // The bystander gets none of them, but does get the broadcast
            // session count (proof that it listens and signals reach it).
            #expect(await bystander.next { if case .sessionCount = $0 { true } else { false } } == .sessionCount(1))
            // Everything flowd sent the bystander before answering its Ping.
            let received = try await bystander.drain()
            #expect(!received.contains { $0.sessionID == session }, "\(received)")
            #expect(!received.contains { if case .manager(.sessionNew) = $0 { true } else { false } })

            // Once the bystander calls the session, it gets what follows.
            #expect(try await bystanderClient.property(.currentStep, of: session) == "mode")
            try await creator.setAnswers(session, ["mode": "plane"])
            #expect(await bystander.nextPropertyChange(.stepCount, of: session) { $0 == .uint32(7) } != nil)

            // nobody's monitor saw the broadcast count and nothing of root's session.
            #expect(spy.waitForOutput { $0.contains("SessionCount") }, "\(spy.standardOutput) \(spy.standardError)")
            try await creator.ping()
            try await creator.close(session)
            #expect(await creatorEvents.nextManagerSignal { $0 == .sessionRemoved(id: session) } != nil)
            #expect(spy.waitForOutput { $0.contains("'SessionCount': <uint32 0>") }, "\(spy.standardOutput)")
            let seen = spy.standardOutput
            #expect(!seen.contains(session), "another uid saw root's session: \(seen)")
            #expect(!seen.contains("Root's private name"))
            #expect(!seen.contains("StepCompleted") && !seen.contains("Announcement"))
        }
    }
}
