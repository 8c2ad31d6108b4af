// FixturePatientPlugin: a healthy plugin in a long call. `patient.wait` says
// which thread runs it, then blocks that thread — in the plugin's own code —
// until its time is up, and returns normally. The crash-guard tests kill or
// crash the process meanwhile, and the plugin must not be blamed.
import FlowKit
import Glibc

/// `patient.wait`: options `ready` (a file to write the thread id to, once
/// the call runs) and `seconds` (how long to block; default an hour).
struct WaitSubmit: SubmitAction {
    func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt {
        let seconds = context.options["seconds"]?.intValue ?? 3600
        if let ready = context.options["ready"]?.stringValue {
            announce(threadID(), to: ready)
        }
        var left = UInt32(max(0, seconds))
        while left > 0 { left = sleep(left) }
        return SubmitReceipt(["waited": .number(Double(seconds))])
    }

    /// This thread's id, from the `/proc/thread-self` link (`<pid>/task/<tid>`).
    func threadID() -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        let n = readlink("/proc/thread-self", &buffer, buffer.count - 1)
        guard n > 0 else { return "" }
        let link = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return link.split(separator: "/").last.map(String.init) ?? ""
    }

    /// Writes `text` to `path` through a temporary file and a rename, so a
    /// reader sees all of it or nothing.
    func announce(_ text: String, to path: String) {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let bytes = Array((text + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        rename(temporary, path)
    }
}

/// `patient.gate`: blocks its thread — in the plugin's own code, polling —
/// until the file named by option `gate` exists, then returns. The tests of
/// the plugin pool's fairness hold calls with it for as long as they like.
struct GateSubmit: SubmitAction {
    func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt {
        guard let gate = context.options["gate"]?.stringValue else { return SubmitReceipt() }
        while access(gate, F_OK) != 0 { usleep(10_000) }
        return SubmitReceipt(["gate": .string("open")])
    }
}

@_cdecl("flowd_plugin_abi_version")
public func flowdPluginABIVersion() -> UInt32 { FlowKitABI.version }

@_cdecl("flowd_plugin_register")
public func flowdPluginRegister() -> UnsafeMutableRawPointer? {
    PluginRegistration(
        name: "patient", version: "1.0",
        capabilities: [
            .submitAction("patient.wait", WaitSubmit()), .submitAction("patient.gate", GateSubmit()),
        ]
    ).exportRetained()
}
