import DBus
import Foundation
import TestSupport

/// The built executables: next to the test bundle, or in `.build/debug`.
enum Binaries {
    static let directory = BuildProducts.directory(holding: "flowctl")

    static var flowctl: String { directory + "/flowctl" }
    static var flowd: String { directory + "/flowd" }
}

/// Flows the integration tests run: they name no plugin, so they load
/// whatever plugins the daemon has.
enum TestFlows {
    /// Two steps with a secure field, a choice with Other, a number with
    /// bounds, Review, and translations.
    static let plain = """
        {"format": 1, "id": "plain", "title": {"en": "Plain", "de": "Schlicht"},
         "steps": [
          {"id": "who", "title": {"en": "Who you are", "de": "Wer Sie sind"}, "fields": [
             {"id": "name", "type": "text", "label": "Name", "required": true},
             {"id": "pin", "type": "secure", "label": "PIN", "required": true, "minLength": 4}]},
          {"id": "what", "title": {"en": "What it is about", "de": "Worum es geht"}, "fields": [
             {"id": "topic", "type": "choice", "label": "Topic", "required": true,
              "options": [{"id": "engines", "label": "Engines"}, {"id": "looms", "label": "Looms"}], "other": true},
             {"id": "count", "type": "number", "label": "How many", "required": true, "integer": true,
              "minimum": 1, "maximum": 9},
             {"id": "urgent", "type": "toggle", "label": "Urgent"},
             {"id": "days", "type": "multichoice", "label": "Days",
              "options": [{"id": "mon", "label": "Monday"}, {"id": "tue", "label": "Tuesday"}]}]}],
         "review": {"title": "Review", "note": "Nothing is sent anywhere."}}
        """

    /// One step and no Review: Continue finishes.
    static let quick = """
        {"format": 1, "id": "quick", "title": "Quick", "finishTitle": "Send",
         "steps": [{"id": "only", "title": "Only", "fields": [
           {"id": "ok", "type": "toggle", "label": "Agree", "mustBeOn": true}]}]}
        """
}

/// A real flowd on a private bus, with its own flows, plugin and state
/// directories, for running the built flowctl against.
final class DaemonFixture: @unchecked Sendable {
    let bus: PrivateBus
    let directory: TemporaryDirectory
    let daemon: ChildProcess

    var address: String { bus.address }

    /// A flowd serving `flows` (file name → JSON) with the built plugins
    /// `plugins` (product names such as `ValidatorsPlugin`) in its plugin directory.
    init(
        flows: [String: String] = ["plain.json": TestFlows.plain, "quick.json": TestFlows.quick],
        plugins: [String] = []
    ) throws {
        bus = try PrivateBus()
        directory = try TemporaryDirectory(prefix: "flowctl-it")
        for sub in ["flows", "plugins", "state"] {
            try FileManager.default.createDirectory(atPath: directory.file(sub), withIntermediateDirectories: true)
        }
        for (name, text) in flows { try directory.write("flows/" + name, text) }
        // The loader takes a plugin owned by root or by flowd's user, writable by nobody else.
        for product in plugins {
            let target = directory.file("plugins/" + product.replacingOccurrences(of: "Plugin", with: "").lowercased() + ".so")
            try FileManager.default.copyItem(atPath: Binaries.directory + "/lib\(product).so", toPath: target)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: target)
        }
        daemon = try ChildProcess(
            Binaries.flowd,
            ["--address", bus.address, "--flows-dir", directory.file("flows"), "--plugin-dir", directory.file("plugins"),
             "--state-dir", directory.file("state")],
            environment: bus.environment)
        try waitForName()
    }

    /// The shipped flows with the shipped plugins, and the test plugin
    /// (`test.slow-submit`, `test.fail-submit`, …) for flows a test adds.
    static func shipped(adding extra: [String: String] = [:]) throws -> DaemonFixture {
        var flows: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: Repository.flowsDirectory) where name.hasSuffix(".json") {
            flows[name] = try String(contentsOfFile: Repository.flowsDirectory + "/" + name, encoding: .utf8)
        }
        flows.merge(extra) { _, new in new }
        return try DaemonFixture(flows: flows, plugins: shippedPlugins + ["FixtureTestPlugin"])
    }

    /// The plugins `make install` ships, by product name.
    static let shippedPlugins = ["SpoolPlugin", "CommandPlugin", "WebhookPlugin", "ValidatorsPlugin", "ProvidersPlugin"]

    deinit {
        daemon.terminate()
    }

    /// Waits (bounded, not timed) until flowd owns its name on the bus.
    private func waitForName() throws {
        let connection = try Connection(.address(bus.address))
        defer { connection.close() }
        try connection.addMatch(.nameOwnerChanged(for: "org.flowd.Flow1"))
        if try connection.nameHasOwner("org.flowd.Flow1") { return }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(60))
        while clock.now < deadline {
            if daemon.exitStatus != nil { throw TestSupportError("flowd exited: \(daemon.standardError)") }
            _ = try connection.nextSignal(matching: .nameOwnerChanged(for: "org.flowd.Flow1"), timeout: .seconds(1))
            if try connection.nameHasOwner("org.flowd.Flow1") { return }
        }
        throw TestSupportError("flowd did not take its name: \(daemon.standardError)")
    }

    /// Runs the built flowctl against this daemon.
    func flowctl(_ arguments: [String], environment: [String: String] = [:]) throws -> ChildProcess.Result {
        try ChildProcess.run(Binaries.flowctl, ["--address", bus.address] + arguments, environment: environment)
    }

    /// Runs flowctl with `input` on its standard input (through `sh`'s printf).
    func flowctl(_ arguments: [String], input: String) throws -> ChildProcess.Result {
        let quoted = (["--address", bus.address] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let script = "printf '%s' \"$INPUT\" | '\(Binaries.flowctl)' \(quoted.joined(separator: " "))"
        return try ChildProcess.run("/bin/sh", ["-c", script], environment: ["INPUT": input])
    }

    /// `flowctl start FLOW`'s id.
    func start(_ flow: String, _ extra: [String] = []) throws -> String {
        let result = try flowctl(["start", flow] + extra)
        guard result.status == .exited(0) else { throw TestSupportError("start \(flow): \(result.standardError)") }
        return result.standardOutput.trimmingCharacters(in: .newlines)
    }

    /// A terminal running flowctl against this daemon.
    func terminal(_ arguments: [String], environment: [String: String] = [:]) throws -> PseudoTerminal {
        try PseudoTerminal(Binaries.flowctl, ["--address", bus.address] + arguments, environment: environment)
    }
}
