// FixtureCrashOnLoadPlugin: its registration entry point kills the process.
// Only ever loaded in a subprocess; the crash guard must keep it from being
// loaded again.
import FlowKit

@_cdecl("flowd_plugin_abi_version")
public func flowdPluginABIVersion() -> UInt32 { FlowKitABI.version }

@_cdecl("flowd_plugin_register")
public func flowdPluginRegister() -> UnsafeMutableRawPointer? {
    fatalError("crash-on-load registration")
}
