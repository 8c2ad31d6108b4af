// FixtureCrashPlugin: calls that kill the process, each in another way. Only
// ever called in a subprocess (plugin-host-probe); the crash guard must
// disable the plugin afterwards — except after `crash.exit`, which it cannot
// tell from an orderly end.
import FlowKit
import Glibc

/// `crash.fatal`: a submit that stops the process with fatalError (SIGILL/SIGTRAP).
struct FatalSubmit: SubmitAction {
    func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt {
        fatalError("crash.fatal was called")
    }
}

/// `crash.null`: a field validator that writes through a null pointer (SIGSEGV).
struct NullValidator: FieldValidator {
    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        writeThroughNull()
        return nil
    }
}

/// `crash.abort`: a submit that calls abort() (SIGABRT, raised by the thread itself).
struct AbortSubmit: SubmitAction {
    func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt {
        abort()
    }
}

/// `crash.overflow`: a field validator that recurses until its stack runs out
/// (SIGSEGV on the guard page, which needs an alternate signal stack to handle).
struct OverflowValidator: FieldValidator {
    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        var total = 0
        _ = descend(1, &total)
        return "unreachable: \(total)"
    }
}

/// `crash.after-await`: a field validator that suspends twice, so it resumes
/// as a new job (perhaps on another thread), then writes through a null pointer.
struct AfterAwaitValidator: FieldValidator {
    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        try await Task.sleep(for: .milliseconds(5))
        await Task.yield()
        writeThroughNull()
        return nil
    }
}

/// `crash.in-child`: a field validator whose child task (`async let`) writes
/// through a null pointer.
struct ChildTaskValidator: FieldValidator {
    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        async let child: Int = {
            writeThroughNull()
            return 1
        }()
        return "unreachable: \(await child)"
    }
}

/// `crash.exit`: a submit that ends the process with exit(3). No signal, so
/// the crash guard cannot blame it (documented).
struct ExitSubmit: SubmitAction {
    func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt {
        exit(3)
    }
}

/// Writes to address 16, in the null page; computed at run time so the
/// optimizer cannot see it coming.
@inline(never)
func writeThroughNull() {
    let address = Int(getpid() & 0) + 16
    UnsafeMutablePointer<Int>(bitPattern: address)?.pointee = 1
}

/// Recurses with a 256-byte frame until the stack runs out.
@inline(never)
func descend(_ depth: Int, _ sink: UnsafeMutablePointer<Int>) -> Int {
    if depth == Int.max { return 0 }  // never true; keeps the recursion from looking endless
    var frame = (depth, depth, depth, depth, depth, depth, depth, depth)
    var frame2 = frame
    var frame3 = frame
    var frame4 = frame
    let size = withUnsafeMutableBytes(of: &frame) { $0.count } + withUnsafeMutableBytes(of: &frame2) { $0.count }
        + withUnsafeMutableBytes(of: &frame3) { $0.count } + withUnsafeMutableBytes(of: &frame4) { $0.count }
    sink.pointee &+= size
    return descend(depth + 1, sink) &+ frame.0 &+ frame4.7
}

@_cdecl("flowd_plugin_abi_version")
public func flowdPluginABIVersion() -> UInt32 { FlowKitABI.version }

@_cdecl("flowd_plugin_register")
public func flowdPluginRegister() -> UnsafeMutableRawPointer? {
    PluginRegistration(
        name: "crash", version: "1.0",
        capabilities: [
            .submitAction("crash.fatal", FatalSubmit()),
            .fieldValidator("crash.null", NullValidator()),
            .submitAction("crash.abort", AbortSubmit()),
            .fieldValidator("crash.overflow", OverflowValidator()),
            .fieldValidator("crash.after-await", AfterAwaitValidator()),
            .fieldValidator("crash.in-child", ChildTaskValidator()),
            .submitAction("crash.exit", ExitSubmit()),
        ]
    ).exportRetained()
}
