// FixtureCrashPlugin: calls that kill the process. Only ever called in a
// subprocess (plugin-host-probe); the crash guard must disable it afterwards.
import FlowKit
import Glibc

/// `crash.fatal`: a submit that stops the process with fatalError (SIGILL/SIGTRAP).
struct FatalSubmit: SubmitAction {
    func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt {
        fatalError("crash.fatal was called")
    }
}

/// `crash.null`: a field validator that writes through a null pointer (SIGSEGV).
struct NullValidator: FieldValidator {
    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        // Address 16: in the null page, computed at run time so the
        // optimizer cannot see it coming.
        let address = Int(getpid() & 0) + 16
        UnsafeMutablePointer<Int>(bitPattern: address)?.pointee = 1
        return nil
    }
}

@_cdecl("flowd_plugin_abi_version")
public func flowdPluginABIVersion() -> UInt32 { FlowKitABI.version }

@_cdecl("flowd_plugin_register")
public func flowdPluginRegister() -> UnsafeMutableRawPointer? {
    PluginRegistration(
        name: "crash", version: "1.0",
        capabilities: [
            .submitAction("crash.fatal", FatalSubmit()),
            .fieldValidator("crash.null", NullValidator()),
        ]
    ).exportRetained()
}
