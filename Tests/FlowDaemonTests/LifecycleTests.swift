import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// Readiness, status, watchdog and stopping, as systemd sees them through a
/// test `NOTIFY_SOCKET`; restarts that serve the same sessions again.
@Suite("flowd lifecycle")
struct LifecycleTests {
    @Test("READY=1 once the name is owned, STATUS= with live counts, WATCHDOG=1, STOPPING=1 and exit 0 on SIGTERM")
    func notifications() async throws {
        // The watchdog interval is short so that pings come quickly; flowd
        // pings at half of it.
        try await withDaemon(DaemonSettings(environment: ["WATCHDOG_USEC": "400000"])) { fixture in
        let notify = fixture.daemon.notify

        // READY=1 arrived (the fixture waited for it) and the name is owned.
        #expect(notify.values(of: "READY") == ["1"])
        #expect(try await fixture.client.serviceOwner() != nil)
        let first = try #require(notify.waitForAssignment("STATUS"), "no STATUS= after READY=1")
        #expect(first.contains("0 sessions"), "\(first)")
        #expect(first.contains("3 flows"), "\(first)")

        // The status follows the number of sessions.
        _ = try await fixture.client.start("trip")
        _ = try await fixture.client.start("quick")
        let later = notify.waitForAssignment("STATUS") { $0.contains("2 sessions") }
        #expect(later != nil, "STATUS= never said 2 sessions: \(notify.values(of: "STATUS"))")

        #expect(notify.waitForAssignment("WATCHDOG") != nil, "no WATCHDOG=1 although WATCHDOG_USEC is set")

        // SIGTERM: STOPPING=1, then a clean exit.
        let status = await fixture.stop()
        #expect(status == .exited(0), "\(fixture.allStandardError)")
        #expect(notify.waitForAssignment("STOPPING", timeout: .seconds(5)) == "1")
        let order = notify.assignments.map(\.name)
        let ready = try #require(order.firstIndex(of: "READY"))
        let stopping = try #require(order.lastIndex(of: "STOPPING"))
        #expect(ready < stopping)
        #expect(!fixture.daemon.standardError.contains("error:"), "\(fixture.daemon.standardError)")
        }
    }

    @Test("no WATCHDOG=1 without WATCHDOG_USEC")
    func noWatchdogUnlessAsked() async throws {
        try await withDaemon { fixture in
            // A round trip to the daemon, then everything it sent so far.
            try await fixture.client.ping()
            let status = await fixture.stop()
            #expect(status == .exited(0))
            // STOPPING=1 is the last message: once it is read, everything is.
            #expect(fixture.daemon.notify.waitForAssignment("STOPPING", timeout: .seconds(5)) == "1")
            #expect(fixture.daemon.notify.values(of: "WATCHDOG").isEmpty)
        }
    }

    @Test("outside the journal the log is plain one-line entries on stderr, even with an inherited JOURNAL_STREAM", arguments: [
        [:], ["JOURNAL_STREAM": "8:12345"],
    ])
    func plainStderrLog(environment: [String: String]) async throws {
        try await withDaemon(DaemonSettings(environment: environment)) { fixture in
            let session = try await fixture.client.start("quick")
            try await fixture.client.setAnswers(session, ["stars": .int64(5)])
            try await fixture.client.continueStep(session)
            #expect(await fixture.stop() == .exited(0))
            let lines = fixture.daemon.standardError.split(separator: "\n").map(String.init)
            let pid = fixture.daemon.child.pid
            #expect(lines.count >= 4, "\(lines)")
            for line in lines {
                let prefix = "flowd[\(pid)]: "
                let level = line.hasPrefix(prefix) ? line.dropFirst(prefix.count).prefix { $0 != ":" } : ""
                #expect(["debug", "info", "notice", "warning", "error"].contains(String(level)), "not a log line: \(line)")
            }
            #expect(lines.contains { $0.contains("session \(session) of quick started by uid ") && $0.contains("session=\(session)") && $0.contains("flow=quick") })
            #expect(lines.contains { $0.contains(": step rating completed") && $0.contains("step=rating") })
            #expect(lines.last?.contains("stopped") == true, "\(lines)")
            // A clean run and stop has nothing to warn about (a stop once
            // warned that its RemoveMatch got no reply from the closed bus).
            #expect(!lines.contains { $0.contains("]: warning: ") || $0.contains("]: error: ") }, "\(lines)")
        }
    }

