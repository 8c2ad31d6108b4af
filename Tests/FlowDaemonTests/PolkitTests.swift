import DBus
import FlowClient
import FlowProtocol
import FlowdSystem
import Foundation
import Testing
import TestSupport

/// The system service asks polkit about callers who are neither a session's
/// owner nor root, through the bus with the caller's unique name as subject.
/// Here polkit is ``FakePolkit`` on the test's private bus (flowd with
/// `--system` pointed at it); the real polkitd is in e2e/system.
@Suite("polkit on the system bus", .enabled(if: ExternalClient.canSwitchUser, "needs root and setpriv"))
struct PolkitTests {
    static let session = "org.flowd.Flow1.Session"
    static let manager = "org.flowd.Flow1.Manager"
    static let manage = "org.flowd.Flow1.manage-sessions"
    static let reload = "org.flowd.Flow1.reload"
    static let interactiveRequired = "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"

    @Test("another user's session: polkit's no refuses, its yes lets them read and close it; owners and root are never asked")
    func manageSessions() async throws {
        try await withDaemon(DaemonSettings(allowUsers: [ExternalClient.nobody], systemMode: true)) { fixture in
            let polkit = try FakePolkit(address: fixture.bus.address, answers: [Self.manage: .notAuthorized])
            let nobody = ExternalClient(fixture, uid: ExternalClient.nobody)
            let rootSession = try await fixture.client.start("trip")
            let path = sessionPath(rootSession).rawValue

            // Refused, after polkit was asked about nobody's own unique name, without interaction.
            try nobody.gdbusFails(path, "\(Self.session).GetStep", with: FlowdErrorName.accessDenied)
            let asked = try #require(polkit.questions.last)
            #expect(asked.subjectKind == "system-bus-name" && asked.subjectName.hasPrefix(":"), "\(asked)")
            #expect(asked.action == Self.manage && asked.flags == 0)
            #expect(polkit.questions.count == 1)
            // The flag reaches polkit as AllowUserInteraction.
            var interactive = nobody
            interactive.interactive = true
            try interactive.gdbusFails(path, "\(Self.session).GetStep", with: FlowdErrorName.accessDenied)
            #expect(polkit.questions.last?.flags == 1)

            // Root and owners are never asked.
            let before = polkit.questions.count
            #expect(try await fixture.client.step(rootSession).id == "welcome")
            let started = try nobody.gdbusOK("/org/flowd/Flow1", "\(Self.manager).StartSession", ["'quick'", "{}"])
            let nobodyPath = try #require(gvariantQuotedStrings(started).first)
            try nobody.gdbusOK(nobodyPath, "\(Self.session).GetStep")
            #expect(polkit.questions.count == before)

            // polkit says yes: nobody reads root's session and closes it.
            polkit.setAnswer(.authorized, for: Self.manage)
            #expect(try nobody.gdbusOK(path, "org.freedesktop.DBus.Properties.Get", [Self.session, "Owner"]) == "(<uint32 0>,)")
            try nobody.gdbusOK(path, "\(Self.session).Close")
            await #expect(throws: FlowClientError.self) { try await fixture.client.step(rootSession) }
            #expect(polkit.questions.allSatisfy { $0.action == Self.manage })

            // The audit trail: the refusal and the access, with uid, session and action.
            #expect(await waitUntil {
                let log = fixture.daemon.standardError
                return log.contains("uid 65534 refused: not authorized to use session \(rootSession)")
                    && log.contains("uid 65534 allowed: session \(rootSession) of uid 0, by polkit (\(Self.manage))")
            }, "\(fixture.daemon.standardError)")
            let lines = fixture.daemon.standardError.split(separator: "\n").filter { $0.contains("uid 65534 refused") }
            #expect(lines.allSatisfy { $0.contains("session=\(rootSession)") && $0.contains("action=\(Self.manage)") && $0.contains("uid=65534") })
            // Owners using their own sessions are not administrative.
            #expect(!fixture.daemon.standardError.contains("allowed: session \(String(nobodyPath.split(separator: "/").last ?? ""))"))
        }
    }

    @Test("ListSessions and GetSession: another user's sessions with manage-sessions; the listing never prompts; no question without others' sessions")
    func listAndFind() async throws {
        try await withDaemon(DaemonSettings(allowUsers: [ExternalClient.nobody], systemMode: true)) { fixture in
            let polkit = try FakePolkit(address: fixture.bus.address, answers: [Self.manage: .challenge])
            var nobody = ExternalClient(fixture, uid: ExternalClient.nobody)
            nobody.interactive = true
            let started = try nobody.gdbusOK("/org/flowd/Flow1", "\(Self.manager).StartSession", ["'quick'", "{}"])
            let nobodyID = try #require(gvariantQuotedStrings(started).first?.split(separator: "/").last.map(String.init))
            // Only nobody's own session exists: polkit is not asked.
            #expect(gvariantQuotedStrings(try nobody.gdbusOK("/org/flowd/Flow1", "\(Self.manager).ListSessions")).contains(nobodyID))
            #expect(polkit.questions.isEmpty)

            let rootSession = try await fixture.client.start("trip")
            // A challenge: nobody's own list, without an error, and polkit
            // was asked without interaction although nobody allowed it.
            var listed = gvariantQuotedStrings(try nobody.gdbusOK("/org/flowd/Flow1", "\(Self.manager).ListSessions"))
            #expect(listed.contains(nobodyID) && !listed.contains(rootSession), "\(listed)")
            #expect(polkit.questions.map(\.flags) == [0] && polkit.questions.first?.action == Self.manage)
            // GetSession of root's session passes the flag on and is refused.
            try nobody.gdbusFails("/org/flowd/Flow1", "\(Self.manager).GetSession", ["'\(rootSession)'"], with: Self.interactiveRequired)
            #expect(polkit.questions.last?.flags == 1)
            // GetSession of nobody's own asks nobody.
            let asked = polkit.questions.count
            try nobody.gdbusOK("/org/flowd/Flow1", "\(Self.manager).GetSession", ["'\(nobodyID)'"])
            #expect(polkit.questions.count == asked)

            // polkit says yes: every session is listed, root's is found.
            polkit.setAnswer(.authorized, for: Self.manage)
            listed = gvariantQuotedStrings(try nobody.gdbusOK("/org/flowd/Flow1", "\(Self.manager).ListSessions"))
            #expect(listed.contains(nobodyID) && listed.contains(rootSession), "\(listed)")
            let found = try nobody.gdbusOK("/org/flowd/Flow1", "\(Self.manager).GetSession", ["'\(rootSession)'"])
            #expect(found == "(objectpath '\(sessionPath(rootSession).rawValue)',)")
            // Root lists every session without a question.
            let before = polkit.questions.count
            #expect(try await fixture.client.listSessions().map(\.id).sorted() == [nobodyID, rootSession].sorted())
            #expect(polkit.questions.count == before)
            // The list of everyone's sessions is audited; refusals of it are not (nobody just saw their own).
            #expect(await waitUntil {
                fixture.daemon.standardError.contains("uid 65534 allowed: listing every user's sessions, by polkit (\(Self.manage))")
            }, "\(fixture.daemon.standardError)")
            #expect(!fixture.daemon.standardError.contains("refused: authentication is required to list"))
        }
    }

    @Test("flowctl: on a terminal its calls allow interactive authorization; --no-ask-password and no terminal do not; the refusal says what to do")
    func flowctlFlag() async throws {
        try await withDaemon(DaemonSettings(allowUsers: [ExternalClient.nobody], systemMode: true)) { fixture in
            let polkit = try FakePolkit(address: fixture.bus.address, answers: [Self.manage: .challenge])
            let nobody = ExternalClient(fixture, uid: ExternalClient.nobody)
            let rootSession = try await fixture.client.start("trip")
            let flowctl = BuildProducts.directory(holding: "flowctl") + "/flowctl"
            let show = [flowctl, "--address", nobody.address, "show", rootSession]
            /// flowctl as nobody, on a terminal (`script` gives it one) or not; what polkit was asked and what it printed.
            func run(_ arguments: [String], terminal: Bool) throws -> (flags: UInt32?, output: String) {
                let before = polkit.questions.count
                let result = terminal
                    ? try nobody.run("script", ["-qec", arguments.map(shellQuoted).joined(separator: " "), "/dev/null"])
                    : try nobody.run(arguments[0], Array(arguments.dropFirst()))
                #expect(result.status != .exited(0), "flowctl read root's session: \(result.standardOutput)")
                #expect(polkit.questions.count == before + 1)
                return (polkit.questions.last?.flags, result.standardOutput + result.standardError)
            }
            let onTerminal = try run(show, terminal: true)
            #expect(onTerminal.flags == 1)
            #expect(try run(show + ["--no-ask-password"], terminal: true).flags == 0)
            let piped = try run(show, terminal: false)
            #expect(piped.flags == 0)
            // The refusal: flowctl's sentence, with flowd's reason.
            #expect(piped.output.contains("Authentication is required: run flowctl on a terminal, without --no-ask-password"), "\(piped.output)")
            #expect(piped.output.contains("call again allowing interactive authorization"), "\(piped.output)")
            #expect(onTerminal.output.contains("no authentication agent could ask for it"), "\(onTerminal.output)")

            // polkit's yes: flowctl on a terminal shows root's session.
            polkit.setAnswer(.authorized, for: Self.manage)
            let shown = try nobody.run("script", ["-qec", show.map(shellQuoted).joined(separator: " "), "/dev/null"])
            #expect(shown.status == .exited(0), "\(shown.standardOutput)")
        }
    }

    @Test("Reload: polkit's challenge is InteractiveAuthorizationRequired, with and without the flag; its yes reloads")
    func reload() async throws {
        try await withDaemon(DaemonSettings(allowUsers: [ExternalClient.nobody], systemMode: true)) { fixture in
            let polkit = try FakePolkit(address: fixture.bus.address, answers: [Self.reload: .challenge])
            var nobody = ExternalClient(fixture, uid: ExternalClient.nobody)
            try nobody.gdbusFails("/org/flowd/Flow1", "\(Self.manager).Reload", with: Self.interactiveRequired)
            // The message tells the caller what to do.
            let refused = try nobody.gdbus("/org/flowd/Flow1", "\(Self.manager).Reload")
            #expect(refused.standardError.contains(
                "authentication is required to reload flowd (polkit action \(Self.reload)): call again allowing interactive authorization"),
                "\(refused.standardError)")
            nobody.interactive = true
            try nobody.gdbusFails("/org/flowd/Flow1", "\(Self.manager).Reload", with: Self.interactiveRequired)
            #expect(polkit.questions.map(\.flags) == [0, 0, 1])
            #expect(polkit.questions.allSatisfy { $0.action == Self.reload })

            polkit.setAnswer(.authorized, for: Self.reload)
            #expect(try nobody.gdbusOK("/org/flowd/Flow1", "\(Self.manager).Reload") == "()")
            // Root reloads without a question.
            try await fixture.client.reload()
            #expect(polkit.questions.count == 4)
        }
    }

    /// `quick` again, as `guarded`, which needs `org.example.enrol-device` to start.
    static let flows = TestFlows.standard.merging([
        "guarded.json": TestFlows.quick
            .replacingOccurrences(of: #""id": "quick""#, with: #""id": "guarded", "authorization": "org.example.enrol-device""#),
    ]) { $1 }

    @Test("a flow's authorization: asked at StartSession with the caller's flag; challenge, no, yes; root and other flows not asked")
    func flowAuthorization() async throws {
        try await withDaemon(DaemonSettings(flows: Self.flows, allowUsers: [ExternalClient.nobody], systemMode: true)) { fixture in
            let polkit = try FakePolkit(address: fixture.bus.address, answers: ["org.example.enrol-device": .challenge])
            var nobody = ExternalClient(fixture, uid: ExternalClient.nobody)
            let start = ["'guarded'", "{}"]
            try nobody.gdbusFails("/org/flowd/Flow1", "\(Self.manager).StartSession", start, with: Self.interactiveRequired)
            nobody.interactive = true
            try nobody.gdbusFails("/org/flowd/Flow1", "\(Self.manager).StartSession", start, with: Self.interactiveRequired)
            polkit.setAnswer(.notAuthorized, for: "org.example.enrol-device")
            try nobody.gdbusFails("/org/flowd/Flow1", "\(Self.manager).StartSession", start, with: FlowdErrorName.accessDenied)
            #expect(polkit.questions.map(\.flags) == [0, 1, 1])
            #expect(polkit.questions.allSatisfy { $0.action == "org.example.enrol-device" && $0.subjectKind == "system-bus-name" })
            #expect(try await fixture.client.sessionCount() == 0, "a refused start made a session")

            polkit.setAnswer(.authorized, for: "org.example.enrol-device")
            let started = try nobody.gdbusOK("/org/flowd/Flow1", "\(Self.manager).StartSession", start)
            let path = try #require(gvariantQuotedStrings(started).first)
            #expect(try nobody.gdbusOK(path, "org.freedesktop.DBus.Properties.Get", [Self.session, "FlowId"]) == "(<'guarded'>,)")
            // Root and a flow without authorization: no question.
            _ = try await fixture.client.start("guarded")
            try nobody.gdbusOK("/org/flowd/Flow1", "\(Self.manager).StartSession", ["'quick'", "{}"])
            #expect(polkit.questions.count == 4)
            // An unknown flow is NotFound, not a question.
            try nobody.gdbusFails("/org/flowd/Flow1", "\(Self.manager).StartSession", ["'nosuch'", "{}"], with: FlowdErrorName.notFound)
            #expect(polkit.questions.count == 4)
        }
    }

    @Test("polkit stuck or gone: other callers are refused with a reason (fail closed); owners and root go on, other calls are not held up")
    func failClosed() async throws {
        try await withDaemon(DaemonSettings(allowUsers: [ExternalClient.nobody], systemMode: true)) { fixture in
            let polkit = try FakePolkit(address: fixture.bus.address, answers: [Self.manage: .silent])
            let nobody = ExternalClient(fixture, uid: ExternalClient.nobody)
            let rootSession = try await fixture.client.start("trip")
            let path = sessionPath(rootSession).rawValue

            // While polkit keeps nobody waiting, root's calls are answered.
            let stuck = try nobody.spawn(
                "gdbus", ["call", "--address", nobody.address, "--dest", "org.flowd.Flow1", "--object-path", path,
                          "--method", "\(Self.session).GetStep"])
            defer { stuck.terminate(grace: .seconds(1)) }
            #expect(await waitUntil { polkit.questions.count == 1 })
            #expect(try await fixture.client.step(rootSession).id == "welcome")
            // polkit's other answers are not queued behind the stuck one.
            polkit.setAnswer(.authorized, for: Self.reload)
            #expect(try nobody.gdbusOK("/org/flowd/Flow1", "\(Self.manager).Reload") == "()")
            #expect(polkit.questions.count == 2)
            // flowd's time limit refuses the stuck call.
            let ended = await stuck.ended(before: MonotonicClock.now().advanced(by: .seconds(40)))
            #expect(ended != nil && ended != .exited(0))
            #expect(stuck.standardError.contains("AccessDenied") && stuck.standardError.contains("polkit did not answer within"),
                    "\(stuck.standardError)")

            // polkit gone.
            polkit.stop()
            let result = try nobody.gdbus(path, "\(Self.session).GetStep")
            #expect(result.status != .exited(0))
            #expect(result.standardError.contains("AccessDenied") && result.standardError.contains("polkit is not available"),
                    "\(result.standardError)")
            try nobody.gdbusFails("/org/flowd/Flow1", "\(Self.manager).Reload", with: FlowdErrorName.accessDenied)
            // The owner and root are not affected.
            let started = try nobody.gdbusOK("/org/flowd/Flow1", "\(Self.manager).StartSession", ["'quick'", "{}"])
            let nobodyPath = try #require(gvariantQuotedStrings(started).first)
            try nobody.gdbusOK(nobodyPath, "\(Self.session).GetStep")
            #expect(try await fixture.client.step(rootSession).id == "welcome")
        }
    }
}
