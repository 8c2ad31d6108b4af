import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// Every mutable property emits `PropertiesChanged`: a second connection that
/// starts from `GetAll` and applies only the signals it receives always
/// agrees with a fresh `GetAll`.
@Suite("PropertiesChanged keeps a watcher in sync")
struct PropertySyncTests {
    /// A watcher's picture of one session's properties, kept from the raw
    /// signals (what any client sees on the wire).
    final class Mirror {
        let watcher: RawFlowd
        let session: Proxy
        var values: [String: DBusValue]
        var changeCount = 0

        init(watcher: RawFlowd, session: String) throws {
            self.watcher = watcher
            self.session = watcher.session(id: session)
            values = try self.session.allProperties()
        }

        /// The changes the session's `PropertiesChanged` signals among `messages` carry, in order.
        func changes(in messages: [Message]) -> [(name: String, value: DBusValue)] {
            var result: [(name: String, value: DBusValue)] = []
            for message in messages where message.member == "PropertiesChanged" && message.path == session.path {
                var reader = message.arguments()
                guard let interface = try? reader.next(String.self), interface == FlowBus.sessionInterface.rawValue,
                      let changed = try? reader.next([String: DBusValue].self) else { continue }
                #expect((try? reader.next([String].self))?.isEmpty == true, "flowd sends values, not invalidations")
                result += changed.map { ($0.key, $0.value) }
            }
            return result
        }

        /// The mirror's values after `changes`.
        func applying(_ changes: [(name: String, value: DBusValue)]) -> [String: DBusValue] {
            var result = values
            for change in changes { result[change.name] = change.value }
            return result
        }

        /// Applies the signals that arrived and compares with a fresh GetAll,
        /// waiting (up to 5 s) for signals still on their way before calling
        /// a difference a failure.
        /// `UpdatedAt` goes out with other changes but never alone
        /// (`EmitsChangedSignal` false): a mirror may hold an older time.
        static func signalled(_ values: [String: DBusValue]) -> [String: DBusValue] {
            values.filter { $0.key != SessionProperty.updatedAt.rawValue }
        }

