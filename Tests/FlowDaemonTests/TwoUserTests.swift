import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// Sessions belong to the uid that created them, as the bus driver reports
/// it. The second uid is `nobody`, reached with `setpriv` (the tests run as
/// root) on a private bus that admits both.
@Suite("Two users", .enabled(if: ExternalClient.canSwitchUser, "needs root and setpriv"))
struct TwoUserTests {
    static let session = "org.flowd.Flow1.Session"
    static let manager = "org.flowd.Flow1.Manager"
    static let properties = "org.freedesktop.DBus.Properties"

    @Test("another uid is denied every method and property of a session; root administers; ListSessions is per uid")
    func ownership() async throws {
        try await withDaemon(DaemonSettings(allowUsers: [ExternalClient.nobody])) { fixture in
            let nobody = ExternalClient(fixture, uid: ExternalClient.nobody)
            let rootSession = try await fixture.client.start("trip")
            try await fixture.client.continueStep(rootSession)
            try await fixture.client.setAnswers(rootSession, ["name": "Root's secret name"])

            // nobody starts and uses its own session.
            let started = try nobody.gdbusOK("/org/flowd/Flow1", "\(Self.manager).StartSession", ["'quick'", "{}"])
            let nobodyPath = try #require(gvariantQuotedStrings(started).first)
            let nobodyID = String(nobodyPath.split(separator: "/").last ?? "")
            #expect(try nobody.gdbusOK(nobodyPath, "\(Self.session).SetAnswers", ["{'stars': <int64 3>}"]) == "(@a{ss} {},)")
            #expect(try nobody.gdbusOK(nobodyPath, "\(Self.properties).Get", [Self.session, "Owner"]) == "(<uint32 65534>,)")
            #expect(try nobody.gdbusOK("/org/flowd/Flow1", "\(Self.manager).GetSession", ["'\(nobodyID)'"])
                    == "(objectpath '\(nobodyPath)',)")

            // Every method and property of root's session is refused to nobody.
            let denied = FlowdErrorName.accessDenied
            let path = sessionPath(rootSession).rawValue
            for (method, arguments) in [
                ("GetStep", []), ("SetAnswers", ["{'name': <'Mallory'>}"]), ("Continue", []), ("Back", []),
                ("GoTo", ["'welcome'"]), ("GetReview", []), ("GetAnswers", []), ("Submit", []), ("Cancel", []),
                ("Close", []), ("SubmitWithOptions", ["{'wait': <false>}"]),
            ] as [(String, [String])] {
                try nobody.gdbusFails(path, "\(Self.session).\(method)", arguments, with: denied)
            }
            for property in ["State", "CurrentStep", "Owner", "Id", "Path", "LastError"] {
                try nobody.gdbusFails(path, "\(Self.properties).Get", [Self.session, property], with: denied)
            }
            try nobody.gdbusFails(path, "\(Self.properties).GetAll", [Self.session], with: denied)
            try nobody.gdbusFails("/org/flowd/Flow1", "\(Self.manager).GetSession", ["'\(rootSession)'"], with: denied)
            // Nothing nobody tried changed root's session.
            let step = try await fixture.client.step(rootSession)
            #expect(step.id == "traveller")
            #expect(step.field("name")?.value == .string("Root's secret name"))

            // ListSessions: nobody sees its own; root sees both.
            let nobodysList = try nobody.gdbusOK("/org/flowd/Flow1", "\(Self.manager).ListSessions")
            #expect(nobodysList.contains(nobodyID) && !nobodysList.contains(rootSession), "\(nobodysList)")
            #expect(Set(try await fixture.client.listSessions().map(\.id)) == [rootSession, nobodyID])

            // Root administers nobody's session.
            #expect(try await fixture.client.property(.owner, of: nobodyID) == .uint32(ExternalClient.nobody))
            #expect(try await fixture.client.answers(nobodyID)["stars"] == .int64(3))
            #expect(try await fixture.client.getSession(nobodyID).rawValue == nobodyPath)
            #expect(try await fixture.client.continueStep(nobodyID) == [:])
            #expect(try nobody.gdbusOK(nobodyPath, "\(Self.properties).Get", [Self.session, "CurrentStep"]) == "(<'comment'>,)")

            // Reload is root's alone.
            try nobody.gdbusFails("/org/flowd/Flow1", "\(Self.manager).Reload", with: denied)
            try await fixture.client.reload()

            // The daemon is still there for both.
            try await fixture.client.ping()
            try nobody.gdbusOK("/org/flowd/Flow1", "org.freedesktop.DBus.Peer.Ping")
        }
    }

    @Test("the session limit is per uid")
    func perUserLimit() async throws {
        let configuration = "[Limits]\nMaxSessionsPerUser=2\n"
        try await withDaemon(DaemonSettings(configuration: configuration, allowUsers: [ExternalClient.nobody])) { fixture in
            let nobody = ExternalClient(fixture, uid: ExternalClient.nobody)
            _ = try await fixture.client.start("quick")
            _ = try await fixture.client.start("quick")
            await expectDBusError(FlowdErrorName.limitExceeded) { _ = try await fixture.client.start("quick") }
            // Root's full quota does not count against nobody.
            try nobody.gdbusOK("/org/flowd/Flow1", "\(Self.manager).StartSession", ["'quick'", "{}"])
            try nobody.gdbusOK("/org/flowd/Flow1", "\(Self.manager).StartSession", ["'quick'", "{}"])
            try nobody.gdbusFails(
                "/org/flowd/Flow1", "\(Self.manager).StartSession", ["'quick'", "{}"], with: FlowdErrorName.limitExceeded)
            #expect(try await fixture.client.listSessions().count == 4)
        }
    }
}
