import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// Options checked at load, through flowd with real plugins dlopen'ed: the
/// shipped spool plugin declares its options, the test plugin declares none.
@Suite("Plugin options checked when flowd loads a flow")
struct PluginOptionsTests {
    @Test("a flow with a misspelt or mistyped option is refused with the JSON path; fitting and unchecked ones are served")
    func misspeltOptionRefused() async throws {
        var flows: [String: String] = [
            "spool.json": PluginFlows.submitting(id: "spool", action: "flowd.spool", options: #"{"includeSecure": false}"#),
            "typo.json": PluginFlows.submitting(id: "typo", action: "flowd.spool", options: #"{"directroy": "/tmp"}"#),
            "mistyped.json": PluginFlows.submitting(id: "mistyped", action: "flowd.spool", options: #"{"includeSecure": "yes"}"#),
        ]
        // test.echo-submit declares nothing: whatever the flow gives reaches it.
        flows["echo.json"] = PluginFlows.submitting(
            id: "echo", action: "test.echo-submit", options: #"{"receipt": {"kept": true}, "anything": 1}"#)
        let settings = DaemonSettings(flows: flows, plugins: ["SpoolPlugin", "FixtureTestPlugin"])
        try await withDaemon(settings) { fixture in
            #expect(try await fixture.client.flowIDs() == ["echo", "spool"])
            let status = try await fixture.client.status()
            let refused = Dictionary(
                status.refusedFlows.map { (URL(fileURLWithPath: $0.file).lastPathComponent, $0.reason) },
                uniquingKeysWith: { a, _ in a })
            #expect(refused.keys.sorted() == ["mistyped.json", "typo.json"], "\(status.refusedFlows)")
            #expect(
                refused["typo.json"]?.hasSuffix(
                    #"typo.json: submit.options.directroy: flowd.spool has no option "directroy" (did you mean "directory"?)"#)
                    == true, "\(refused)")
            #expect(
                refused["mistyped.json"]?.hasSuffix(
                    #"mistyped.json: submit.options.includeSecure: flowd.spool's option "includeSecure" must be true or false, got a string"#)
                    == true, "\(refused)")
            await expectDBusError(FlowdErrorName.notFound) { _ = try await fixture.client.start("typo") }
            // The journal (stderr here) names the file and the path too.
            #expect(fixture.daemon.standardError.contains("submit.options.directroy"), "\(fixture.daemon.standardError)")
        }
    }
}