        func expectInSync(_ after: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let fresh = try session.allProperties()
            let messages = try watcher.drainSignals(timeout: .seconds(5)) { [self] messages in
                Self.signalled(applying(changes(in: messages))) == Self.signalled(fresh)
            }
            let received = changes(in: messages)
            for change in received {
                #expect(values[change.name] != nil, "PropertiesChanged names an unknown property \(change.name)",
                        sourceLocation: sourceLocation)
            }
            values = applying(received)
            changeCount += received.count
            for (name, value) in Self.signalled(fresh) where values[name] != value {
                Issue.record("after \(after): \(name) changed without PropertiesChanged", sourceLocation: sourceLocation)
            }
            #expect(Set(fresh.keys) == Set(values.keys), sourceLocation: sourceLocation)
            values = fresh
        }
    }

    @Test("after every call of a whole run, the watcher's mirror equals GetAll")
    func mirrorStaysInSync() async throws {
        try await withDaemon { fixture in
            let watcher = try fixture.raw()
            try watcher.watchFlowd()
            let client = fixture.client
            let session = try await client.start("trip")
            let mirror = try Mirror(watcher: watcher, session: session)
            let steps: [(String, @Sendable () async throws -> Void)] = [
                ("Continue", { try await client.continueStep(session) }),
                ("an invalid answer", { try await client.setAnswers(session, ["name": "A"]) }),
                ("a refused Continue", { try await client.continueStep(session) }),
                ("valid answers", { try await client.setAnswers(session, ["name": "Ada", "email": "ada@example.org"]) }),
                ("Continue", { try await client.continueStep(session) }),
                ("plane", { try await client.setAnswers(session, ["mode": "plane"]) }),
                ("Continue to flight", { try await client.continueStep(session) }),
                ("Back", { try await client.back(session) }),
                ("train", { try await client.setAnswers(session, ["mode": "train"]) }),
                ("Continue to extras", { try await client.continueStep(session) }),
                ("terms", { try await client.setAnswers(session, ["terms": true, "extras": .strings(["meal"])]) }),
                ("Continue to account", { try await client.continueStep(session) }),
                ("passwords", { try await client.setAnswers(session, ["password": "abcdefgh1", "confirm": "abcdefgh1"]) }),
                ("Continue to review", { try await client.continueStep(session) }),
                ("Edit", { try await client.goTo(session, step: "mode") }),
                ("Continue back to review", { try await client.continueStep(session) }),
                ("GoTo review while there", { try await client.goTo(session, step: "review") }),
                ("Back from review", { try await client.back(session) }),
                ("Continue", { try await client.continueStep(session) }),
                ("Submit", { try await client.submit(session) }),
            ]
            for (name, call) in steps {
                try await call()
                try mirror.expectInSync(name)
            }
            #expect(mirror.values["State"] == .string("submitted"))
            #expect(mirror.changeCount > 40, "the watcher saw the changes (\(mirror.changeCount))")
        }
    }

    @Test("a reload that changes a session's flow announces the properties that changed", arguments: ["Reload", "SIGHUP"])
    func reloadOfAChangedFlow(how: String) async throws {
        try await withDaemon { fixture in
            let watcher = try fixture.raw()
            try watcher.watchFlowd()
            let session = try await fixture.client.start("quick")
            try await fixture.client.setAnswers(session, ["stars": .int64(4)])
            let mirror = try Mirror(watcher: watcher, session: session)
            #expect(mirror.values["StepCount"] == .uint32(2))
            // The flow gains a step and renames one.
            let changed = TestFlows.quick
                .replacingOccurrences(of: "\"title\": \"Rating\"", with: "\"title\": \"Your rating\"")
                .replacingOccurrences(
                    of: "\"maxLength\": 200}]}",
                    with: "\"maxLength\": 200}]},\n {\"id\": \"contact\", \"title\": \"Contact\", \"fields\": [{\"id\": \"mail\", \"type\": \"email\", \"label\": \"Mail\"}]}")
            #expect(changed != TestFlows.quick)
            try fixture.writeFlow("quick.json", changed)
            if how == "SIGHUP" {
                fixture.daemon.child.send(.hangUp)
                // READY=1 again: the reload is done.
                #expect(fixture.daemon.notify.wait { $0.values(of: "READY").count == 2 })
            } else {
                try await fixture.client.reload()
            }
            let fresh = try watcher.session(id: session).allProperties()
            #expect(fresh["StepCount"] == .uint32(3), "the session follows the changed flow (FlowService.reload)")
            try mirror.expectInSync(how)
        }
    }

    /// Waits for the Manager's `SessionCount` to be `expected`.
    private static func count(_ watcher: EventWatcher, _ expected: UInt32) async -> Bool {
        // Generous: a full parallel test run on two cores is slow to deliver.
        await watcher.next(timeout: .seconds(45)) { $0 == .sessionCount(expected) } != nil
    }

    // Two tests, so that no idle timeout runs while sessions start and close:
    // on a loaded machine a first session could expire before the second starts.
    @Test("the Manager's SessionCount is announced on start and close")
    func sessionCount() async throws {
        try await withDaemon { fixture in
            let watcher = try await EventWatcher(try fixture.connect())
            let first = try await fixture.client.start("quick")
            #expect(await Self.count(watcher, 1))
            let second = try await fixture.client.start("quick")
            #expect(await Self.count(watcher, 2))
            try await fixture.client.close(first)
            #expect(await Self.count(watcher, 1))
            try await fixture.client.close(second)
            #expect(await Self.count(watcher, 0))
        }
    }

    @Test("the Manager's SessionCount is announced when a session expires")
    func sessionCountOnExpiry() async throws {
        try await withDaemon(DaemonSettings(configuration: "[Limits]\nIdleTimeout=2s\n")) { fixture in
            let watcher = try await EventWatcher(try fixture.connect())
            _ = try await fixture.client.start("quick")
            #expect(await Self.count(watcher, 1))
            // It expires on its own.
            #expect(await Self.count(watcher, 0))
        }
    }
}
