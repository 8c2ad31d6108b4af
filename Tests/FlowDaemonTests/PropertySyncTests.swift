import DBus
import Foundation
import Testing
import TestSupport

/// Every mutable property emits `PropertiesChanged`: a second connection that
/// starts from `GetAll` and applies only the signals it receives always
/// agrees with a fresh `GetAll`.
@Suite("PropertiesChanged keeps a watcher in sync")
struct PropertySyncTests {
    /// A watcher's picture of one session's properties.
    final class Mirror {
        let watcher: FlowClient
        let session: SessionClient
        var values: [String: DBusValue]
        var changeCount = 0

        init(watcher: FlowClient, session: SessionClient) throws {
            self.watcher = watcher
            self.session = watcher.session(session.path)
            values = try self.session.allProperties()
        }

        /// The changes the session's `PropertiesChanged` signals among `messages` carry, in order.
        func changes(in messages: [Message]) -> [(name: String, value: DBusValue)] {
            var result: [(name: String, value: DBusValue)] = []
            for message in messages where message.member == "PropertiesChanged" && message.path == session.path {
                guard let (interface, changed) = FlowClient.propertiesChanged(message),
                      interface == FlowClient.sessionInterface.rawValue else { continue }
                var reader = message.arguments()
                _ = try? reader.next(String.self)
                _ = try? reader.next([String: DBusValue].self)
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
        func expectInSync(_ after: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let fresh = try session.allProperties()
            let messages = try watcher.drainSignals(timeout: .seconds(5)) { [self] messages in
                applying(changes(in: messages)) == fresh
            }
            let received = changes(in: messages)
            for change in received {
                #expect(values[change.name] != nil, "PropertiesChanged names an unknown property \(change.name)",
                        sourceLocation: sourceLocation)
            }
            values = applying(received)
            changeCount += received.count
            for (name, value) in fresh where values[name] != value {
                Issue.record("after \(after): \(name) changed without PropertiesChanged", sourceLocation: sourceLocation)
            }
            #expect(Set(fresh.keys) == Set(values.keys), sourceLocation: sourceLocation)
            values = fresh
        }
    }

    @Test("after every call of a whole run, the watcher's mirror equals GetAll")
    func mirrorStaysInSync() throws {
        try withDaemon { fixture in
            let watcher = try fixture.connect()
            try watcher.watchFlowd()
            let session = try fixture.client.start("trip")
            let mirror = try Mirror(watcher: watcher, session: session)
            let steps: [(String, () throws -> Void)] = [
                ("Continue", { try session.next() }),
                ("an invalid answer", { try session.set(["name": "A"]) }),
                ("a refused Continue", { try session.next() }),
                ("valid answers", { try session.set(["name": "Ada", "email": "ada@example.org"]) }),
                ("Continue", { try session.next() }),
                ("plane", { try session.set(["mode": "plane"]) }),
                ("Continue to flight", { try session.next() }),
                ("Back", { try session.back() }),
                ("train", { try session.set(["mode": "train"]) }),
                ("Continue to extras", { try session.next() }),
                ("terms", { try session.set(["terms": true, "extras": .strings(["meal"])]) }),
                ("Continue to account", { try session.next() }),
                ("passwords", { try session.set(["password": "abcdefgh1", "confirm": "abcdefgh1"]) }),
                ("Continue to review", { try session.next() }),
                ("Edit", { try session.goTo("mode") }),
                ("Continue back to review", { try session.next() }),
                ("GoTo review while there", { try session.goTo("review") }),
                ("Back from review", { try session.back() }),
                ("Continue", { try session.next() }),
                ("Submit", { try session.submit() }),
            ]
            for (name, call) in steps {
                try call()
                try mirror.expectInSync(name)
            }
            #expect(mirror.values["State"] == .string("submitted"))
            #expect(mirror.changeCount > 40, "the watcher saw the changes (\(mirror.changeCount))")
        }
    }

    @Test("a reload that changes a session's flow announces the properties that changed", arguments: ["Reload", "SIGHUP"])
    func reloadOfAChangedFlow(how: String) throws {
        try withDaemon { fixture in
            let watcher = try fixture.connect()
            try watcher.watchFlowd()
            let session = try fixture.client.start("quick")
            try session.set(["stars": .int64(4)])
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
                try fixture.client.reload()
            }
            let fresh = try session.allProperties()
            #expect(fresh["StepCount"] == .uint32(3), "the session follows the changed flow (FlowService.reload)")
            try mirror.expectInSync(how)
        }
    }

    @Test("the Manager's SessionCount is announced on start, close and expiry")
    func sessionCount() throws {
        try withDaemon(DaemonSettings(configuration: "[Limits]\nIdleTimeout=1s\n")) { fixture in
            let watcher = try fixture.connect()
            try watcher.watchFlowd()
            let count: (UInt32) throws -> Bool = { expected in
                try watcher.nextPropertyChange(
                    "SessionCount", path: FlowClient.managerPath, interface: FlowClient.managerInterface
                ) { $0 == .uint32(expected) } != nil
            }
            let first = try fixture.client.start("quick")
            #expect(try count(1))
            _ = try fixture.client.start("quick")
            #expect(try count(2))
            try first.close()
            #expect(try count(1))
            // The other one expires on its own.
            #expect(try count(0))
        }
    }
}
