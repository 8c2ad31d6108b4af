import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// No user can starve another's plugin calls (the first defect of the
/// hostile-client campaign): a second uid runs more slow `flowd.command`
/// submits at once than flowd has plugin threads, and root's StartSession,
/// which calls an options provider, still succeeds; none of the submits
/// times out although together they run longer than their limit.
@Suite("Plugin calls are fair between users", .enabled(if: ExternalClient.canSwitchUser, "needs root and setpriv"))
struct PluginFairnessTests {
    /// Two more than the daemon's plugin threads (PluginExecutor.shared, 32):
    /// when each submit held a thread while its program ran, the last ones
    /// waited for a thread and then ran past their limit.
    static let submits = 34
    /// Each program runs this long; the flow allows `limit`, less than two
    /// runs, so a submit that waited for another's thread would time out.
    /// The run is long because nobody's 34 `gdbus` processes must all have
    /// started before the first ends: on a loaded machine starting them
    /// took more than 8 seconds.
    static let seconds = 25
    static let limit = 40

    static let settings: DaemonSettings = {
        var flows = PluginFlows.submitFlows
        flows["slowcmd.json"] = PluginFlows.submitting(
            id: "slowcmd", action: "flowd.command", options: #"{"path": "/usr/bin/sleep", "args": ["\#(seconds)"]}"#,
            timeoutSeconds: "\(limit)")
        // A provider that finds no thread in 2 s fails StartSession.
        return DaemonSettings(
            flows: flows, configuration: "[Plugins]\nCallTimeout=2s\n", allowUsers: [ExternalClient.nobody],
            plugins: ["FixtureTestPlugin", "CommandPlugin"])
    }()

    @Test("another uid's slow command submits delay neither root's StartSession nor each other")
    func slowSubmitsOfOneUIDDoNotStarveAnother() async throws {
        try await withDaemon(Self.settings) { fixture in
            let work = fixture.directory.file("nobody")
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: false)
            chmod(work, 0o777)
            let call = "gdbus call --address '\(fixture.bus.address)' --dest org.flowd.Flow1"
            // As nobody: the sessions one by one, then every Submit at once.
            let script = """
                set -eu
                cd '\(work)'
                for i in $(seq 1 \(Self.submits)); do
                    path=$(\(call) --object-path /org/flowd/Flow1 \
                        --method org.flowd.Flow1.Manager.StartSession slowcmd '{}' | sed -e "s/^[^']*'//" -e "s/'.*//")
                    \(call) --object-path "$path" --method org.flowd.Flow1.Session.SetAnswers "{'name': <'n$i'>}" >/dev/null
                    \(call) --object-path "$path" --method org.flowd.Flow1.Session.Continue >/dev/null
                    echo "$path" >> paths
                done
                for path in $(cat paths); do
                    ( if \(call) --timeout 120 --object-path "$path" --method org.flowd.Flow1.Session.Submit \
                        > "out.${path##*/}" 2>&1; then echo ok; else echo "failed ${path##*/}"; fi >> results ) &
                done
                wait
                """
            let nobody = ExternalClient(fixture, uid: ExternalClient.nobody)
            let runner = try nobody.spawn("sh", ["-c", script])

            // Every submit of nobody's is running.
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: .seconds(120))
            var submitting = 0
            var most = 0
            while clock.now < deadline && runner.exitStatus == nil {
                submitting = try await fixture.client.listSessions().filter { $0.state == .submitting }.count
                most = max(most, submitting)
                if submitting == Self.submits { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(submitting == Self.submits, "at most \(most) at once; \(runner.standardError)")

            // Root's session, whose options come from a plugin, starts now.
            let root = try await fixture.client.start("providers")
            #expect(try await fixture.client.property(.state, of: root) == "editing")

            // Every submit ends submitted: none waited for a thread at the cost of its own time.
            #expect(await runner.ended(before: MonotonicClock.now().advanced(by: .seconds(120))) == .exited(0), "\(runner.standardError)")
            let results = (try? String(contentsOfFile: work + "/results", encoding: .utf8)) ?? ""
            let lines = results.split(separator: "\n")
            #expect(lines.count == Self.submits)
            #expect(lines.allSatisfy { $0 == "ok" }, "\(results)")
            let nobodys = try await fixture.client.listSessions().filter { $0.flowID == "slowcmd" }
            #expect(nobodys.count == Self.submits)
            #expect(nobodys.allSatisfy { $0.state == .submitted }, "\(nobodys.map(\.state))")
            #expect(!fixture.daemon.standardError.contains("no plugin thread was free"))
        }
    }
}
