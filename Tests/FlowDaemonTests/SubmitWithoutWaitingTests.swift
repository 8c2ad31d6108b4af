import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// `SubmitWithOptions` (since 1.1) with `wait` false: the call returns once
/// the action has started, however long it runs, and a second connection
/// follows it to its end through `PropertiesChanged` and the signals. The
/// actions are `FixtureTestPlugin`'s, loaded by flowd.
@Suite("Submit without waiting")
struct SubmitWithoutWaitingTests {
    static let noWait = DBusValue.vardict(["wait": .bool(false)])

    /// `SubmitWithOptions(options)` on session `id`, from a connection of its own.
    static func submit(_ fixture: DaemonFixture, _ id: String, _ options: DBusValue = noWait) throws {
        try fixture.raw().session(id: id).call(FlowMember.Session.submitWithOptions, options)
    }

    /// A session of `flow` on Review, submitted without waiting: `watcher`
    /// sees its State go submitting, then `end`, and the signal `outcome`
    /// picks. The session and that signal.
    static func submitAndFollow(
        _ fixture: DaemonFixture, _ flow: String, _ watcher: EventWatcher, to end: String,
        outcome: (SessionSignal) -> Bool, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (session: String, signal: SessionSignal?) {
        let session = try await SubmitTests.onReview(fixture.client, flow)
        try submit(fixture, session)
        for state in ["submitting", end] {
            #expect(await watcher.nextPropertyChange(.state, of: session) { $0 == .string(state) } != nil, "\(state)",
                    sourceLocation: sourceLocation)
        }
        return (session, await watcher.nextSignal(of: session, where: outcome))
    }

    @Test("a submit that runs for two minutes: gdbus's call returns while it runs, and another connection sees submitting")
    func returnsWhileRunning() async throws {
        try await withDaemon(SubmitTests.settings) { fixture in
            let session = try await SubmitTests.onReview(fixture.client, "slow")
            let watcher = try await EventWatcher(try fixture.connect())
            // gdbus waits 25 s for a reply; the action takes 120 s.
            let tool = ExternalClient(fixture)
            #expect(try tool.gdbusOK(sessionPath(session).rawValue, "org.flowd.Flow1.Session.SubmitWithOptions", ["{'wait': <false>}"])
                    == "()")
            #expect(try await fixture.client.property(.state, of: session) == "submitting", "the action is still running")
            #expect(await watcher.nextPropertyChange(.state, of: session) { $0 == .string("submitting") } != nil)
            #expect(await watcher.nextSignal(of: session) { if case .announcement = $0 { true } else { false } } != nil)
            // It can be stopped as any running submit.
            try await fixture.client.cancel(session)
            #expect(await watcher.nextPropertyChange(.state, of: session) { $0 == .string("review") } != nil)
            #expect(try await fixture.client.property(.lastError, of: session) == "")
        }
    }

    @Test("the outcome arrives as signals and properties: submitting → failed on a timeout, submitting → submitted on success")
    func outcomeAsSignals() async throws {
        try await withDaemon(SubmitTests.settings) { fixture in
            let watcher = try await EventWatcher(try fixture.connect())

            // late: the action runs 60 s, the flow allows 0.5 s.
            let (late, failure) = try await Self.submitAndFollow(fixture, "late", watcher, to: "failed") {
                if case .submitFailed = $0 { true } else { false }
            }
            let message = try #require(failure.flatMap { if case .submitFailed(let text) = $0 { text } else { nil } })
            #expect(!message.isEmpty)
            #expect(try await fixture.client.property(.lastError, of: late) == .string(message))

            // echo: succeeds at once; the reply still did not wait for it.
            let (echo, submitted) = try await Self.submitAndFollow(fixture, "echo", watcher, to: "submitted") {
                if case .submitted = $0 { true } else { false }
            }
            let receipt = try #require(submitted.flatMap { if case .submitted(let receipt) = $0 { receipt } else { nil } })
            // The plugin's reference is the submission's id: the session's, numbered.
            #expect(receipt["reference"] == .string("\(echo)-1"))
            #expect(try await fixture.client.property(.receipt, of: echo) == .vardict(receipt))
        }
    }

    @Test("what refuses a submit before it starts is the reply either way; wait true is Submit; bad options are refused")
    func refusalsAndOptions() async throws {
        try await withDaemon(SubmitTests.settings) { fixture in
            let client = fixture.client
            // An unfinished step: ValidationFailed, and the session moves there.
            let unfinished = try await client.startSession(flow: "echo", locale: nil, prefill: [:])
            await expectDBusError(FlowdErrorName.validationFailed) { try Self.submit(fixture, unfinished) }
            #expect(try await client.property(.state, of: unfinished) == "editing")

            // wait true answers when the action ended, as Submit does.
            let waited = try await SubmitTests.onReview(client, "echo")
            try Self.submit(fixture, waited, .vardict(["wait": .bool(true)]))
            #expect(try await client.property(.state, of: waited) == "submitted")
            // A submitted session: success at once, nothing sent again.
            try Self.submit(fixture, waited)
            #expect(try await client.property(.state, of: waited) == "submitted")

            // Bad options change nothing.
            let onReview = try await SubmitTests.onReview(client, "echo")
            for options in [
                DBusValue.vardict(["wait": .string("no")]), .vardict(["wait": .bool(false), "hurry": .bool(true)]),
            ] {
                await expectDBusError(FlowdErrorName.invalidArgs) { try Self.submit(fixture, onReview, options) }
            }
            await expectDBusError(FlowdErrorName.dbusInvalidArgs) {
                try Self.submit(fixture, onReview, .string("wait"))
            }
            #expect(try await client.property(.state, of: onReview) == "review")
        }
    }
}
