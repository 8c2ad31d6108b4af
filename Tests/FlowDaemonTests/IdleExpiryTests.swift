import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// Abandoned sessions expire after the configured idle time; sessions in use do not.
@Suite("Idle expiry")
struct IdleExpiryTests {
    /// True for the Manager's `SessionRemoved` of `id`.
    static func removal(of id: String) -> (ManagerSignal) -> Bool {
        { $0 == .sessionRemoved(id: id) }
    }

    /// Starts a session of `quick` and touches it (a new answer) every
    /// 200 ms, all on a thread of its own, until `keepGoing` is false: on a
    /// loaded machine the first touch follows the start at once, and the
    /// touches keep their rhythm, whatever the test's tasks wait for (its
    /// calls run on the clients' loop thread, never on the cooperative pool).
    /// Returns the session (nil until started), the failures, the last value
    /// the session acknowledged, and whether the thread has stopped.
    static func startTouching(
        _ client: FlowClient, while keepGoing: Locked<Bool>
    ) -> (session: Locked<String?>, failures: Locked<[String]>, last: Locked<Int64>, stopped: Locked<Bool>) {
        let session = Locked<String?>(nil)
        let failures = Locked<[String]>([])
        let last = Locked<Int64>(0)
        let stopped = Locked(false)
        Foundation.Thread {
            defer { stopped.withLock { $0 = true } }
            let id: String
            do {
                id = try Blocking.run { () async throws -> String in try await client.start("quick") }
                session.withLock { $0 = id }
            } catch {
                failures.withLock { $0.append("StartSession: \(error)") }
                return
            }
            var stars: Int64 = 1
            while keepGoing.value {
                stars = stars == 1 ? 2 : 1
                let value = stars
                do throws(FlowClientError) {
                    let errors = try Blocking.run { () async throws(FlowClientError) -> [String: String] in
                        try await client.setAnswers(id, ["stars": .int64(value)])
                    }
                    if errors.isEmpty {
                        last.withLock { $0 = value }
                    } else {
                        failures.withLock { $0.append("\(errors)") }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
                Foundation.Thread.sleep(forTimeInterval: 0.2)
            }
        }.start()
        return (session, failures, last, stopped)
    }

    @Test("IdleTimeout=5s: an untouched session goes (SessionRemoved, then NotFound); a touched one stays while touched")
    func expiry() async throws {
        try await withDaemon(DaemonSettings(configuration: "[Limits]\nIdleTimeout=5s\n")) { fixture in
            let watcher = try await EventWatcher(try fixture.connect())
            let client = fixture.client
            let untouched = try await client.start("quick")

            // Touch another session while waiting (up to 30 s) for this one to go.
            let touching = Locked(true)
            let (session, failures, last, stopped) = Self.startTouching(client, while: touching)
            #expect(await waitUntil(timeout: .seconds(30)) { session.value != nil || stopped.value })
            let touched = try #require(session.value, "the touched session did not start: \(failures.value)")
            let removed = await watcher.nextManagerSignal(timeout: .seconds(30), where: Self.removal(of: untouched))
            #expect(removed != nil, "the untouched session did not expire")
            await expectDBusError(FlowdErrorName.notFound) { _ = try await client.getSession(untouched) }
            await expectDBusError(FlowdErrorName.notFound) { _ = try await client.step(untouched) }

            // Keep touching for longer than the idle time: the session stays.
            try await Task.sleep(for: .seconds(7))
            touching.withLock { $0 = false }
            #expect(await waitUntil { stopped.value }, "the touching thread did not stop")
            #expect(failures.value.isEmpty, "a touch failed: \(failures.value)")
            let meanwhile = try await watcher.drain()
            #expect(!meanwhile.contains(.manager(.sessionRemoved(id: touched))), "a session in use expired")
            #expect(try await client.getSession(touched) == sessionPath(touched))
            #expect(try await client.answers(touched)["stars"] == .int64(last.value))

            // Left alone, it goes too.
            let gone = await watcher.nextManagerSignal(timeout: .seconds(30), where: Self.removal(of: touched))
            #expect(gone != nil, "the session did not expire once left alone")
            await expectDBusError(FlowdErrorName.notFound) { _ = try await client.getSession(touched) }
            #expect(try await client.sessionCount() == 0)
            #expect(try await client.listSessions().isEmpty)
        }
    }

    @Test("expired sessions stay gone after a restart")
    func expiredStayGone() async throws {
        try await withDaemon(DaemonSettings(configuration: "[Limits]\nIdleTimeout=1s\n")) { fixture in
            let watcher = try await EventWatcher(try fixture.connect())
            let id = try await fixture.client.start("trip")
            #expect(await watcher.nextManagerSignal(timeout: .seconds(30), where: Self.removal(of: id)) != nil)
            #expect(await fixture.stop() == .exited(0))
            try await fixture.startAgain()
            await expectDBusError(FlowdErrorName.notFound) { _ = try await fixture.client.getSession(id) }
            #expect(try await fixture.client.listSessions().isEmpty)
        }
    }
}
