import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// Isolated plugins through the real daemon: `FixtureUnrulyPlugin`, marked
/// `Isolated=yes`, runs in a `flowd-plugin-host` process of its own (real
/// fork and exec, real dlopen there) and crashes, hangs, allocates without
/// bound or reaches for the network; flowd and the in-process
/// `FixtureTestPlugin` keep serving throughout.
@Suite("Isolated plugins, through flowd")
struct IsolatedPluginTests {
    /// A flow with one text field checked by `validator`.
    static func checking(_ id: String, with validator: String) -> String {
        """
        { "format": 1, "id": "\(id)", "title": "\(id)",
          "steps": [{"id": "one", "title": "One",
                     "fields": [{"id": "v", "type": "text", "label": "Value", "validators": [{"plugin": "\(validator)"}]}]}] }
        """
    }

    static let flows: [String: String] = PluginFlows.submitFlows.merging([
        "segv.json": checking("segv", with: "unruly.segv"),
        "hang.json": checking("hang", with: "unruly.hang"),
        "hog.json": checking("hog", with: "unruly.hog"),
        "net.json": checking("net", with: "unruly.network"),
        "pid.json": checking("pid", with: "unruly.pid"),
        "abort.json": PluginFlows.submitting(id: "abort", action: "unruly.abort"),
    ]) { a, _ in a }

    static func settings(network: Bool = false, memory: String = "128M") -> DaemonSettings {
        DaemonSettings(
            flows: flows,
            configuration: """
                [Plugins]
                CallTimeout=3s

                [Plugin FixtureUnrulyPlugin]
                Isolated=yes
                MemoryLimit=\(memory)
                Network=\(network ? "yes" : "no")
                """,
            plugins: ["FixtureUnrulyPlugin", "FixtureTestPlugin"])
    }

    /// The in-process plugin still answers, and flowd still runs.
    static func othersServe(_ fixture: DaemonFixture) async throws {
        let session = try await fixture.client.start("providers")
        #expect(try await fixture.client.setAnswers(session, ["even": .int64(3)])["even"] == "An even number must be even.")
        #expect(try await fixture.client.setAnswers(session, ["even": .int64(4)]) == [:])
        #expect(fixture.daemon.child.exitStatus == nil)
    }

    /// What `unruly.pid` says: the process id of the plugin's process.
    static func pluginPID(_ fixture: DaemonFixture) async throws -> String {
        let session = try await fixture.client.start("pid")
        let message = try #require(try await fixture.client.setAnswers(session, ["v": "x"])["v"])
        #expect(message.hasPrefix("pid "), "\(message)")
        return message
    }

    @Test("a validator that segfaults: the person is told the check failed, the plugin is quarantined (ListPlugins says so at once), flowd and the other plugin serve on, and the next start keeps it disabled")
    func segfault() async throws {
        try await withDaemon(Self.settings()) { fixture in
            let client = fixture.client
            let pid = try await Self.pluginPID(fixture)
            #expect(pid != "pid \(fixture.daemon.child.pid)", "the plugin runs in a process of its own")
            let session = try await client.start("segv")
            #expect(try await client.setAnswers(session, ["v": "x"])["v"] == "Couldn't check this value.")
            try await Self.othersServe(fixture)
            let log = fixture.daemon.standardError
            let line = try #require(log.split(separator: "\n").first { $0.contains("crashed its isolated process") }, "\(log)")
            #expect(line.contains("unruly.segv") && line.contains("SIGSEGV") && line.contains("plugin=unruly"), "\(line)")
            // Quarantined: its other capabilities fail at once, nothing restarts it.
            let after = try await client.start("pid")
            #expect(try await client.setAnswers(after, ["v": "x"])["v"] == "Couldn't check this value.")
            #expect(fixture.daemon.standardError.contains("is disabled: it crashed its isolated process"))
            // ListPlugins says so at once, not only after the next start.
            let now = try #require(try await client.listPlugins().first { $0.name == "unruly" })
            #expect(now.status == .disabled, "\(now)")
            #expect(now.error.contains("crashed its isolated process"), "\(now)")
            #expect(try await client.listPlugins().first { $0.name == "test" }?.status == .loaded)

            // The quarantine is kept: the next start disables the plugin.
            #expect(await fixture.stop() == .exited(0))
            try await fixture.startAgain()
            let unruly = try #require(try await fixture.connect().listPlugins().first { $0.name == "unruly" })
            #expect(unruly.status == .disabled, "\(unruly)")
            #expect(unruly.error.contains("crashed its isolated process"), "\(unruly)")
            try await Self.othersServe(fixture)
        }
    }

    @Test("a submit action that aborts: the session fails with the plugin's failure, flowd serves on")
    func abortingSubmit() async throws {
        try await withDaemon(Self.settings()) { fixture in
            let session = try await SubmitTests.onReview(fixture.client, "abort")
            let message = await expectDBusError("org.flowd.Flow1.Error.SubmitFailed") {
                try await fixture.client.submit(session)
            }
            #expect(message == "Couldn't send this. Try again.")
            #expect(try await fixture.client.property(.state, of: session) == "failed")
            #expect(try await fixture.client.property(.lastError, of: session) == "Couldn't send this. Try again.")
            try await Self.othersServe(fixture)
            #expect(fixture.daemon.standardError.contains("SIGABRT"), "\(fixture.daemon.standardError)")
        }
    }

