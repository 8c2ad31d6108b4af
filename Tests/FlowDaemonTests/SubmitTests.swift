import DBus
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
    static func onReview(_ client: FlowClient, _ flow: String, locale: String = "en") throws -> SessionClient {
        let session = try client.start(flow, options: ["locale": .string(locale)])
        #expect(try session.set(["name": "Ada", "pin": .string(pin)]) == [:])
        #expect(try session.next() == [:])
        #expect(try session.state() == "review")
        return session
    }

    /// Calls `Submit` on its own connection and thread; the outcome arrives in the latch's box.
    final class PendingSubmit: @unchecked Sendable {
        let done = Latch()
        private let result = Locked<Result<Void, DBusError>?>(nil)

        init(address: String, path: ObjectPath) {
            Foundation.Thread { [self] in
                let outcome: Result<Void, DBusError>
                do throws(DBusError) {
                    let client = try FlowClient(address: address)
                    defer { client.connection.close() }
                    outcome = Result { () throws(DBusError) in try client.session(path).submit() }
                } catch {
                    outcome = .failure(error)
                }
                result.withLock { $0 = outcome }
                done.countDown()
            }.start()
        }

        /// The outcome, waiting up to `timeout`.
        func outcome(timeout: Duration = .seconds(30)) -> Result<Void, DBusError>? {
            _ = done.wait(timeout: timeout)
            return result.value
        }
    }

    /// Waits until the session's State is `state` (up to 20 s).
    static func waitForState(_ session: SessionClient, _ state: String) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(20))
        while clock.now < deadline {
            if (try? session.state()) == state { return true }
            _ = Latch().wait(timeout: .milliseconds(20))
        }
        return false
    }

    @Test("the plugin loads and ListPlugins reports it")
    func listPlugins() throws {
        try withDaemon(Self.settings) { fixture in
            let plugins = try fixture.client.manager.call("ListPlugins", returning: [[String: DBusValue]].self)
            let test = try #require(plugins.first { $0["name"] == .string("test") }, "\(plugins)")
            #expect(test["status"] == .string("loaded"))
            #expect(test["error"] == .string(""))
            #expect(test["capabilities"]?.strings?.contains("test.slow-submit") == true)
            #expect(try fixture.client.flowIDs() == ["echo", "fail", "late", "opaque", "providers", "slow"])
        }
    }

    @Test("Submit replies when the action ends; Submitted carries the receipt, also in the Receipt property")
    func success() throws {
        try withDaemon(Self.settings) { fixture in
            let watcher = try fixture.connect()
            try watcher.watchFlowd()
            let session = try Self.onReview(fixture.client, "echo")
            try session.submit()
            #expect(try session.state() == "submitted")
            let signal = try #require(try watcher.nextSignal("Submitted", path: session.path))
            var reader = signal.arguments()
            let receipt = try reader.next([String: DBusValue].self)
            // The submission id is the idempotency key: the session and the revision of its answers (one SetAnswers).
            #expect(receipt["reference"] == .string(session.id + "-1"))
            #expect(receipt["flow"] == .string("echo"))
            #expect(receipt["answers"] == .double(1), "the secure PIN is not part of the submission")
            #expect(try session.property("Receipt").vardict == receipt)
            #expect(try session.step().id == "complete")
            expectDBusError(FlowdErrorName.invalidState) { try session.back() }
        }
    }

    @Test("a failing action: SubmitFailed with the plugin's localized text, LastError, the answers kept, a retry possible",
          arguments: [("fail", "en", "The calendar is full."), ("fail", "de", "Der Kalender ist voll."),
                      ("opaque", "en", "Couldn't send this. Try again.")])
    func failure(flow: String, locale: String, message: String) throws {
        try withDaemon(Self.settings) { fixture in
            let watcher = try fixture.connect()
            try watcher.watchFlowd()
            let session = try Self.onReview(fixture.client, flow, locale: locale)
            let error = expectDBusError("org.flowd.Flow1.Error.SubmitFailed") { try session.submit() }
            #expect(error?.message == message)
            #expect(try session.state() == "failed")
            #expect(try session.string("LastError") == message)
            let signal = try #require(try watcher.nextSignal("SubmitFailed", path: session.path))
            var reader = signal.arguments()
            #expect(try reader.next(String.self) == message)
            // The outcome is announced for screen readers too.
            #expect(try watcher.nextSignal("Announcement", path: session.path) { signal in
                var announced = signal.arguments()
                return (try? announced.next(String.self)) == message
            } != nil)
            #expect(try session.answers()["name"] == .string("Ada"))
            // Retry: it fails again the same way, and nothing was lost.
            expectDBusError("org.flowd.Flow1.Error.SubmitFailed") { try session.submit() }
            #expect(try session.review().group("who")?.finished == true, "the secure PIN is still held")
        }
    }

    @Test("Continue on Review submits too: its reply waits for the action, and a failure is its error")
    func continueOnReview() throws {
        try withDaemon(Self.settings) { fixture in
            let succeeding = try Self.onReview(fixture.client, "echo")
            #expect(try succeeding.next() == [:])
            #expect(try succeeding.state() == "submitted")
            #expect(try succeeding.property("Receipt").vardict?["reference"] == .string(succeeding.id + "-1"))

            let failing = try Self.onReview(fixture.client, "fail")
            let error = expectDBusError("org.flowd.Flow1.Error.SubmitFailed") { try failing.next() }
            #expect(error?.message == "The calendar is full.")
            #expect(try failing.state() == "failed")
            // The secure value given before the submits never reached the disk or the log.
            #expect(!fixture.daemon.standardError.contains(Self.pin))
            for (name, bytes) in try fixture.stateFiles() {
                #expect(bytes.range(of: Data(Self.pin.utf8)) == nil, "the PIN is in \(name)")
            }
        }
    }

    @Test("an action past its time limit fails with Timeout")
    func timeout() throws {
        try withDaemon(Self.settings) { fixture in
            let session = try Self.onReview(fixture.client, "late")
            let error = expectDBusError("org.flowd.Flow1.Error.Timeout") { try session.submit() }
            #expect(error?.message.isEmpty == false)
            #expect(try session.state() == "failed")
            #expect(try session.string("LastError") == error?.message)
        }
    }

    @Test("while an action runs: State submitting, other calls refused or served, Cancel returns quietly to Review")
    func cancelWhileRunning() throws {
        try withDaemon(Self.settings) { fixture in
            let session = try Self.onReview(fixture.client, "slow")
            let pending = PendingSubmit(address: fixture.bus.address, path: session.path)
            #expect(Self.waitForState(session, "submitting"))
            // A slow plugin stalls nobody: the daemon and other sessions answer.
            try fixture.client.ping()
            let other = try fixture.client.start("echo")
            #expect(try other.set(["name": "Grace"]) == [:])
            // The running session refuses changes and a second Submit.
            expectDBusError(FlowdErrorName.invalidState) { try session.set(["name": "Changed"]) }
            expectDBusError(FlowdErrorName.invalidState) { try session.submit() }
            try session.cancel()
            let outcome = try #require(pending.outcome(), "the pending Submit never answered")
            #expect(throws: DBusError.self) { try outcome.get() }
            if case .failure(let error) = outcome { #expect(error.name.rawValue == "org.flowd.Flow1.Error.Cancelled", "\(error)") }
            #expect(try session.state() == "review")
            #expect(try session.string("LastError") == "", "cancelling is quiet")
        }
    }

    @Test("Close during a running action answers the pending Submit and deletes the session")
    func closeWhileRunning() throws {
        try withDaemon(Self.settings) { fixture in
            let session = try Self.onReview(fixture.client, "slow")
            let pending = PendingSubmit(address: fixture.bus.address, path: session.path)
            #expect(Self.waitForState(session, "submitting"))
            try session.close()
            let outcome = try #require(pending.outcome(), "the pending Submit never answered")
            if case .failure(let error) = outcome {
                #expect(error.name.rawValue == "org.flowd.Flow1.Error.Cancelled", "\(error)")
            } else {
                Issue.record("Submit succeeded on a closed session")
            }
            expectDBusError(FlowdErrorName.notFound) { _ = try fixture.client.getSession(session.id) }
        }
    }

    @Test("kill -9 during a running action: after a restart the session is failed, 'interrupted', and not sent again")
    func killDuringSubmit() throws {
        try withDaemon(Self.settings) { fixture in
            let session = try Self.onReview(fixture.client, "slow")
            let pending = PendingSubmit(address: fixture.bus.address, path: session.path)
            #expect(Self.waitForState(session, "submitting"))
            fixture.daemon.kill()
            let outcome = try #require(pending.outcome(), "the pending Submit never answered")
            #expect((try? outcome.get()) == nil, "a killed daemon cannot have succeeded")
            try fixture.startAgain()
            // The plugin was in a healthy call, not crashing: it is not blamed.
            // flowd says so at notice level and keeps the plugin.
            let log = fixture.daemon.standardError
            #expect(!log.contains("crashed the daemon"), "\(log)")
            #expect(log.contains("flowd stopped during a call to test.slow-submit"), "\(log)")
            #expect(log.contains("not blamed: nothing crashed in the plugin"), "\(log)")
            let plugins = try fixture.client.manager.call("ListPlugins", returning: [[String: DBusValue]].self)
            let test = try #require(plugins.first { $0["name"] == .string("test") }, "\(plugins)")
            #expect(test["status"] == .string("loaded"))
            #expect(test["error"] == .string(""))
            // The session is still there, at the same path, failed as interrupted.
            let listed = try #require(try fixture.client.listSessions().first { $0.id == session.id })
            #expect(listed.state == "failed")
            #expect(listed.path == session.path)
            #expect(try fixture.client.getSession(session.id) == session.path)
            #expect(try session.state() == "failed")
            #expect(try session.string("LastError") == "Sending was interrupted. Try again.")
            // Retrying is the person's decision. The PIN was never stored, so
            // Submit first takes them back to its step; with the PIN entered
            // again, a retry starts the action again.
            expectDBusError(FlowdErrorName.validationFailed) { try session.submit() }
            #expect(try session.string("CurrentStep") == "who")
            #expect(try session.set(["pin": .string(Self.pin)]) == [:])
            #expect(try session.next() == [:])
            #expect(try session.state() == "review")
            let retry = PendingSubmit(address: fixture.bus.address, path: session.path)
            #expect(Self.waitForState(session, "submitting"))
            try session.cancel()
            _ = retry.outcome()
        }
    }

    @Test("a plugin that crashes flowd is disabled at the next start, with its reason; the other flows are served")
    func crashingPlugin() throws {
        var flows = PluginFlows.submitFlows
        flows["crash.json"] = PluginFlows.submitting(id: "crash", action: "crash.abort")
        try withDaemon(DaemonSettings(flows: flows, plugins: ["FixtureTestPlugin", "FixtureCrashPlugin"])) { fixture in
            #expect(try fixture.client.flowIDs().contains("crash"))
            let session = try Self.onReview(fixture.client, "crash")
            // The action aborts the whole daemon: the call gets no reply of its own.
            #expect(throws: DBusError.self) { try session.submit() }
            let died = fixture.daemon.child.wait(timeout: .seconds(60))
            #expect(died != nil && died != .exited(0), "flowd survived a crashing plugin: \(String(describing: died))")

            try fixture.startAgain()
            let plugins = try fixture.client.manager.call("ListPlugins", returning: [[String: DBusValue]].self)
            let crash = try #require(plugins.first { $0["name"] == .string("crash") }, "\(plugins)")
            #expect(crash["status"] == .string("disabled"))
            let reason = crash["error"]?.string ?? ""
            #expect(reason.contains("crashed the daemon") && reason.contains("crash.abort"), "\(reason)")
            let test = try #require(plugins.first { $0["name"] == .string("test") })
            #expect(test["status"] == .string("loaded"), "only the crashing plugin is disabled")
            // Its flow is refused and reported; the others are served.
            let flowIDs = try fixture.client.flowIDs()
            #expect(!flowIDs.contains("crash") && flowIDs.contains("echo"), "\(flowIDs)")
            let log = fixture.daemon.standardError
            #expect(log.contains("crash.json") && log.contains("crash.abort"), "\(log)")
            expectDBusError(FlowdErrorName.notFound) { _ = try session.state() }
            let echo = try Self.onReview(fixture.client, "echo")
            try echo.submit()
            #expect(try echo.state() == "submitted")
        }
    }

    @Test("SIGTERM during a running action: the caller is answered, flowd exits 0, and the session comes back interrupted")
    func stopDuringSubmit() throws {
        try withDaemon(Self.settings) { fixture in
            let session = try Self.onReview(fixture.client, "slow")
            let pending = PendingSubmit(address: fixture.bus.address, path: session.path)
            #expect(Self.waitForState(session, "submitting"))
            #expect(fixture.stop() == .exited(0), "\(fixture.daemon.standardError)")
            let outcome = try #require(pending.outcome(), "the pending Submit never answered")
            if case .failure(let error) = outcome {
                #expect(error.name.rawValue == "org.flowd.Flow1.Error.Cancelled", "\(error)")
            } else {
                Issue.record("Submit succeeded although flowd stopped")
            }
            try fixture.startAgain()
            #expect(try session.state() == "failed")
            #expect(try session.string("LastError").localizedCaseInsensitiveContains("interrupted"))
        }
    }

    @Test("plugin validators, options and prefill providers")
    func providersAndValidators() throws {
        try withDaemon(Self.settings) { fixture in
            let session = try fixture.client.start("providers", options: ["locale": "de"])
            var step = try session.step()
            #expect(step.field("who")?.value == .string("uid \(getuid())"), "the prefill provider's value")
            // The field validator runs off the bus thread and answers in SetAnswers.
            let odd = try session.set(["even": .int64(3)])
            #expect(odd["even"] == "An even number must be even.")
            #expect(try session.next()["even"] == "An even number must be even.")
            #expect(try session.set(["even": .int64(4)]) == [:])
            #expect(try session.next() == [:])
            // The options provider's options, in the session's locale, with an icon.
            step = try session.step()
            let colour = try #require(step.field("colour"))
            #expect(colour.optionIDs == ["red", "green", "blue"])
            #expect(colour.raw["options"]?.elements?.first?.fields?.last == .string("Rot"))
            #expect(colour.raw["optionIcons"]?.stringDictionary == ["green": "emblem-default"])
            #expect(try session.set(["colour": "green"]) == [:])
            #expect(try session.next() == [:])
            // The step validator runs on Continue.
            #expect(try session.set(["first": "a", "second": "b"]) == [:])
            #expect(try session.next()["second"] == "These must match.")
            #expect(try session.string("CurrentStep") == "twice")
            #expect(try session.set(["second": "a"]) == [:])
            #expect(try session.next() == [:])
            #expect(try session.state() == "submitted")
        }
    }

    @Test("a flow naming a capability no plugin provides is refused and reported; the others are served")
    func missingCapability() throws {
        var flows = PluginFlows.submitFlows
        flows["nope.json"] = PluginFlows.submitting(id: "nope", action: "test.no-such-action")
        try withDaemon(DaemonSettings(flows: flows, plugins: ["FixtureTestPlugin"])) { fixture in
            let ids = try fixture.client.flowIDs()
            #expect(!ids.contains("nope"))
            #expect(ids.contains("echo"))
            let log = fixture.daemon.standardError
            #expect(log.contains("nope.json") && log.contains("test.no-such-action"), "\(log)")
        }
    }
}
