// FixtureWrongABIPlugin: claims to be built against FlowKit ABI 7. The loader
// must refuse it before it calls the registration entry point.
import FlowKit

@_cdecl("flowd_plugin_abi_version")
public func flowdPluginABIVersion() -> UInt32 { 7 }

@_cdecl("flowd_plugin_register")
public func flowdPluginRegister() -> UnsafeMutableRawPointer? {
    // Never reached by a correct loader; if it is, crash so a test notices.
    fatalError("the loader called the registration of a plugin with the wrong ABI")
}
