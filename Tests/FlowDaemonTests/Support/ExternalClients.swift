import Foundation
import Testing
import TestSupport

/// Clients nobody here wrote: systemd's `busctl` (sd-bus) and GLib's `gdbus`,
/// run against the fixture's private bus, optionally as another uid.
struct ExternalClient {
    /// The uid `nobody` (the second user of the two-user tests).
    static let nobody: UInt32 = 65534

    let address: String
    /// When set, every command runs under `setpriv` with this uid and gid.
    var uid: UInt32?

    init(_ fixture: DaemonFixture, uid: UInt32? = nil) {
        self.init(address: fixture.bus.address, uid: uid)
    }

    /// A client of the bus at `address` (empty: a tool that needs no bus).
    init(address: String, uid: UInt32? = nil) {
        self.address = address
        self.uid = uid
    }

    /// True when this process may switch uids with `setpriv` (root).
    static var canSwitchUser: Bool { getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") }

    /// Runs `tool` with `arguments` in a minimal environment; the result.
    func run(_ tool: String, _ arguments: [String]) throws -> ChildProcess.Result {
        let environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
        if let uid {
            return try ChildProcess.run(
                "setpriv",
                ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "--", tool] + arguments,
                environment: environment, inheritEnvironment: false)
        }
        return try ChildProcess.run(tool, arguments, environment: environment, inheritEnvironment: false)
    }

    /// Starts `tool` in the background (for `gdbus monitor`), as ``uid`` when set.
    func spawn(_ tool: String, _ arguments: [String]) throws -> ChildProcess {
        let environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
        if let uid {
            return try ChildProcess(
                "setpriv", ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "--", tool] + arguments,
                environment: environment, inheritEnvironment: false)
        }
        return try ChildProcess(tool, arguments, environment: environment, inheritEnvironment: false)
    }

    /// `gdbus monitor` of everything flowd sends, started and subscribed.
    func monitor() throws -> ChildProcess {
        let monitor = try spawn("gdbus", ["monitor", "--address", address, "--dest", "org.flowd.Flow1"])
        guard monitor.waitForOutput(until: { $0.contains("is owned by") }) else {
            monitor.terminate(grace: .seconds(1))
            throw TestSupportError("gdbus monitor did not start: \(monitor.standardError)")
        }
        return monitor
    }

    /// Runs `tool` and expects success; returns its trimmed stdout.
    @discardableResult
    func succeed(
        _ tool: String, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> String {
        let result = try run(tool, arguments)
        #expect(result.status == .exited(0), "\(tool) \(arguments.joined(separator: " ")): \(result.standardError)",
                sourceLocation: sourceLocation)
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: gdbus

    /// `gdbus call` of `interface.method` on `path` with GVariant-text arguments; the raw result.
    func gdbus(_ path: String, _ method: String, _ arguments: [String] = []) throws -> ChildProcess.Result {
        try run(
            "gdbus",
            ["call", "--address", address, "--dest", "org.flowd.Flow1", "--object-path", path, "--method", method]
                + arguments)
    }

    /// `gdbus call` expected to succeed; its stdout (GVariant text).
    @discardableResult
    func gdbusOK(
        _ path: String, _ method: String, _ arguments: [String] = [], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> String {
        let result = try gdbus(path, method, arguments)
        #expect(result.status == .exited(0), "gdbus \(method) \(arguments): \(result.standardError)", sourceLocation: sourceLocation)
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `gdbus call` expected to fail with the D-Bus error `name` (gdbus
    /// prints `GDBus.Error:<name>: <message>`).
    func gdbusFails(
        _ path: String, _ method: String, _ arguments: [String] = [], with name: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let result = try gdbus(path, method, arguments)
        #expect(result.status != .exited(0), "gdbus \(method) succeeded: \(result.standardOutput)", sourceLocation: sourceLocation)
        #expect(result.standardError.contains("GDBus.Error:\(name):"), "gdbus \(method): \(result.standardError)",
                sourceLocation: sourceLocation)
    }

    // MARK: busctl

    /// `busctl --address=… <arguments>`.
    func busctl(_ arguments: [String]) throws -> ChildProcess.Result {
        try run("busctl", ["--address=\(address)"] + arguments)
    }

    /// `busctl call org.flowd.Flow1 PATH INTERFACE METHOD [SIGNATURE ARGS…]`, expected to succeed.
    @discardableResult
    func busctlCall(
        _ path: String, _ interface: String, _ method: String, _ arguments: [String] = [], json: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> String {
        let result = try busctl((json ? ["--json=short"] : []) + ["call", "org.flowd.Flow1", path, interface, method] + arguments)
        #expect(result.status == .exited(0), "busctl call \(method) \(arguments): \(result.standardError)",
                sourceLocation: sourceLocation)
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `busctl get-property` of a session property; the text (`s "review"`).
    func busctlProperty(_ path: String, _ interface: String, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let result = try busctl(["get-property", "org.flowd.Flow1", path, interface, name])
        #expect(result.status == .exited(0), "busctl get-property \(name): \(result.standardError)", sourceLocation: sourceLocation)
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Reading busctl's `--json=short` output.
enum BusctlJSON {
    /// The `data` array of a `busctl --json=short call` reply.
    static func data(_ text: String) throws -> [Any] {
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        guard let dictionary = object as? [String: Any], let data = dictionary["data"] as? [Any] else {
            throw TestSupportError("not a busctl JSON reply: \(text)")
        }
        return data
    }

    /// The `data` of an `a{sv}` entry, `{"type": …, "data": …}`.
    static func value(_ entry: Any?) -> Any? {
        (entry as? [String: Any])?["data"]
    }
}

/// The single quoted string in a GVariant text such as `(objectpath '/a/b',)` or `('x',)`.
func gvariantQuotedStrings(_ text: String) -> [String] {
    var strings: [String] = []
    var current: String?
    var escaped = false
    for character in text {
        if var inside = current {
            if escaped {
                inside.append(character)
                escaped = false
                current = inside
            } else if character == "\\" {
                escaped = true
            } else if character == "'" {
                strings.append(inside)
                current = nil
            } else {
                inside.append(character)
                current = inside
            }
        } else if character == "'" {
            current = ""
        }
    }
    return strings
}
