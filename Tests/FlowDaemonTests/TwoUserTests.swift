import DBus
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
    func ownership() throws {
        try withDaemon(DaemonSettings(allowUsers: [ExternalClient.nobody])) { fixture in
            let nobody = ExternalClient(fixture, uid: ExternalClient.nobody)
            let rootSession = try fixture.client.start("trip")
            try rootSession.next()
            try rootSession.set(["name": "Root's secret name"])

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
            let path = rootSession.path.rawValue
            for (method, arguments) in [
                ("GetStep", []), ("SetAnswers", ["{'name': <'Mallory'>}"]), ("Continue", []), ("Back", []),
                ("GoTo", ["'welcome'"]), ("GetReview", []), ("GetAnswers", []), ("Submit", []), ("Cancel", []),
                ("Close", []),
            ] as [(String, [String])] {
                try nobody.gdbusFails(path, "\(Self.session).\(method)", arguments, with: denied)
            }
            for property in ["State", "CurrentStep", "Owner", "Id", "Path", "LastError"] {
                try nobody.gdbusFails(path, "\(Self.properties).Get", [Self.session, property], with: denied)
            }
            try nobody.gdbusFails(path, "\(Self.properties).GetAll", [Self.session], with: denied)
            try nobody.gdbusFails("/org/flowd/Flow1", "\(Self.manager).GetSession", ["'\(rootSession.id)'"], with: denied)
            // Nothing nobody tried changed root's session.
            let step = try rootSession.step()
            #expect(step.id == "traveller")
            #expect(step.field("name")?.value == .string("Root's secret name"))

            // ListSessions: nobody sees its own; root sees both.
            let nobodysList = try nobody.gdbusOK("/org/flowd/Flow1", "\(Self.manager).ListSessions")
            #expect(nobodysList.contains(nobodyID) && !nobodysList.contains(rootSession.id), "\(nobodysList)")
            #expect(Set(try fixture.client.listSessions().map(\.id)) == [rootSession.id, nobodyID])

            // Root administers nobody's session.
            let nobodysSession = fixture.client.session(try ObjectPath(nobodyPath))
            #expect(try nobodysSession.uint32("Owner") == ExternalClient.nobody)
            #expect(try nobodysSession.answers()["stars"] == .int64(3))
            #expect(try fixture.client.getSession(nobodyID).rawValue == nobodyPath)
            #expect(try nobodysSession.next() == [:])
            #expect(try nobody.gdbusOK(nobodyPath, "\(Self.properties).Get", [Self.session, "CurrentStep"]) == "(<'comment'>,)")

            // Reload is root's alone.
            try nobody.gdbusFails("/org/flowd/Flow1", "\(Self.manager).Reload", with: denied)
            try fixture.client.reload()

            // The daemon is still there for both.
            try fixture.client.ping()
            try nobody.gdbusOK("/org/flowd/Flow1", "org.freedesktop.DBus.Peer.Ping")
        }
    }

    @Test("the session limit is per uid")
    func perUserLimit() throws {
        let configuration = "[Limits]\nMaxSessionsPerUser=2\n"
        try withDaemon(DaemonSettings(configuration: configuration, allowUsers: [ExternalClient.nobody])) { fixture in
            let nobody = ExternalClient(fixture, uid: ExternalClient.nobody)
            _ = try fixture.client.start("quick")
            _ = try fixture.client.start("quick")
            expectDBusError(FlowdErrorName.limitExceeded) { _ = try fixture.client.start("quick") }
            // Root's full quota does not count against nobody.
            try nobody.gdbusOK("/org/flowd/Flow1", "\(Self.manager).StartSession", ["'quick'", "{}"])
            try nobody.gdbusOK("/org/flowd/Flow1", "\(Self.manager).StartSession", ["'quick'", "{}"])
            try nobody.gdbusFails(
                "/org/flowd/Flow1", "\(Self.manager).StartSession", ["'quick'", "{}"], with: FlowdErrorName.limitExceeded)
            #expect(try fixture.client.listSessions().count == 4)
        }
    }
}
