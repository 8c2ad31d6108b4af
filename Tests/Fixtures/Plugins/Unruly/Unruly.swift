// FixtureUnrulyPlugin: a plugin meant to run isolated (flowd.conf's
// `[Plugin FixtureUnrulyPlugin]` `Isolated=yes`) that crashes, hangs,
// allocates without bound or opens a network socket when asked. Never
// loaded in-process by a test: it would take the test's process with it.
import FlowKit
import Glibc

/// `unruly.segv`: writes through a null pointer (SIGSEGV).
struct SegfaultValidator: FieldValidator {
    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        let address = Int(getpid() & 0) + 16
        UnsafeMutablePointer<Int>(bitPattern: address)?.pointee = 1
        return nil
    }
}

/// `unruly.abort`: a submit that calls abort() (SIGABRT).
struct AbortSubmit: SubmitAction {
    func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt {
        abort()
    }
}

/// `unruly.hang`: blocks its thread for an hour, deaf to cancellation.
struct HangValidator: FieldValidator {
    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        sleep(3600)
        return nil
    }
}

/// `unruly.hog`: allocates and touches memory until something stops it.
struct HogValidator: FieldValidator {
    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        var hoard: [[UInt8]] = []
        while true {
            hoard.append([UInt8](repeating: UInt8(hoard.count & 0xff), count: 16 << 20))
            if hoard.count == Int.max { break }
        }
        return "kept \(hoard.count) blocks"
    }
}

/// `unruly.network`: tries to open an IPv4 socket and says what happened,
/// as a rejection message ("network: allowed" or "network: refused (errno N)").
struct NetworkValidator: FieldValidator {
    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if fd >= 0 {
            close(fd)
            return "network: allowed"
        }
        return "network: refused (errno \(errno))"
    }
}

/// `unruly.pid`: rejects every value with the id of the process it runs
/// in, so a test can tell a restarted process from the first one.
struct PIDValidator: FieldValidator {
    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        "pid \(getpid())"
    }
}

@_cdecl("flowd_plugin_abi_version")
public func flowdPluginABIVersion() -> UInt32 { FlowKitABI.version }

@_cdecl("flowd_plugin_register")
public func flowdPluginRegister() -> UnsafeMutableRawPointer? {
    PluginRegistration(
        name: "unruly", version: "1.0",
        capabilities: [
            .fieldValidator("unruly.segv", SegfaultValidator()),
            .submitAction("unruly.abort", AbortSubmit()),
            .fieldValidator("unruly.hang", HangValidator()),
            .fieldValidator("unruly.hog", HogValidator()),
            .fieldValidator("unruly.network", NetworkValidator()),
            .fieldValidator("unruly.pid", PIDValidator()),
        ]
    ).exportRetained()
}
