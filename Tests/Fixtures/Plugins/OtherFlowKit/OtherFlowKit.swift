// FixtureOtherFlowKitPlugin: reports the ABI of a FlowKit whose sources
// differ from this one's (another interface fingerprint), as a plugin built
// against a changed SDK does. The loader must refuse it before it calls the
// registration entry point.
import FlowKit

@_cdecl("flowd_plugin_abi_version")
public func flowdPluginABIVersion() -> UInt32 {
    FlowKitABI.version(ofFingerprint: FlowKitABI.interfaceFingerprint ^ 0x5a5a)
}

@_cdecl("flowd_plugin_register")
public func flowdPluginRegister() -> UnsafeMutableRawPointer? {
    // Never reached by a correct loader; if it is, crash so a test notices.
    fatalError("the loader called the registration of a plugin built against another FlowKit")
}
