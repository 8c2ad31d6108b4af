import DBus
import FlowProtocol
import Foundation
import Testing
import TestSupport

@testable import FlowDaemon

/// `org.freedesktop.DBus.ObjectManager` on the Manager object (since 1.1):
/// the caller's sessions with their metadata, never an answer, and
/// `InterfacesAdded` / `InterfacesRemoved` to whom the session's own signals
/// go. Through a real dbus-daemon, with flowd's client, busctl and gdbus.
@Suite("ObjectManager")
struct ObjectManagerTests {
    /// A format 2 flow whose second step's title has the name piped in, and
    /// a secure field: an answer would show in `Path` and `Announcement`.
    static let piped = """
        {"format": 2, "id": "piped", "title": "Piped", "steps": [
          {"id": "about", "title": "About you", "fields": [
            {"id": "name", "type": "text", "label": "Name", "required": true},
            {"id": "pin", "type": "secure", "label": "PIN"}]},
          {"id": "hello", "title": "Hello {name}", "fields": [{"id": "note", "type": "text", "label": "Note"}]}]}
        """
    static let settings = DaemonSettings(flows: TestFlows.standard.merging(["piped.json": piped]) { $1 })
    /// Answers distinctive enough that a search cannot hit by chance.
    static let secretName = "Zed-secret-91c4"
    static let secretPIN = "pin-77e0a5d3"
    static let metadata = Set(SessionProperty.allCases.filter(\.isMetadata).map(\.rawValue))

    /// `GetManagedObjects` on `raw`: session path → interface → properties.
    static func managedObjects(_ raw: RawFlowd) throws -> [String: [String: [String: DBusValue]]] {
        let reply = try raw.manager.with(interface: .objectManager).call(FlowMember.ObjectManager.getManagedObjects)
        let arguments = try reply.readArguments()
        guard arguments.count == 1, case .dictionary(.objectPath, _, let entries) = arguments[0] else {
            throw TestSupportError("GetManagedObjects replied \(arguments)")
        }
        var objects: [String: [String: [String: DBusValue]]] = [:]
        for entry in entries {
            guard case .objectPath(let path) = entry.key else { throw TestSupportError("a key that is no path: \(entry.key)") }
            objects[path.rawValue] = try interfaces(entry.value)
        }
        return objects
    }

    /// An `a{sa{sv}}` as nested dictionaries.
    static func interfaces(_ value: DBusValue) throws -> [String: [String: DBusValue]] {
        guard case .dictionary(.string, _, let entries) = value else { throw TestSupportError("not a{sa{sv}}: \(value)") }
        var result: [String: [String: DBusValue]] = [:]
        for entry in entries {
            guard case .string(let name) = entry.key, let properties = [String: DBusValue](dbusValue: entry.value) else {
                throw TestSupportError("an entry that is not s → a{sv}: \(entry)")
            }
            result[name] = properties.mapValues { $0.variantValue ?? $0 }
        }
        return result
    }

    /// The signals among `messages` from the ObjectManager interface, named `member`, about `id`'s object.
    static func objectManagerSignals(_ messages: [Message], _ member: MemberName, of id: String) -> [Message] {
        messages.filter { message in
            message.interface == .objectManager && message.member == member && message.path == FlowBus.managerPath
                && (try? message.readArguments().first) == .objectPath(sessionPath(id))
        }
    }