    @Test("as the system service (signals to callers, a watch on their names), a stop logs no warning")
    func systemServiceStopsQuietly() async throws {
        try await withDaemon(DaemonSettings(systemMode: true)) { fixture in
            let session = try await fixture.client.start("quick")
            try await fixture.client.setAnswers(session, ["stars": .int64(5)])
            #expect(await fixture.stop() == .exited(0))
            let lines = fixture.daemon.standardError.split(separator: "\n").map(String.init)
            #expect(lines.last?.contains("stopped") == true, "\(lines)")
            #expect(!lines.contains { $0.contains("]: warning: ") || $0.contains("]: error: ") }, "\(lines)")
        }
    }

    @Test("SIGINT stops cleanly too")
    func sigint() async throws {
        try await withDaemon { fixture in
            fixture.daemon.child.send(.interrupt)
            #expect(await fixture.daemon.ended(timeout: .seconds(20)) == .exited(0))
            #expect(fixture.daemon.notify.waitForAssignment("STOPPING", timeout: .seconds(5)) == "1")
        }
    }

    @Test("after SIGTERM and a restart, sessions are served at the same object paths with their answers")
    func restartServesTheSameSessions() async throws {
        try await withDaemon { fixture in
            let trip = try await fixture.client.start("trip")
            try await fixture.client.continueStep(trip)
            try await fixture.client.setAnswers(trip, ["name": "Grace Hopper", "email": "grace@example.org"])
            let quick = try await fixture.client.start("quick")
            try await fixture.client.setAnswers(quick, ["stars": .int64(4)])
            try await fixture.client.continueStep(quick)
            let before = try await fixture.client.listSessions()
            let created = try await fixture.client.property(.createdAt, of: trip)
            let updated = try await fixture.client.property(.updatedAt, of: trip)
            // Microseconds since the epoch: within a day of this test's clock.
            let now = UInt64(Date().timeIntervalSince1970 * 1_000_000)
            let createdValue = try #require(created.uint64)
            #expect(createdValue > now - 86_400_000_000 && createdValue < now + 86_400_000_000, "\(createdValue) vs \(now)")
            #expect(try #require(updated.uint64) >= createdValue)
            #expect(try await fixture.client.property(.id, of: trip) == .string(trip))

            #expect(await fixture.stop() == .exited(0))
            try await fixture.startAgain()

            let after = try await fixture.client.listSessions()
            #expect(Set(after.map(\.path)) == Set(before.map(\.path)))
            #expect(try await fixture.client.getSession(trip) == sessionPath(trip))
            #expect(try await fixture.client.getSession(quick) == sessionPath(quick))
            let step = try await fixture.client.step(trip)
            #expect(step.id == "traveller")
            #expect(step.field("name")?.value == .string("Grace Hopper"))
            #expect(try await fixture.client.property(.currentStep, of: quick) == "comment")
            #expect(try await fixture.client.answers(quick)["stars"] == .int64(4))
            #expect(try await fixture.client.sessionCount() == 2)
            #expect(try await fixture.client.property(.createdAt, of: trip) == created, "CreatedAt survives the restart")
            #expect(try await fixture.client.property(.updatedAt, of: trip) == updated, "reading changes nothing")
            try await fixture.client.setAnswers(trip, ["name": "Grace Brewster Hopper"])
            #expect(try #require(try await fixture.client.property(.updatedAt, of: trip).uint64) > (updated.uint64 ?? .max))
        }
    }
}
