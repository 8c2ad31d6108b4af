// flowd.validators: field validators that real flows need.
import FlowKit
import FlowdPluginSupport

@_cdecl("flowd_plugin_abi_version")
public func flowdPluginABIVersion() -> UInt32 { FlowKitABI.version }

@_cdecl("flowd_plugin_register")
public func flowdPluginRegister() -> UnsafeMutableRawPointer? {
    PluginRegistration(
        name: "flowd.validators", version: "1.0",
        capabilities: [
            .fieldValidator(HostnameValidator.name, HostnameValidator()),
            .fieldValidator(UsernameAvailableValidator.name, UsernameAvailableValidator()),
            .fieldValidator(DateWindowValidator.name, DateWindowValidator()),
        ]
    ).exportRetained()
}
