// FixtureBadOptionsPlugin: a capability that declares one option twice, so
// its flows could not be checked. Refused at load.
import FlowKit

struct Twice: SubmitAction, DeclaresOptions {
    static let declaredOptions = [
        PluginOption(name: "path", type: .string, required: true),
        PluginOption(name: "path", type: .strings),
    ]
    func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt { SubmitReceipt() }
}

@_cdecl("flowd_plugin_abi_version")
public func flowdPluginABIVersion() -> UInt32 { FlowKitABI.version }

@_cdecl("flowd_plugin_register")
public func flowdPluginRegister() -> UnsafeMutableRawPointer? {
    PluginRegistration(
        name: "bad-options", version: "1.0",
        capabilities: [.submitAction("bad-options.twice", Twice())]
    ).exportRetained()
}
