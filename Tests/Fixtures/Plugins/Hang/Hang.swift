// FixtureHangPlugin: calls that do not come back in time, both ways a plugin
// can hang: cooperatively (Task.sleep, which cancellation ends) and by
// blocking its thread (sleep(3), which nothing ends).
import FlowKit
import Glibc

/// `hang.cooperative`: a field validator that waits an hour in Task.sleep.
struct CooperativeHang: FieldValidator {
    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        try await Task.sleep(for: .seconds(3600))
        return nil
    }
}

/// `hang.blocking`: a field validator that blocks its thread for an hour.
struct BlockingHang: FieldValidator {
    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        sleep(3600)
        return nil
    }
}

/// `hang.ignores-cancel`: a submit that keeps going after cancellation,
/// polling without ever checking it, for `{"seconds": N}` (default an hour).
struct IgnoresCancelSubmit: SubmitAction {
    func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt {
        let seconds = context.options["seconds"]?.intValue ?? 3600
        for _ in 0..<(seconds * 10) {
            try? await Task.sleep(for: .milliseconds(100))
        }
        return SubmitReceipt()
    }
}

/// `hang.blocking-submit`: a submit that blocks its thread for an hour.
struct BlockingSubmit: SubmitAction {
    func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt {
        sleep(3600)
        return SubmitReceipt()
    }
}

@_cdecl("flowd_plugin_abi_version")
public func flowdPluginABIVersion() -> UInt32 { FlowKitABI.version }

@_cdecl("flowd_plugin_register")
public func flowdPluginRegister() -> UnsafeMutableRawPointer? {
    PluginRegistration(
        name: "hang", version: "1.0",
        capabilities: [
            .fieldValidator("hang.cooperative", CooperativeHang()),
            .fieldValidator("hang.blocking", BlockingHang()),
            .submitAction("hang.ignores-cancel", IgnoresCancelSubmit()),
            .submitAction("hang.blocking-submit", BlockingSubmit()),
        ]
    ).exportRetained()
}
