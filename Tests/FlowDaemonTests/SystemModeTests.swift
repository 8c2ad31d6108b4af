import DBus
import Foundation
import Testing
import TestSupport

/// flowd as the system service (`--system`, here pointed at a private bus
/// through `DBUS_SYSTEM_BUS_ADDRESS`): a session's signals go only to the
/// connections that called it, never to the whole bus, so another user
/// cannot watch someone's answers go by.
@Suite("System mode: signals only to a session's callers", .enabled(if: ExternalClient.canSwitchUser, "needs root and setpriv"))
struct SystemModeTests {
    @Test("another uid's monitor sees no session signals; only connections that called the session get them")
    func signalsStayWithCallers() throws {
        let settings = DaemonSettings(allowUsers: [ExternalClient.nobody], systemMode: true)
        try withDaemon(settings) { fixture in
            let nobody = ExternalClient(fixture, uid: ExternalClient.nobody)
            let spy = try nobody.monitor()
            defer { spy.terminate(grace: .seconds(2)) }

            // The creator subscribed before starting; a bystander (also root) never called the session.
            let creator = fixture.client
            try creator.watchFlowd()
            let bystander = try fixture.connect()
            try bystander.watchFlowd()

            let session = try creator.start("trip")
            try session.next()
            try session.set(["name": "Root's private name", "email": "root@example.org"])
            try session.next()

            // The creator gets the session's signals.
            #expect(try creator.nextSignal("SessionNew", path: FlowClient.managerPath) != nil)
            #expect(try creator.nextSignal("StepCompleted", path: session.path) { message in
                var reader = message.arguments()
                return (try? reader.next(String.self)) == "traveller"
            } != nil)
            #expect(try creator.nextPropertyChange("CurrentStep", path: session.path) { $0 == .string("mode") } != nil)

            // The bystander gets none of them, but does get the broadcast
            // session count (proof that it listens and signals reach it).
            #expect(try bystander.nextPropertyChange(
                "SessionCount", path: FlowClient.managerPath, interface: FlowClient.managerInterface) == .uint32(1))
            // Everything flowd sent the bystander before answering its Ping.
            let received = try bystander.drainSignals()
            #expect(!received.contains { $0.path == session.path }, "\(received.map { $0.member?.rawValue ?? "" })")
            #expect(!received.contains { $0.member == "SessionNew" })

            // Once the bystander calls the session, it gets what follows.
            #expect(try bystander.session(session.path).string("CurrentStep") == "mode")
            try session.set(["mode": "plane"])
            #expect(try bystander.nextPropertyChange("StepCount", path: session.path) { $0 == .uint32(7) } != nil)

            // nobody's monitor saw the broadcast count and nothing of root's session.
            #expect(spy.waitForOutput { $0.contains("SessionCount") }, "\(spy.standardOutput) \(spy.standardError)")
            try creator.ping()
            try session.close()
            #expect(try creator.nextSignal("SessionRemoved", path: FlowClient.managerPath) != nil)
            #expect(spy.waitForOutput { $0.contains("'SessionCount': <uint32 0>") }, "\(spy.standardOutput)")
            let seen = spy.standardOutput
            #expect(!seen.contains(session.id), "another uid saw root's session: \(seen)")
            #expect(!seen.contains("Root's private name"))
            #expect(!seen.contains("StepCompleted") && !seen.contains("Announcement"))
        }
    }
}
