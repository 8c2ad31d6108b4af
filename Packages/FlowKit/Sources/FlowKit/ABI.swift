/// The plugin ABI of FlowKit.
///
/// Swift has no stable ABI on Linux, so a plugin must be built with the same
/// toolchain and the same FlowKit as the daemon that loads it. The loader asks a
/// plugin for the ABI it was built against *before* it touches any Swift type the
/// plugin made, and refuses the plugin when the number differs from its own.
public enum FlowKitABI {
    /// The ABI version this code was compiled against.
    ///
    /// `@_alwaysEmitIntoClient` bakes the literal into the caller's binary: a plugin
    /// reports the version of the FlowKit *headers* it was built with, not the
    /// version of the `libFlowKit.so` that happens to be loaded next to it.
    /// Bump it whenever a public type changes layout or a protocol requirement
    /// is added, removed or changed — even one with a default implementation,
    /// which keeps plugins' *sources* compiling but not their binaries: FlowKit
    /// is built without library evolution, so a plugin's witness table has a
    /// slot for each requirement it was compiled with, and the daemon would
    /// call through a slot an older plugin lacks. Other additions (a new type,
    /// a new method in an extension, a conformance) do not bump it: code that
    /// only existing plugins use is unchanged, and a plugin that uses an
    /// addition the loaded `libFlowKit.so` lacks fails `dlopen` (`RTLD_NOW`)
    /// with the missing symbol, before any of its code runs.
    ///
    /// History: 1, the first; 2, `describeRule` on `FieldValidator` and
    /// `StepValidator`; 3, warnings: `FieldValidator.assess` and
    /// `ValidationIssue.level` (both flowd 1.1).
    @_alwaysEmitIntoClient
    public static var version: UInt32 { 3 }

    /// The C symbol that returns the ABI version, `@convention(c) () -> UInt32`.
    public static let abiSymbol = "flowd_plugin_abi_version"

    /// The C symbol that returns the retained registration,
    /// `@convention(c) () -> UnsafeMutableRawPointer?`.
    public static let registerSymbol = "flowd_plugin_register"
}
