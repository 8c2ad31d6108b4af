// flowd.providers: option lists and initial values that real flows need.
import FlowKit
import FlowdPluginSupport

@_cdecl("flowd_plugin_abi_version")
public func flowdPluginABIVersion() -> UInt32 { FlowKitABI.version }

@_cdecl("flowd_plugin_register")
public func flowdPluginRegister() -> UnsafeMutableRawPointer? {
    PluginRegistration(
        name: "flowd.providers", version: "1.0",
        capabilities: [
            .optionsProvider(WeekdaysProvider.name, WeekdaysProvider()),
            .optionsProvider(TimeSlotsProvider.name, TimeSlotsProvider()),
            .prefillProvider(RealNameProvider.name, RealNameProvider()),
        ]
    ).exportRetained()
}
