import CFlowdSystem
import Glibc

/// What a process may do to itself before it runs code it does not trust
/// (`flowd-plugin-host`, before it loads an isolated plugin). Each step only
/// ever takes something away, and none needs a privilege or a namespace, so
/// they work inside the system unit's sandbox (`RestrictNamespaces=yes`, no
/// capabilities) as in the per-user one.
package enum Sandbox {
    /// Bounds the memory the process may map: its data segment and private
    /// writable mappings (`RLIMIT_DATA`, which counts the heap, `mmap`ed
    /// memory and thread stacks, but not a `PROT_NONE` reservation, so the
    /// allocator's arenas do not use it up before they are touched). An
    /// allocation past it fails, which the Swift runtime turns into a crash.
    /// Only lowers: a limit above the current hard limit is an error.
    package static func limitMemory(bytes: UInt64) throws(SystemCallError) {
        var limit = rlimit(rlim_cur: rlim_t(bytes), rlim_max: rlim_t(bytes))
        _ = try SystemCall.check("setrlimit RLIMIT_DATA") {
            setrlimit(__rlimit_resource_t(RLIMIT_DATA.rawValue), &limit)
        }
    }

    /// No network: `socket(2)` fails with `EPERM` for every address family
    /// but `AF_UNIX` (and so does `io_uring_setup(2)`), through a seccomp
    /// filter set after `PR_SET_NO_NEW_PRIVS`. For good: no process can lift
    /// a filter, and children inherit it.
    package static func refuseNetwork() throws(SystemCallError) {
        _ = try SystemCall.check("seccomp filter") { flowd_sandbox_refuse_network() }
    }

    /// `PR_SET_NO_NEW_PRIVS`: nothing this process executes gains privileges
    /// (set-user-ID programs, file capabilities).
    package static func forbidNewPrivileges() throws(SystemCallError) {
        _ = try SystemCall.check("prctl PR_SET_NO_NEW_PRIVS") { flowd_sandbox_no_new_privs() }
    }
}
