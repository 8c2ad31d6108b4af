import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// Submit actions, validators and providers from a real plugin
/// (`FixtureTestPlugin`, loaded by flowd with dlopen), driven over the bus.
@Suite("Submit actions and providers through flowd")
struct SubmitTests {
    static let settings = DaemonSettings(flows: PluginFlows.submitFlows, plugins: ["FixtureTestPlugin"])

    /// The secure answer every session here gets: distinctive, so a search
    /// for it in files cannot hit by chance.
    static let pin = "pin-4f1c9e2a7b"

    /// A session of `flow` with its one step answered, on Review.
    static func onReview(_ client: FlowClient, _ flow: String, locale: String = "en") async throws -> String {
        let session = try await client.startSession(flow: flow, locale: locale, prefill: [:])
        #expect(try await client.setAnswers(session, ["name": "Ada", "pin": .string(pin)]) == [:])
        #expect(try await client.continueStep(session) == [:])
        #expect(try await client.property(.state, of: session) == "review")
        return session
    }

    /// Calls `Submit` on a client of its own and waits for it in a task of
    /// its own; the wait is bounded (a broken test fails, it does not hang).
    static func pendingSubmit(_ fixture: DaemonFixture, _ session: String) throws -> Task<Result<Void, FlowClientError>, Never> {
        var configuration = FlowClient.Configuration(bus: .address(fixture.bus.address))
        configuration.submitTimeout = .seconds(60)
        let client = try FlowClient(configuration)
        return Task {
            do throws(FlowClientError) {
                try await client.submit(session)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
    }

    /// A session of the slow flow whose Submit (on a client of its own) is
    /// running: State is submitting.
    static func slowSubmitRunning(
        _ fixture: DaemonFixture, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (session: String, pending: Task<Result<Void, FlowClientError>, Never>) {
        let session = try await onReview(fixture.client, "slow")
        let pending = try pendingSubmit(fixture, session)
        #expect(await waitForState(fixture.client, session, "submitting"), sourceLocation: sourceLocation)
        return (session, pending)
    }

    /// Waits until the session's State is `state` (up to 20 s).
    static func waitForState(_ client: FlowClient, _ session: String, _ state: String) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(20))
        while clock.now < deadline {
            if (try? await client.property(.state, of: session)) == .string(state) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    @Test("the plugin loads and ListPlugins reports it")
    func listPlugins() async throws {
        try await withDaemon(Self.settings) { fixture in
            let plugins = try await fixture.client.listPlugins()
            let test = try #require(plugins.first { $0.name == "test" }, "\(plugins)")
            #expect(test.status == .loaded)
            #expect(test.error == "")
            #expect(test.capabilities.contains("test.slow-submit"))
            #expect(try await fixture.client.flowIDs() == ["echo", "fail", "late", "opaque", "providers", "slow"])
        }
    }

    @Test("Submit replies when the action ends; Submitted carries the receipt, also in the Receipt property")
    func success() async throws {
        try await withDaemon(Self.settings) { fixture in
            let client = fixture.client
            let watcher = try await EventWatcher(try fixture.connect())
            let session = try await Self.onReview(client, "echo")
            try await client.submit(session)
            #expect(try await client.property(.state, of: session) == "submitted")
            let signal = try #require(await watcher.nextSignal(of: session) { if case .submitted = $0 { true } else { false } })
            guard case .submitted(let receipt) = signal else { return }
            // The submission id is the idempotency key: the session and the revision of its answers (one SetAnswers).
            #expect(receipt["reference"] == .string(session + "-1"))
            #expect(receipt["flow"] == .string("echo"))
            #expect(receipt["answers"] == .double(1), "the secure PIN is not part of the submission")
            #expect(try await client.property(.receipt, of: session).vardict == receipt)
            #expect(try await client.step(session).id == "complete")
            await expectDBusError(FlowdErrorName.invalidState) { try await client.back(session) }
        }
    }

    @Test("the action is told its deadline: the flow's timeoutSeconds from when its code started")
    func deadline() async throws {
        let flows = ["deadline.json": PluginFlows.submitting(
            id: "deadline", action: "test.echo-submit", options: #"{"reportDeadline": true}"#, timeoutSeconds: "7")]
        try await withDaemon(DaemonSettings(flows: flows, plugins: ["FixtureTestPlugin"])) { fixture in
            let session = try await Self.onReview(fixture.client, "deadline")
            try await fixture.client.submit(session)
            let receipt = try #require(try await fixture.client.property(.receipt, of: session).vardict)
            guard case .double(let left) = receipt["timeLeft"] else {
                Issue.record("no deadline reached the action: \(receipt)")
                return
            }
            #expect(left > 0 && left <= 7, "\(left) s left of a 7 s limit")
        }
    }

    @Test("a failing action: SubmitFailed with the plugin's localized text, LastError, the answers kept, a retry possible",
          arguments: [("fail", "en", "The calendar is full."), ("fail", "de", "Der Kalender ist voll."),
                      ("opaque", "en", "Couldn't send this. Try again.")])
    func failure(flow: String, locale: String, message: String) async throws {
        try await withDaemon(Self.settings) { fixture in
            let client = fixture.client
            let watcher = try await EventWatcher(try fixture.connect())
            let session = try await Self.onReview(client, flow, locale: locale)
            let error = await expectDBusError("org.flowd.Flow1.Error.SubmitFailed") { try await client.submit(session) }
            #expect(error == message)
            #expect(try await client.property(.state, of: session) == "failed")
            #expect(try await client.property(.lastError, of: session) == .string(message))
            let signal = try #require(await watcher.nextSignal(of: session) { if case .submitFailed = $0 { true } else { false } })
            #expect(signal == .submitFailed(message: message))
            // The outcome is announced for screen readers too.
            #expect(await watcher.nextSignal(of: session) { $0 == .announcement(text: message) } != nil)
            #expect(try await client.answers(session)["name"] == .string("Ada"))
            // Retry: it fails again the same way, and nothing was lost.
            await expectDBusError("org.flowd.Flow1.Error.SubmitFailed") { try await client.submit(session) }
            #expect(try await client.review(session).group("who")?.finished == true, "the secure PIN is still held")
        }
    }

    @Test("Continue on Review submits too: its reply waits for the action, and a failure is its error")
    func continueOnReview() async throws {
        try await withDaemon(Self.settings) { fixture in
            let client = fixture.client
            let succeeding = try await Self.onReview(client, "echo")
            #expect(try await client.continueStep(succeeding) == [:])
            #expect(try await client.property(.state, of: succeeding) == "submitted")
            #expect(try await client.property(.receipt, of: succeeding).vardict?["reference"] == .string(succeeding + "-1"))

            let failing = try await Self.onReview(client, "fail")
            let error = await expectDBusError("org.flowd.Flow1.Error.SubmitFailed") { try await client.continueStep(failing) }
            #expect(error == "The calendar is full.")
            #expect(try await client.property(.state, of: failing) == "failed")
            // The secure value given before the submits never reached the disk or the log.
            #expect(!fixture.daemon.standardError.contains(Self.pin))
            for (name, bytes) in try fixture.stateFiles() {
                #expect(bytes.range(of: Data(Self.pin.utf8)) == nil, "the PIN is in \(name)")
            }
        }
    }

    @Test("an action past its time limit fails with Timeout")
    func timeout() async throws {
        try await withDaemon(Self.settings) { fixture in
            let client = fixture.client
            let session = try await Self.onReview(client, "late")
            let error = await expectDBusError("org.flowd.Flow1.Error.Timeout") { try await client.submit(session) }
            #expect(error?.isEmpty == false)
            #expect(try await client.property(.state, of: session) == "failed")
            #expect(try await client.property(.lastError, of: session).string == error)
        }
    }

    @Test("while an action runs: State submitting, other calls refused or served, Cancel returns quietly to Review")
    func cancelWhileRunning() async throws {
        try await withDaemon(Self.settings) { fixture in
            let client = fixture.client
            let (session, pending) = try await Self.slowSubmitRunning(fixture)
            // A slow plugin stalls nobody: the daemon and other sessions answer.
            try await client.ping()
            let other = try await client.start("echo")
            #expect(try await client.setAnswers(other, ["name": "Grace"]) == [:])
            // The running session refuses changes and a second Submit.
            await expectDBusError(FlowdErrorName.invalidState) { try await client.setAnswers(session, ["name": "Changed"]) }
            await expectDBusError(FlowdErrorName.invalidState) { try await client.submit(session) }
            try await client.cancel(session)
            let outcome = await pending.value
            #expect(throws: FlowClientError.self) { try outcome.get() }
            if case .failure(let error) = outcome { #expect(error.name?.rawValue == "org.flowd.Flow1.Error.Cancelled", "\(error)") }
            #expect(try await client.property(.state, of: session) == "review")
            #expect(try await client.property(.lastError, of: session) == "", "cancelling is quiet")
        }
    }

    @Test("Close during a running action answers the pending Submit and deletes the session")
    func closeWhileRunning() async throws {
        try await withDaemon(Self.settings) { fixture in
            let client = fixture.client
            let (session, pending) = try await Self.slowSubmitRunning(fixture)
            try await client.close(session)
            let outcome = await pending.value
            if case .failure(let error) = outcome {
                #expect(error.name?.rawValue == "org.flowd.Flow1.Error.Cancelled", "\(error)")
            } else {
                Issue.record("Submit succeeded on a closed session")
            }
            await expectDBusError(FlowdErrorName.notFound) { _ = try await client.getSession(session) }
        }
    }

    @Test("kill -9 during a running action: after a restart the session is failed, 'interrupted', and not sent again")
    func killDuringSubmit() async throws {
        try await withDaemon(Self.settings) { fixture in
            let client = fixture.client
            let (session, pending) = try await Self.slowSubmitRunning(fixture)
            await fixture.daemon.kill()
            let outcome = await pending.value
            #expect((try? outcome.get()) == nil, "a killed daemon cannot have succeeded")
            try await fixture.startAgain()
            // The plugin was in a healthy call, not crashing: it is not blamed.
            // flowd says so at notice level and keeps the plugin.
            let log = fixture.daemon.standardError
            #expect(!log.contains("crashed the daemon"), "\(log)")
            #expect(log.contains("flowd stopped during a call to test.slow-submit"), "\(log)")
            #expect(log.contains("not blamed: nothing crashed in the plugin"), "\(log)")
            let plugins = try await client.listPlugins()
            let test = try #require(plugins.first { $0.name == "test" }, "\(plugins)")
            #expect(test.status == .loaded)
            #expect(test.error == "")
            // The session is still there, at the same path, failed as interrupted.
            let listed = try #require(try await client.listSessions().first { $0.id == session })
            #expect(listed.state == .failed)
            #expect(listed.path == sessionPath(session))
            #expect(try await client.getSession(session) == sessionPath(session))
            #expect(try await client.property(.state, of: session) == "failed")
            #expect(try await client.property(.lastError, of: session) == "Sending was interrupted. Try again.")
            // Retrying is the person's decision. The PIN was never stored, so
            // Submit first takes them back to its step; with the PIN entered
            // again, a retry starts the action again.
            await expectDBusError(FlowdErrorName.validationFailed) { try await client.submit(session) }
            #expect(try await client.property(.currentStep, of: session) == "who")
            #expect(try await client.setAnswers(session, ["pin": .string(Self.pin)]) == [:])
            #expect(try await client.continueStep(session) == [:])
            #expect(try await client.property(.state, of: session) == "review")
            let retry = try Self.pendingSubmit(fixture, session)
            #expect(await Self.waitForState(client, session, "submitting"))
            try await client.cancel(session)
            _ = await retry.value
        }
    }

    @Test("a plugin that crashes flowd is disabled at the next start, with its reason; the other flows are served")
    func crashingPlugin() async throws {
        var flows = PluginFlows.submitFlows
        flows["crash.json"] = PluginFlows.submitting(id: "crash", action: "crash.abort")
        try await withDaemon(DaemonSettings(flows: flows, plugins: ["FixtureTestPlugin", "FixtureCrashPlugin"])) { fixture in
            let client = fixture.client
            #expect(try await client.flowIDs().contains("crash"))
            let session = try await Self.onReview(client, "crash")
            // The action aborts the whole daemon: the call gets no reply of its own.
            await #expect(throws: FlowClientError.self) { try await client.submit(session) }
            let died = await fixture.daemon.ended(timeout: .seconds(60))
            #expect(died != nil && died != .exited(0), "flowd survived a crashing plugin: \(String(describing: died))")

            try await fixture.startAgain()
            let plugins = try await client.listPlugins()
            let crash = try #require(plugins.first { $0.name == "crash" }, "\(plugins)")
            #expect(crash.status == .disabled)
            let reason = crash.error
            #expect(reason.contains("crashed the daemon") && reason.contains("crash.abort"), "\(reason)")
            let test = try #require(plugins.first { $0.name == "test" })
            #expect(test.status == .loaded, "only the crashing plugin is disabled")
            // Its flow is refused and reported; the others are served.
            let flowIDs = try await client.flowIDs()
            #expect(!flowIDs.contains("crash") && flowIDs.contains("echo"), "\(flowIDs)")
            let log = fixture.daemon.standardError
            #expect(log.contains("crash.json") && log.contains("crash.abort"), "\(log)")
            await expectDBusError(FlowdErrorName.notFound) { _ = try await client.property(.state, of: session) }
            let echo = try await Self.onReview(client, "echo")
            try await client.submit(echo)
            #expect(try await client.property(.state, of: echo) == "submitted")

            // After one more restart the quarantine comes from the store,
            // still under the plugin's own name (not its path).
            #expect(await fixture.stop() == .exited(0))
            try await fixture.startAgain()
            let again = try await client.listPlugins()
            let stored = try #require(again.first { $0.path.hasSuffix("FixtureCrashPlugin.so") }, "\(again)")
            #expect(stored.name == "crash" && stored.status == .disabled, "\(stored)")
            #expect(stored.error == reason)
        }
    }

    @Test("SIGTERM during a running action: the caller is answered, flowd exits 0, and the session comes back interrupted")
    func stopDuringSubmit() async throws {
        try await withDaemon(Self.settings) { fixture in
            let client = fixture.client
            let (session, pending) = try await Self.slowSubmitRunning(fixture)
            #expect(await fixture.stop() == .exited(0), "\(fixture.daemon.standardError)")
            let outcome = await pending.value
            if case .failure(let error) = outcome {
                #expect(error.name?.rawValue == "org.flowd.Flow1.Error.Cancelled", "\(error)")
            } else {
                Issue.record("Submit succeeded although flowd stopped")
            }
            try await fixture.startAgain()
            #expect(try await client.property(.state, of: session) == "failed")
            #expect(try await client.property(.lastError, of: session).string?.localizedCaseInsensitiveContains("interrupted") == true)
        }
    }

    @Test("plugin validators, options and prefill providers")
    func providersAndValidators() async throws {
        try await withDaemon(Self.settings) { fixture in
            let client = fixture.client
            let session = try await client.startSession(flow: "providers", locale: "de", prefill: [:])
            var step = try await client.step(session)
            #expect(step.field("who")?.value == .string("uid \(getuid())"), "the prefill provider's value")
            // The field validator runs off the bus thread and answers in SetAnswers.
            let odd = try await client.setAnswers(session, ["even": .int64(3)])
            #expect(odd["even"] == "An even number must be even.")
            #expect(try await client.continueStep(session)["even"] == "An even number must be even.")
            #expect(try await client.setAnswers(session, ["even": .int64(4)]) == [:])
            #expect(try await client.continueStep(session) == [:])
            // The options provider's options, in the session's locale, with an icon.
            step = try await client.step(session)
            let colour = try #require(step.field("colour"))
            #expect(colour.options.map(\.id) == ["red", "green", "blue"])
            #expect(colour.options.first?.label == "Rot")
            #expect(colour.options.map(\.icon) == [nil, "emblem-default", nil])
            #expect(try await client.setAnswers(session, ["colour": "green"]) == [:])
            #expect(try await client.continueStep(session) == [:])
            // The step validator runs on Continue.
            #expect(try await client.setAnswers(session, ["first": "a", "second": "b"]) == [:])
            #expect(try await client.continueStep(session)["second"] == "These must match.")
            #expect(try await client.property(.currentStep, of: session) == "twice")
            #expect(try await client.setAnswers(session, ["second": "a"]) == [:])
            #expect(try await client.continueStep(session) == [:])
            #expect(try await client.property(.state, of: session) == "submitted")
        }
    }

    @Test("a flow naming a capability no plugin provides is refused and reported; the others are served")
    func missingCapability() async throws {
        var flows = PluginFlows.submitFlows
        flows["nope.json"] = PluginFlows.submitting(id: "nope", action: "test.no-such-action")
        try await withDaemon(DaemonSettings(flows: flows, plugins: ["FixtureTestPlugin"])) { fixture in
            let ids = try await fixture.client.flowIDs()
            #expect(!ids.contains("nope"))
            #expect(ids.contains("echo"))
            let log = fixture.daemon.standardError
            #expect(log.contains("nope.json") && log.contains("test.no-such-action"), "\(log)")
        }
    }
}
