/// The plugin ABI of FlowKit.
///
/// Swift has no stable ABI on Linux, so a plugin must be built with the same
/// toolchain and the same FlowKit as the daemon that loads it. The loader asks a
/// plugin for the ABI it was built against *before* it touches any Swift type the
/// plugin made, and refuses the plugin when the number differs from its own.
public enum FlowKitABI {
    /// The ABI version this code was compiled against: derived from
    /// ``interfaceFingerprint``, a hash of FlowKit's sources that a test
    /// keeps equal to them, so no change to the SDK can go unnoticed.
    ///
    /// `@_alwaysEmitIntoClient` bakes the value into the caller's binary: a
    /// plugin reports the FlowKit *sources* it was built with, not the
    /// `libFlowKit.so` that happens to be loaded next to it. The loader
    /// refuses a plugin whose number is not its own before it runs anything
    /// but this function, so a plugin built against another FlowKit —
    /// another layout of a type, another set of protocol requirements, even
    /// one with a default implementation (FlowKit is built without library
    /// evolution, so a plugin's witness tables have one slot per requirement
    /// it was compiled with) — never gets to call into the daemon.
    ///
    /// History: 1, 2 and 3 were bumped by hand (1, the first; 2,
    /// `describeRule`; 3, warnings). Since SDK 1.1 the number is
    /// `0x8000_0000 | (fingerprint & 0x7fff_ffff)`: never one of those.
    @_alwaysEmitIntoClient
    public static var version: Version { version(ofFingerprint: interfaceFingerprint) }

    /// The ABI version that belongs to an interface fingerprint.
    @_alwaysEmitIntoClient
    public static func version(ofFingerprint fingerprint: UInt64) -> Version {
        0x8000_0000 | UInt32(truncatingIfNeeded: fingerprint ^ (fingerprint >> 32)) & 0x7fff_ffff
    }

    /// The C symbol that returns the ABI version, `@convention(c) () -> UInt32`.
    public static let abiSymbol = "flowd_plugin_abi_version"

    /// The C symbol that returns the retained registration,
    /// `@convention(c) () -> UnsafeMutableRawPointer?`.
    public static let registerSymbol = "flowd_plugin_register"
}
