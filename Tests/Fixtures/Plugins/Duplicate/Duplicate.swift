// FixtureDuplicatePlugin: registers `test.even`, which FixtureTestPlugin already
// provides. Loaded after it, it must be refused with the owner's name.
import FlowKit

struct AlwaysFine: FieldValidator {
    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? { nil }
}

@_cdecl("flowd_plugin_abi_version")
public func flowdPluginABIVersion() -> UInt32 { FlowKitABI.version }

@_cdecl("flowd_plugin_register")
public func flowdPluginRegister() -> UnsafeMutableRawPointer? {
    PluginRegistration(
        name: "duplicate", version: "1.0",
        capabilities: [
            .fieldValidator("duplicate.fine", AlwaysFine()),
            .fieldValidator("test.even", AlwaysFine()),
        ]
    ).exportRetained()
}
