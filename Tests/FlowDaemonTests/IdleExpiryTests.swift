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

    @Test("IdleTimeout=2s: an untouched session goes (SessionRemoved, then NotFound); a touched one stays while touched")
    func expiry() async throws {
        try await withDaemon(DaemonSettings(configuration: "[Limits]\nIdleTimeout=2s\n")) { fixture in
            let watcher = try await EventWatcher(try fixture.connect())
            let client = fixture.client
            let untouched = try await client.start("quick")
            let touched = try await client.start("quick")
            var stars: Int64 = 1
            func touch() async throws {
                stars = stars == 1 ? 2 : 1
                #expect(try await client.setAnswers(touched, ["stars": .int64(stars)]) == [:])
            }

            // Touch one session while waiting (up to 30 s) for the other to go.
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: .seconds(30))
            var removed: ManagerSignal?
            while removed == nil && clock.now < deadline {
                try await touch()
                removed = await watcher.nextManagerSignal(timeout: .milliseconds(200), where: Self.removal(of: untouched))
            }
            #expect(removed != nil, "the untouched session did not expire")
            await expectDBusError(FlowdErrorName.notFound) { _ = try await client.getSession(untouched) }
            await expectDBusError(FlowdErrorName.notFound) { _ = try await client.step(untouched) }

            // Keep touching for longer than the idle time: the session stays.
            let keepUntil = clock.now.advanced(by: .seconds(4))
            while clock.now < keepUntil {
                try await touch()
                let gone = await watcher.nextManagerSignal(timeout: .milliseconds(200), where: Self.removal(of: touched))
                #expect(gone == nil, "a session in use expired")
                if gone != nil { break }
            }
            #expect(try await client.getSession(touched) == sessionPath(touched))
            #expect(try await client.answers(touched)["stars"] == .int64(stars))

            // Left alone, it goes too.
            let last = await watcher.nextManagerSignal(timeout: .seconds(30), where: Self.removal(of: touched))
            #expect(last != nil, "the session did not expire once left alone")
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
            #expect(fixture.stop() == .exited(0))
            try fixture.startAgain()
            await expectDBusError(FlowdErrorName.notFound) { _ = try await fixture.client.getSession(id) }
            #expect(try await fixture.client.listSessions().isEmpty)
        }
    }
}
