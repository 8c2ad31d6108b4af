/// What a plugin's entry point returns: who it is and what it provides.
///
/// A plugin exports two C symbols:
///
/// ```swift
/// import FlowKit
///
/// @_cdecl("flowd_plugin_abi_version")
/// public func flowdPluginABIVersion() -> UInt32 { FlowKitABI.version }
///
/// @_cdecl("flowd_plugin_register")
/// public func flowdPluginRegister() -> UnsafeMutableRawPointer? {
///     PluginRegistration(name: "example", version: "1.0",
///                        capabilities: [.fieldValidator("example.even", EvenValidator())])
///         .exportRetained()
/// }
/// ```
///
/// The daemon calls the first before the second, so a plugin built against
/// another FlowKit is refused before any of its Swift objects are used.
public final class PluginRegistration: Sendable {
    /// The plugin's name, for example `flowd.spool`.
    public let name: String
    /// The plugin's own version, free-form.
    public let version: String
    /// The FlowKit ABI the plugin was built against.
    public let abiVersion: UInt32
    /// The named capabilities.
    public let capabilities: [Capability]

    /// Makes a registration that records the ABI of the FlowKit the caller is
    /// compiled against.
    @_alwaysEmitIntoClient
    public convenience init(name: String, version: String, capabilities: [Capability]) {
        self.init(name: name, version: version, abiVersion: FlowKitABI.version, capabilities: capabilities)
    }

    /// Makes a registration with an explicit ABI version (the loader's tests use
    /// this to build a plugin that claims another ABI).
    public init(name: String, version: String, abiVersion: UInt32, capabilities: [Capability]) {
        self.name = name
        self.version = version
        self.abiVersion = abiVersion
        self.capabilities = capabilities
    }

    /// Hands the registration to the daemon across the C boundary, retained once.
    public func exportRetained() -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(self).toOpaque()
    }

    /// Takes back a registration that ``exportRetained()`` produced, balancing
    /// its retain. Only the daemon's loader calls this.
    public static func takeExported(_ pointer: UnsafeMutableRawPointer) -> PluginRegistration {
        Unmanaged<PluginRegistration>.fromOpaque(pointer).takeRetainedValue()
    }
}
