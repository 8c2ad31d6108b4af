import DBus
import Foundation
import Testing
import TestSupport

/// Abandoned sessions expire after the configured idle time; sessions in use do not.
@Suite("Idle expiry")
struct IdleExpiryTests {
    /// The id argument of a `SessionRemoved` signal.
    static func removedID(_ message: Message) -> String? {
        var reader = message.arguments()
        return try? reader.next(String.self)
    }

    @Test("IdleTimeout=2s: an untouched session goes (SessionRemoved, then NotFound); a touched one stays while touched")
    func expiry() throws {
        try withDaemon(DaemonSettings(configuration: "[Limits]\nIdleTimeout=2s\n")) { fixture in
            let watcher = try fixture.connect()
            try watcher.watchFlowd()
            let client = fixture.client
            let untouched = try client.start("quick")
            let touched = try client.start("quick")
            var stars: Int64 = 1
            func touch() throws {
                stars = stars == 1 ? 2 : 1
                #expect(try touched.set(["stars": .int64(stars)]) == [:])
            }

            // Touch one session while waiting (up to 30 s) for the other to go.
            let untouchedID = untouched.id
            let touchedID = touched.id
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: .seconds(30))
            var removed: Message?
            while removed == nil && clock.now < deadline {
                try touch()
                removed = try watcher.nextSignal("SessionRemoved", path: FlowClient.managerPath, timeout: .milliseconds(200)) {
                    Self.removedID($0) == untouchedID
                }
            }
            #expect(removed != nil, "the untouched session did not expire")
            var arguments = try #require(removed).arguments()
            _ = try arguments.next(String.self)
            #expect(try arguments.next(ObjectPath.self) == untouched.path)
            expectDBusError(FlowdErrorName.notFound) { _ = try client.getSession(untouchedID) }
            expectDBusError(FlowdErrorName.notFound) { _ = try untouched.step() }

            // Keep touching for longer than the idle time: the session stays.
            let keepUntil = clock.now.advanced(by: .seconds(4))
            while clock.now < keepUntil {
                try touch()
                let gone = try watcher.nextSignal("SessionRemoved", path: FlowClient.managerPath, timeout: .milliseconds(200)) {
                    Self.removedID($0) == touchedID
                }
                #expect(gone == nil, "a session in use expired")
                if gone != nil { break }
            }
            #expect(try client.getSession(touchedID) == touched.path)
            #expect(try touched.answers()["stars"] == .int64(stars))

            // Left alone, it goes too.
            let last = try watcher.nextSignal("SessionRemoved", path: FlowClient.managerPath, timeout: .seconds(30)) {
                Self.removedID($0) == touchedID
            }
            #expect(last != nil, "the session did not expire once left alone")
            expectDBusError(FlowdErrorName.notFound) { _ = try client.getSession(touchedID) }
            #expect(try client.manager.property("SessionCount", as: UInt32.self) == 0)
            #expect(try client.listSessions().isEmpty)
        }
    }

    @Test("expired sessions stay gone after a restart")
    func expiredStayGone() throws {
        try withDaemon(DaemonSettings(configuration: "[Limits]\nIdleTimeout=1s\n")) { fixture in
            let watcher = try fixture.connect()
            try watcher.watchFlowd()
            let session = try fixture.client.start("trip")
            let id = session.id
            #expect(try watcher.nextSignal("SessionRemoved", path: FlowClient.managerPath, timeout: .seconds(30)) {
                Self.removedID($0) == id
            } != nil)
            #expect(fixture.stop() == .exited(0))
            try fixture.startAgain()
            expectDBusError(FlowdErrorName.notFound) { _ = try fixture.client.getSession(id) }
            #expect(try fixture.client.listSessions().isEmpty)
        }
    }
}
