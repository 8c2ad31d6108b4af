import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// `kill -9` of flowd during a `flowd.command` submit (the seventh defect of
/// the hostile-client campaign): the program dies with flowd, and the retry
/// after the restart carries the same idempotency key, so a receiver that
/// saw the first attempt can drop the second.
@Suite("A submit interrupted by kill -9")
struct InterruptedSubmitTests {
    @Test("the command dies with flowd, and the retry carries the same idempotency key")
    func commandDiesAndRetryKeepsItsKey() async throws {
        let hook = try TemporaryDirectory(prefix: "flowd-hook")
        // The first run announces itself and stays (exec: the same process);
        // a later run answers at once. Each notes the key it was given.
        let script = try hook.write(
            "hook.sh",
            """
            #!/bin/sh
            cat >/dev/null
            printf '%s\\n' "$FLOWD_IDEMPOTENCY_KEY" >>'\(hook.path)/keys'
            if [ ! -e '\(hook.path)/started' ]; then
                : >'\(hook.path)/started'
                echo $$ >'\(hook.path)/pid.tmp' && mv '\(hook.path)/pid.tmp' '\(hook.path)/pid'
                exec sleep 600
            fi
            echo '{"message": "Received."}'
            """)
        chmod(script, 0o755)
        var flows = TestFlows.standard
        flows["hook.json"] = PluginFlows.submitting(
            id: "hook", action: "flowd.command", options: #"{"path": "\#(script)"}"#, timeoutSeconds: "900")
        let settings = DaemonSettings(flows: flows, plugins: ["CommandPlugin"])

        try await withDaemon(settings) { fixture in
            let client = fixture.client
            let session = try await client.start("hook")
            #expect(try await client.setAnswers(session, ["name": "Ada"]) == [:])
            #expect(try await client.continueStep(session) == [:])
            let submitter = try fixture.connect()
            let pending = Task { try await submitter.submit(session) }
            let announced = ContinuousClock.now.advanced(by: .seconds(30))
            var pidText = ""
            while ContinuousClock.now < announced {
                pidText = (try? String(contentsOfFile: hook.file("pid"), encoding: .utf8)) ?? ""
                if !pidText.isEmpty { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            let pid = try #require(Int32(pidText.filter(\.isNumber)), "the hook never started")
            #expect(try await client.property(.state, of: session) == "submitting")

            await fixture.daemon.kill()
            // The program goes with flowd, not minutes later.
            #expect(await offThePool { waitUntilGone(pid) }, "the command \(pid) outlived flowd")
            if case .success = await pending.result {
                Issue.record("the interrupted Submit succeeded")
            }

            try await fixture.startAgain()
            let retrying = try fixture.connect()
            #expect(try await retrying.property(.state, of: session) == "failed")
            try await retrying.submit(session)
            #expect(try await retrying.property(.state, of: session) == "submitted")
            #expect(try await retrying.property(.receipt, of: session).vardict?["message"] == .string("Received."))
            let keys = try String(contentsOfFile: hook.file("keys"), encoding: .utf8).split(separator: "\n")
            #expect(keys == [Substring(session + "-1"), Substring(session + "-1")], "\(keys)")
        }
    }
}
