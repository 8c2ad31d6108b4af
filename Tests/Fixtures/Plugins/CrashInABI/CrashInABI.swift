// FixtureCrashInABIPlugin: the first entry point the loader calls,
// flowd_plugin_abi_version, aborts the process (SIGABRT raised by the loading
// thread itself). With CrashOnLoad (a trap in the registration) and
// CrashInConstructor (a fault in a library constructor) it makes three
// plugins that crash while loading, each its own way.
import Glibc

@_cdecl("flowd_plugin_abi_version")
public func flowdPluginABIVersion() -> UInt32 {
    abort()
}
