import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// What a second connection sees while another client drives a session
/// (docs/dbus-api.md, "Signals" and "Properties"): one announcement per event,
/// `State` `submitting` when a submit starts, and no signal that carries only
/// a timestamp.
@Suite("Signals a watching client sees")
struct BusEventTests {
    /// The announcements of `session` among `events`, in order.
    static func announcements(_ events: [FlowEvent], of session: String) -> [String] {
        events.compactMap { event in
            guard case .session(let id, .announcement(let text)) = event, id == session else { return nil }
            return text
        }
    }

    static func isSubmitFailed(_ event: FlowEvent) -> Bool {
        if case .session(_, .submitFailed) = event { return true }
        return false
    }

    @Test("a failed submit is announced once as it starts and once as it fails; a retry likewise")
    func failedSubmitAnnouncedOnce() async throws {
        try await withDaemon(SubmitTests.settings) { fixture in
            let client = fixture.client
            let session = try await SubmitTests.onReview(client, "fail")
            let sending = try await client.step(session).submittingLabel
            let watcher = try await EventWatcher(try fixture.connect(), session: session)
            for attempt in 1...2 {
                _ = try await watcher.drain()
                await expectDBusError("org.flowd.Flow1.Error.SubmitFailed") { try await client.submit(session) }
                let events = try await watcher.drain { $0.contains(where: Self.isSubmitFailed) }
                #expect(Self.announcements(events, of: session) == [sending, "The calendar is full."],
                        "attempt \(attempt): \(events)")
                #expect(events.filter(Self.isSubmitFailed).count == 1, "attempt \(attempt): \(events)")
            }
        }
    }

    @Test("a cancelled submit is announced once: \"Not sent\"")
    func cancelAnnouncedOnce() async throws {
        try await withDaemon(SubmitTests.settings) { fixture in
            let client = fixture.client
            let (session, pending) = try await SubmitTests.slowSubmitRunning(fixture)
            let notSent = try await client.step(session).notSentLabel
            #expect(!notSent.isEmpty)
            let watcher = try await EventWatcher(try fixture.connect(), session: session)
            _ = try await watcher.drain()
            try await client.cancel(session)
            _ = await pending.value
            let events = try await watcher.drain { Self.announcements($0, of: session).count >= 1 }
            #expect(Self.announcements(events, of: session) == [notSent], "\(events)")
            #expect(try await client.property(.announcement, of: session) == .string(notSent))
        }
    }

    @Test("State submitting reaches a second connection while the submit runs: Submit and the Continue that submits",
          arguments: ["Submit", "Continue"])
    func submittingSignalledAtStart(call: String) async throws {
        try await withDaemon(SubmitTests.settings) { fixture in
            let client = fixture.client
            let session = try await SubmitTests.onReview(client, "slow")
            let sending = try await client.step(session).submittingLabel
            #expect(!sending.isEmpty)
            let watcher = try await EventWatcher(try fixture.connect(), session: session)
            _ = try await watcher.drain()
            // The slow action runs for two minutes: the call stays pending until Cancel.
            var configuration = FlowClient.Configuration(bus: .address(fixture.bus.address))
            configuration.submitTimeout = .seconds(60)
            let caller = try FlowClient(configuration)
            let pending = Task { () -> FlowClientError? in
                do throws(FlowClientError) {
                    if call == "Submit" { try await caller.submit(session) } else { try await caller.continueStep(session) }
                    return nil
                } catch {
                    return error
                }
            }
            let seen = await watcher.nextPropertyChange(.state, of: session) { $0 == .string("submitting") }
            #expect(seen != nil, "no PropertiesChanged {State: submitting} while the submit runs")
            let announced = await watcher.nextSignal(of: session) { $0 == .announcement(text: sending) }
            #expect(announced != nil, "the start is announced")
            // Still running: the signal came when the submit started, not when it ended.
            #expect(try await client.property(.state, of: session) == "submitting")
            try await client.cancel(session)
            let error = await pending.value
            #expect(error?.name?.rawValue == "org.flowd.Flow1.Error.Cancelled", "\(String(describing: error))")
        }
    }

    /// The `a{sv}` of each `PropertiesChanged` among `messages`.
    static func changes(_ messages: [Message]) -> [[String: DBusValue]] {
        messages.filter { $0.member == "PropertiesChanged" }.compactMap { message -> [String: DBusValue]? in
            var reader = message.arguments()
            _ = try? reader.next(String.self)
            return try? reader.next([String: DBusValue].self)
        }
    }

    @Test("SetAnswers that changes only answers sends Revision (a watching window reads the step again), never a timestamp alone; storing the same values sends nothing")
    func answerChangesSendRevision() async throws {
        try await withDaemon { fixture in
            let client = fixture.client
            let session = try await client.start("quick")
            #expect(try await client.setAnswers(session, ["stars": .int64(4)]) == [:])
            let watcher = try fixture.raw()
            try watcher.watchFlowd()
            let before = try #require(try await client.property(.updatedAt, of: session).uint64)
            let first = try #require(try await client.property(.revision, of: session).uint64)
            for stars in [5, 3, 2] as [Int64] {
                #expect(try await client.setAnswers(session, ["stars": .int64(stars)]) == [:])
            }
            let typed = Self.changes(try watcher.drainSignals { Self.changes($0).count >= 3 })
            #expect(typed.map { $0["Revision"] } == [first + 1, first + 2, first + 3].map { .uint64($0) }, "\(typed)")
            #expect(typed.allSatisfy { Set($0.keys).isSubset(of: ["Revision", "UpdatedAt"]) }, "\(typed)")
            #expect(try await client.property(.revision, of: session).uint64 == first + 3)
            #expect(try await client.property(.updatedAt, of: session).uint64 ?? 0 > before, "UpdatedAt still changes")

            // The value flowd already holds: nothing changed that a client shows.
            #expect(try await client.setAnswers(session, ["stars": .int64(2)]) == [:])
            let quiet = try watcher.drainSignals(timeout: .seconds(1))
            #expect(Self.changes(quiet).isEmpty, "\(Self.changes(quiet))")
            #expect(try await client.property(.revision, of: session).uint64 == first + 3)

            #expect(try await client.continueStep(session) == [:])
            let changed = Self.changes(try watcher.drainSignals { !Self.changes($0).isEmpty })
            #expect(changed.contains { $0["UpdatedAt"] != nil && $0["CurrentStep"] == .string("comment") }, "\(changed)")
        }
    }
}