    @Test("a validator that hangs: it times out, its process is killed and started again, and the plugin answers from the new process")
    func hang() async throws {
        try await withDaemon(Self.settings()) { fixture in
            let client = fixture.client
            let before = try await Self.pluginPID(fixture)
            let session = try await client.start("hang")
            #expect(try await client.setAnswers(session, ["v": "x"])["v"] == "Checking this value took too long. Try again.")
            try await Self.othersServe(fixture)
            // The kill follows the timeout answer by a moment (killGrace).
            _ = await PluginSDKTests.log(of: fixture) { $0.contains("isolated plugin unruly was killed") }
            let after = try await Self.pluginPID(fixture)
            #expect(after != before, "a new process: \(before) then \(after)")
            let log = fixture.daemon.standardError
            #expect(log.contains("isolated plugin unruly was killed: its call to unruly.hang ran past its time limit"), "\(log)")
            #expect(!log.contains("crashed its isolated process"), "a kill on timeout is no crash: \(log)")
        }
    }

    @Test("a validator that allocates without bound: its memory limit ends it, flowd serves on")
    func unboundedAllocation() async throws {
        try await withDaemon(Self.settings()) { fixture in
            let session = try await fixture.client.start("hog")
            #expect(try await fixture.client.setAnswers(session, ["v": "x"])["v"] == "Couldn't check this value.")
            try await Self.othersServe(fixture)
            let log = fixture.daemon.standardError
            #expect(log.contains("crashed its isolated process during a call to unruly.hog"), "\(log)")
        }
    }

    @Test("a network socket is refused unless the plugin is allowed the network", arguments: [false, true])
    func network(allowed: Bool) async throws {
        try await withDaemon(Self.settings(network: allowed)) { fixture in
            let session = try await fixture.client.start("net")
            let message = try await fixture.client.setAnswers(session, ["v": "x"])["v"]
            #expect(message == (allowed ? "network: allowed" : "network: refused (errno \(EPERM))"))
        }
    }

    @Test("stopped as systemd stops the unit (SIGTERM to every process): the plugin's process is not started again, and flowd ends and reaps it before it exits 0")
    func stopLikeSystemd() async throws {
        try await withDaemon(Self.settings()) { fixture in
            let said = try await Self.pluginPID(fixture)
            let helper = try #require(Int32(said.dropFirst("pid ".count)), "\(said)")
            // `systemctl stop` (KillMode=control-group) signals the helper
            // too. A helper that died of it was started again by flowd as
            // flowd stopped: a new process in the unit, which systemd in a
            // container with cgroup v1 lost track of until its stop timed
            // out (90 s). The helper leaves the signal to flowd.
            #expect(kill(helper, SIGTERM) == 0)
            #expect(try await Self.pluginPID(fixture) == said, "the same process serves on")
            #expect(!fixture.daemon.standardError.contains("started again"), "\(fixture.daemon.standardError)")
            // flowd's stop kills its helper and reaps it before it exits:
            // when flowd's exit is seen the helper is gone, not a zombie
            // left to be reparented.
            #expect(kill(helper, SIGTERM) == 0)
            #expect(await fixture.stop() == .exited(0))
            #expect(kill(helper, 0) == -1 && errno == ESRCH, "flowd-plugin-host \(helper) outlived flowd")
        }
    }

    /// Drives the test plugin's validators, providers and submit actions and
    /// writes down everything flowd answered.
    static func transcript(_ fixture: DaemonFixture) async throws -> [String] {
        let client = fixture.client
        var lines: [String] = []
        let providers = try await client.startSession(flow: "providers", locale: "en", prefill: [:])
        lines.append("prefill: \(try await client.step(providers))")
        lines.append("odd: \(try await client.setAnswers(providers, ["even": .int64(3)]))")
        lines.append("fraction: \(try await client.setAnswers(providers, ["even": .double(2.5)]))")
        lines.append("even: \(try await client.setAnswers(providers, ["even": .int64(4)]))")
        lines.append("continue: \(try await client.continueStep(providers))")
        lines.append("options: \(try await client.step(providers))")
        lines.append("choose: \(try await client.setAnswers(providers, ["colour": "red"]))")
        lines.append("continue: \(try await client.continueStep(providers))")
        lines.append("differ: \(try await client.setAnswers(providers, ["first": "a", "second": "b"]))")
        lines.append("rule: \(try await client.continueStep(providers))")
        for flow in ["echo", "fail", "opaque"] {
            let session = try await SubmitTests.onReview(client, flow)
            var outcome = "submitted"
            do {
                try await client.submit(session)
            } catch {
                outcome = "\(error)"
            }
            let receipt = String(describing: try await client.property(.receipt, of: session))
                .replacingOccurrences(of: session, with: "SESSION")
            lines.append("\(flow): \(outcome) \(try await client.property(.state, of: session)) \(try await client.property(.lastError, of: session)) \(receipt)")
        }
        return lines
    }

    @Test("validators, providers and submit actions give the same answers isolated as in-process")
    func sameAnswers() async throws {
        let inProcess = DaemonSettings(flows: PluginFlows.submitFlows, plugins: ["FixtureTestPlugin"])
        var isolated = inProcess
        isolated.configuration = "[Plugin FixtureTestPlugin]\nIsolated=yes\n"
        let expected = try await withDaemon(inProcess) { try await Self.transcript($0) }
        let got = try await withDaemon(isolated) { fixture in
            let plugin = try #require(try await fixture.client.listPlugins().first { $0.name == "test" })
            #expect(plugin.status == .loaded)
            return try await Self.transcript(fixture)
        }
        #expect(got == expected)
        #expect(expected.count == 13)
    }
}
