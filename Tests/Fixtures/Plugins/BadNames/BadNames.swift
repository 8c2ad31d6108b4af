// FixtureBadNamesPlugin: a capability name without a vendor part. Refused.
import FlowKit

struct AlwaysFine: FieldValidator {
    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? { nil }
}

@_cdecl("flowd_plugin_abi_version")
public func flowdPluginABIVersion() -> UInt32 { FlowKitABI.version }

@_cdecl("flowd_plugin_register")
public func flowdPluginRegister() -> UnsafeMutableRawPointer? {
    PluginRegistration(
        name: "bad-names", version: "1.0",
        capabilities: [.fieldValidator("Undotted", AlwaysFine())]
    ).exportRetained()
}
