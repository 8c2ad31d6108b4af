import FlowKit
import Foundation
import PluginHost
import PluginTestSupport
import Testing

/// Only FlowKit types cross between a plugin and the daemon. Each shipped
/// plugin links its own static copy of FlowdSystem (through
/// FlowdPluginSupport), so a FlowdSystem value thrown out of a plugin would
/// be a second copy of that type in the daemon: the plugins wrap what
/// FlowdSystem throws into errors of their own.
@Suite("Shipped plugins: what crosses the boundary")
struct PluginBoundaryTests {
    /// The submit action `name` of the loaded shipped plugins.
    func action(_ name: String, in report: PluginLoadReport) throws -> any SubmitAction {
        let registered = try #require(report.registry.capability(.submitAction, named: name))
        guard case .submitAction(_, let action) = registered.capability else {
            throw PluginBoundaryFailure(description: "\(name) is not a submit action")
        }
        return action
    }

    @Test("a failing system call comes out of a plugin as the plugin's own error type")
    func systemErrorsAreWrapped() async throws {
        let temp = try TemporaryDirectory()
        let (report, _) = try Shipped.load(in: temp)
        let file = temp.appending("a-file")
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let cases: [(action: String, options: [String: JSONValue], module: String)] = [
            ("flowd.spool", ["directory": .string(file + "/below")], "SpoolPlugin."),
            ("flowd.command", ["path": .string(temp.appending("no-such-program"))], "CommandPlugin."),
        ]
        for (name, options, module) in cases {
            do {
                _ = try await action(name, in: report).submit(
                    Samples.submission(), context: Samples.context(options: options))
                Issue.record("\(name) did not fail")
            } catch {
                let type = String(reflecting: Swift.type(of: error))
                #expect(type.hasPrefix(module), "\(name) threw \(type)")
                #expect(!type.hasPrefix("FlowdSystem."), "\(name) let a FlowdSystem type out: \(type)")
            }
        }
    }
}

struct PluginBoundaryFailure: Error, CustomStringConvertible {
    var description: String
}