    @Test("GetManagedObjects: the caller's sessions with their metadata, as the session reads them, and never an answer")
    func managedObjects() async throws {
        try await withDaemon(Self.settings) { fixture in
            let client = fixture.client
            let piped = try await client.start("piped")
            #expect(try await client.setAnswers(piped, ["name": .string(Self.secretName), "pin": .string(Self.secretPIN)]) == [:])
            #expect(try await client.continueStep(piped) == [:])
            let trip = try await client.start("trip")
            // The answer is in the texts the metadata leaves out.
            #expect("\(try await client.property(.path, of: piped))".contains(Self.secretName))

            let raw = try fixture.raw()
            let objects = try Self.managedObjects(raw)
            #expect(Set(objects.keys) == [sessionPath(piped).rawValue, sessionPath(trip).rawValue])
            for id in [piped, trip] {
                let entry = try #require(objects[sessionPath(id).rawValue])
                #expect(Array(entry.keys) == [FlowBus.sessionInterface.rawValue])
                let properties = entry[FlowBus.sessionInterface.rawValue] ?? [:]
                #expect(Set(properties.keys) == Self.metadata)
                // Each value is the one the session object answers.
                let all = try raw.session(id: id).allProperties()
                for (name, value) in properties { #expect(all[name] == value, "\(name)") }
            }
            let pipedEntry = objects[sessionPath(piped).rawValue]?[FlowBus.sessionInterface.rawValue] ?? [:]
            #expect(pipedEntry["CurrentStep"] == .string("hello"))
            #expect(pipedEntry["FlowId"] == .string("piped"))
            let text = "\(objects)"
            #expect(!text.contains(Self.secretName) && !text.contains(Self.secretPIN), "\(text)")

            // busctl (sd-bus) reads it too.
            let tool = ExternalClient(fixture)
            let json = try tool.busctlCall(
                "/org/flowd/Flow1", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", json: true)
            let data = try BusctlJSON.data(json)
            let byPath = try #require(data.first as? [String: Any], "\(json)")
            #expect(Set(byPath.keys) == [sessionPath(piped).rawValue, sessionPath(trip).rawValue], "\(json)")
            #expect(!json.contains(Self.secretName) && !json.contains(Self.secretPIN))

            // A closed session is no longer managed.
            try await client.close(trip)
            #expect(Set(try Self.managedObjects(raw).keys) == [sessionPath(piped).rawValue])
        }
    }

    @Test("InterfacesAdded with the new session's metadata, InterfacesRemoved when it is closed")
    func addedAndRemoved() async throws {
        try await withDaemon(Self.settings) { fixture in
            let watcher = try fixture.raw()
            try watcher.watchFlowd()
            let session = try await fixture.client.start("piped")
            try await fixture.client.close(session)
            let received = try watcher.drainSignals {
                !Self.objectManagerSignals($0, FlowMember.ObjectManager.interfacesRemoved, of: session).isEmpty
            }
            let added = Self.objectManagerSignals(received, FlowMember.ObjectManager.interfacesAdded, of: session)
            #expect(added.count == 1, "\(received.map(\.member))")
            let arguments = try #require(try added.first?.readArguments())
            #expect(arguments.count == 2)
            let interfaces = try Self.interfaces(arguments[1])
            let properties = try #require(interfaces[FlowBus.sessionInterface.rawValue])
            #expect(Array(interfaces.keys) == [FlowBus.sessionInterface.rawValue])
            #expect(Set(properties.keys) == Self.metadata)
            #expect(properties["Id"] == .string(session) && properties["State"] == .string("editing"))
            let removed = Self.objectManagerSignals(received, FlowMember.ObjectManager.interfacesRemoved, of: session)
            #expect(try removed.map { try $0.readArguments() } == [[.objectPath(sessionPath(session)), .strings([FlowBus.sessionInterface.rawValue])]])
        }
    }

    @Test("an expired session is removed from the managed objects with InterfacesRemoved")
    func expiry() async throws {
        try await withDaemon(DaemonSettings(configuration: "[Limits]\nIdleTimeout=2s\n")) { fixture in
            let watcher = try fixture.raw()
            try watcher.watchFlowd()
            let session = try await fixture.client.start("quick")
            let received = try watcher.drainSignals(timeout: .seconds(30)) {
                !Self.objectManagerSignals($0, FlowMember.ObjectManager.interfacesRemoved, of: session).isEmpty
            }
            #expect(Self.objectManagerSignals(received, FlowMember.ObjectManager.interfacesRemoved, of: session).count == 1,
                    "\(received.map(\.member))")
            #expect(try Self.managedObjects(watcher).isEmpty)
        }
    }

    @Test("on the system bus: another uid sees only its own sessions and none of the signals; a root connection that asked follows every new session; one that never asked gets nothing",
          .enabled(if: ExternalClient.canSwitchUser, "needs root and setpriv"))
    func systemBusAudience() async throws {
        var settings = Self.settings
        settings.allowUsers = [ExternalClient.nobody]
        settings.systemMode = true
        try await withDaemon(settings) { fixture in
            let nobody = ExternalClient(fixture, uid: ExternalClient.nobody)
            let spy = try nobody.monitor()
            defer { spy.terminate(grace: .seconds(2)) }
            let rootSession = try await fixture.client.start("trip")
            let started = try nobody.gdbusOK("/org/flowd/Flow1", "org.flowd.Flow1.Manager.StartSession", ["'quick'", "{}"])
            let nobodyID = String((try #require(gvariantQuotedStrings(started).first)).split(separator: "/").last ?? "")

            // GetManagedObjects per uid: nobody its own, root every one.
            let nobodysView = try nobody.gdbusOK("/org/flowd/Flow1", "org.freedesktop.DBus.ObjectManager.GetManagedObjects")
            #expect(nobodysView.contains(nobodyID) && !nobodysView.contains(rootSession), "\(nobodysView)")
            #expect(Set(try Self.managedObjects(try fixture.raw()).keys) == [sessionPath(rootSession).rawValue, sessionPath(nobodyID).rawValue])

            // A root connection that asked, and a root bystander that never did.
            let manager = try fixture.raw()
            try manager.watchFlowd()
            _ = try Self.managedObjects(manager)
            let bystander = try fixture.raw()
            try bystander.watchFlowd()

            // Another root connection starts, answers and closes a session; nobody starts one.
            let session = try await fixture.client.start("piped")
            #expect(try await fixture.client.setAnswers(session, ["name": .string(Self.secretName)]) == [:])
            try await fixture.client.close(session)
            let nobodysSecond = try nobody.gdbusOK("/org/flowd/Flow1", "org.flowd.Flow1.Manager.StartSession", ["'quick'", "{}"])
            let secondID = String((try #require(gvariantQuotedStrings(nobodysSecond).first)).split(separator: "/").last ?? "")

            let followed = try manager.drainSignals {
                !Self.objectManagerSignals($0, FlowMember.ObjectManager.interfacesAdded, of: secondID).isEmpty
            }
            #expect(Self.objectManagerSignals(followed, FlowMember.ObjectManager.interfacesAdded, of: session).count == 1)
            #expect(Self.objectManagerSignals(followed, FlowMember.ObjectManager.interfacesRemoved, of: session).count == 1)
            #expect(Self.objectManagerSignals(followed, FlowMember.ObjectManager.interfacesAdded, of: secondID).count == 1)
            // It follows what it was given, too: the session's own changes reach it.
            #expect(followed.contains { $0.member == "PropertiesChanged" && $0.path == sessionPath(session) })

            // The bystander gets the broadcast count, and nothing of the sessions.
            let unasked = try bystander.drainSignals { $0.contains { $0.member == "PropertiesChanged" && $0.path == FlowBus.managerPath } }
            #expect(unasked.contains { $0.member == "PropertiesChanged" && $0.path == FlowBus.managerPath }, "\(unasked.map(\.member))")
            #expect(!unasked.contains { $0.interface == .objectManager }, "\(unasked.map(\.member))")

            // nobody's monitor saw the count go by, and nothing of root's sessions.
            #expect(spy.waitForOutput { $0.contains("SessionCount") }, "\(spy.standardOutput) \(spy.standardError)")
            let seen = spy.standardOutput
            #expect(!seen.contains(session) && !seen.contains(rootSession), "another uid saw root's session: \(seen)")
            #expect(!seen.contains(Self.secretName))
        }
    }

    @Test("a connection that asked for the managed objects watches only its uid's new sessions (root: every one), until it leaves")
    func audienceAdoptsByUID() {
        var audience = SignalAudience(delivery: .callers)
        let alice: BusName = ":1.10", root: BusName = ":1.11", other: BusName = ":1.12"
        audience.add(manager: alice, uid: 1000, watching: ["a0"])
        audience.add(manager: root, uid: 0, watching: [])
        audience.adopt("a1", owner: 1000)
        audience.adopt("b1", owner: 1001)
        #expect(audience.destinations(of: "a0") == [alice])
        #expect(audience.destinations(of: "a1") == [alice, root])
        #expect(audience.destinations(of: "b1") == [root])
        audience.add(other, watching: "b1")
        #expect(audience.destinations(of: "b1") == [root, other])
        audience.forget(alice)
        audience.adopt("a2", owner: 1000)
        #expect(audience.destinations(of: "a2") == [root])
        #expect(audience.destinations(of: "a1") == [root])
        // A broadcast bus needs no bookkeeping.
        var broadcast = SignalAudience(delivery: .broadcast)
        broadcast.add(manager: alice, uid: 1000, watching: ["a0"])
        broadcast.adopt("a1", owner: 1000)
        #expect(broadcast.destinations(of: "a1") == [nil])
    }
}
