// plugin-host-probe: loads a plugin directory the way flowd does and, on
// request, calls one capability — in a process of its own, so the crash-guard
// tests can let a plugin kill it and then start again. Also measures the call
// path's overhead. A test tool: never installed.
//
//   plugin-host-probe load  --dir D [--dir D2] [--guard FILE]
//   plugin-host-probe call  --dir D [--guard FILE] --kind field-validator|submit-action --name N
//                           [--option KEY=VALUE]... [--crash-when FILE]
//   plugin-host-probe bench --dir D [--guard FILE] --name test.even [--iterations 10000]
//
// `--option` passes an option to the capability (a whole number becomes a
// number, anything else a string). `--crash-when FILE` starts the call, waits
// until FILE exists, then crashes the probe on one of its own threads (not a
// plugin thread) while the call is still running.
//
// Output: one line per plugin record, `record TAB name TAB status TAB error`;
// one line per quarantine the crash guard made, `quarantine TAB name TAB
// reason`; one per interrupted call it found, `interrupted TAB name TAB
// capability TAB notice`; then for `call` one line `result TAB outcome TAB message`.
import FlowKit
import Dispatch
import Glibc
import PluginHost

struct Arguments {
    var mode = ""
    var directories: [String] = []
    var guardDirectory: String?
    var kind = "field-validator"
    var name = ""
    var iterations = 10_000
    var options: [String: JSONValue] = [:]
    var crashWhen: String?

    init(_ argv: [String]) throws(UsageError) {
        var rest = argv.dropFirst()
        guard let mode = rest.popFirst() else { throw UsageError("missing mode: load, call or bench") }
        self.mode = mode
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw UsageError("\(flag) needs a value") }
            switch flag {
            case "--dir": directories.append(value)
            case "--guard": guardDirectory = value
            case "--kind": kind = value
            case "--name": name = value
            case "--option":
                guard let equals = value.firstIndex(of: "=") else { throw UsageError("--option needs KEY=VALUE") }
                let text = String(value[value.index(after: equals)...])
                options[String(value[..<equals])] = Int(text).map { .number(Double($0)) } ?? .string(text)
            case "--crash-when": crashWhen = value
            case "--iterations":
                guard let n = Int(value), n > 0 else { throw UsageError("--iterations needs a positive number") }
                iterations = n
            default: throw UsageError("unknown option \(flag)")
            }
        }
    }
}

struct UsageError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// Writes one line to standard output, unbuffered (the process may die next).
func emit(_ line: String) {
    writeLine(1, line)
}

/// Writes one line to standard error.
func complain(_ line: String) {
    writeLine(2, "plugin-host-probe: " + line)
}

func writeLine(_ fd: Int32, _ line: String) {
    let bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress.map { $0 + offset }, bytes.count - offset) }
        if n <= 0 { return }
        offset += n
    }
}

func oneLine(_ s: String?) -> String {
    (s ?? "").replacingTabsAndNewlines()
}

extension String {
    func replacingTabsAndNewlines() -> String {
        String(String.UnicodeScalarView(unicodeScalars.map { $0 == "\t" || $0 == "\n" ? " " : $0 }))
    }
}

func describe<V>(_ result: PluginCallResult<V>) -> String {
    switch result {
    case .success(let v): return "success\t\(oneLine(String(describing: v)))"
    case .failure(let message, let detail): return "failure\t\(oneLine(message))\t\(oneLine(detail))"
    case .timedOut: return "timedOut\t"
    case .cancelled: return "cancelled\t"
    case .busy(let waited): return "busy\t\(waited)"
    case .unavailable: return "unavailable\t"
    }
}

/// The context and field every call uses.
enum Sample {
    static var context: PluginContext { context(options: [:]) }

    static func context(options: [String: JSONValue]) -> PluginContext {
        PluginContext(
            flowID: "probe", sessionID: "0123456789abcdef0123456789abcdef", locale: "en",
            callerUID: UInt32(getuid()), answers: [:], options: options, stateDirectory: "/tmp")
    }
    static let field = FieldInfo(id: "value", type: "number", label: "Value")
}

func run() async -> Int32 {
    let args: Arguments
    do {
        args = try Arguments(CommandLine.arguments)
    } catch {
        complain("\(error.message)")
        return 64
    }
    let crashGuard: any CrashGuard
    if let g = args.guardDirectory {
        do {
            crashGuard = try FileCrashGuard(path: g)
        } catch {
            complain("\(error)")
            return 1
        }
    } else {
        crashGuard = MemoryCrashGuard()
    }
    let report = PluginLoader(configuration: .init(directories: args.directories)).load(crashGuard: crashGuard)
    for r in report.registry.records {
        emit("record\t\(r.name)\t\(r.status.rawValue)\t\(oneLine(r.error))")
    }
    for q in report.newQuarantines {
        emit("quarantine\t\(q.name)\t\(oneLine(q.reason))")
    }
    for call in report.interruptedCalls {
        emit("interrupted\t\(call.pluginName)\t\(call.capability ?? "")\t\(oneLine(call.interruptionNotice))")
    }
    let caller = PluginCaller(registry: report.registry, crashGuard: crashGuard)

    switch args.mode {
    case "load":
        return 0
    case "call":
        guard args.kind == "field-validator" || args.kind == "submit-action" else {
            complain("unknown kind \(args.kind)")
            return 64
        }
        let call = Task { await callOnce(caller, args) }
        if let file = args.crashWhen {
            // A crash of the host's own: on this thread (not a plugin
            // thread), while the plugin's call is still running.
            while access(file, F_OK) != 0 { usleep(10_000) }
            emit("crashing\telsewhere")
            writeThroughNull()
        }
        emit("result\t" + (await call.value))
        return 0
    case "bench":
        return await bench(report: report, caller: caller, args: args)
    default:
        complain("unknown mode \(args.mode)")
        return 64
    }
}

/// Calls the capability `args` name once and describes the outcome.
func callOnce(_ caller: PluginCaller, _ args: Arguments) async -> String {
    let context = Sample.context(options: args.options)
    if args.kind == "field-validator" {
        return describe(await caller.validateField(args.name, value: .integer(2), field: Sample.field, context: context))
    }
    let submission = Submission(
        id: "fedcba9876543210fedcba9876543210", flowID: "probe", sessionID: context.sessionID,
        ownerUID: context.callerUID, locale: "en", answers: [:], secureAnswers: [:], submittedAt: 0)
    return describe(await caller.submit(args.name, submission: submission, context: context, timeout: .seconds(3600)))
}

/// Writes to address 16, in the null page (computed at run time so the
/// optimizer cannot see it coming).
@inline(never)
func writeThroughNull() {
    let address = Int(getpid() & 0) + 16
    UnsafeMutablePointer<Int>(bitPattern: address)?.pointee = 1
}

/// Measures the call path's overhead for a trivial field validator: direct
/// calls against calls through `PluginCaller` with each crash guard.
func bench(report: PluginLoadReport, caller: PluginCaller, args: Arguments) async -> Int32 {
    guard let c = report.registry.capability(.fieldValidator, named: args.name),
        case .fieldValidator(_, let validator) = c.capability
    else {
        complain("no field validator \(args.name)")
        return 1
    }
    let n = args.iterations
    let clock = ContinuousClock()

    func perCall(_ d: Duration) -> String {
        let (s, atto) = d.components
        let micros = (Double(s) * 1e6 + Double(atto) / 1e12) / Double(n)
        return String(Int(micros * 100)) .inserting(dotBeforeLast: 2)
    }

    // Warm up every path once.
    _ = try? await validator.validate(.integer(2), field: Sample.field, context: Sample.context)
    _ = await caller.validateField(args.name, value: .integer(2), field: Sample.field, context: Sample.context)

    // Every call checks an even number, so every call must answer nil.
    var failures = 0
    let direct = await clock.measure {
        for _ in 0..<n {
            do {
                if try await validator.validate(.integer(2), field: Sample.field, context: Sample.context) != nil { failures += 1 }
            } catch {
                failures += 1
            }
        }
    }
    let noGuard = MemoryCallerBench(registry: report.registry)
    let viaNoGuard = await clock.measure {
        for _ in 0..<n {
            let r = await noGuard.caller.validateField(args.name, value: .integer(2), field: Sample.field, context: Sample.context)
            if r != .success(.accepted) { failures += 1 }
        }
    }
    let viaGuard = await clock.measure {
        for _ in 0..<n {
            let r = await caller.validateField(args.name, value: .integer(2), field: Sample.field, context: Sample.context)
            if r != .success(.accepted) { failures += 1 }
        }
    }
    emit("bench\titerations\t\(n)")
    emit("bench\tdirect\t\(perCall(direct)) us/call")
    emit("bench\tcaller, no-op guard\t\(perCall(viaNoGuard)) us/call")
    emit("bench\tcaller, \(args.guardDirectory == nil ? "memory" : "file") guard\t\(perCall(viaGuard)) us/call")
    emit("bench\tfailures\t\(failures)")
    return 0
}

/// A caller with a no-I/O crash guard, to separate the guard's cost.
struct MemoryCallerBench {
    let caller: PluginCaller
    init(registry: PluginRegistry) {
        caller = PluginCaller(registry: registry, crashGuard: NoopGuard())
    }
}

/// A crash guard that records nothing at all.
final class NoopGuard: CrashGuard {
    func begin(_ call: GuardedCall) -> CrashGuardToken { CrashGuardToken(rawValue: 1) }
    func end(_ token: CrashGuardToken) {}
    func pending() -> [LeftoverCall] { [] }
    func clearPending() {}
}

extension String {
    /// "1234" → "12.34".
    func inserting(dotBeforeLast digits: Int) -> String {
        let padded = String(repeating: "0", count: max(0, digits + 1 - count)) + self
        return String(padded.dropLast(digits)) + "." + String(padded.suffix(digits))
    }
}

/// The entry point. Synchronous on purpose: the work runs in a detached task
/// and the main thread waits on a semaphore. With `await` at the top level the
/// main thread would sit in `dispatch_main`, and once a plugin pulls in
/// Foundation, CoreFoundation takes the main queue over for a run loop nobody
/// runs, so any hop to the main actor never comes back (seen here).
@main
enum Probe {
    static func main() {
        let done = DispatchSemaphore(value: 0)
        let status = ExitStatus()
        Task.detached {
            status.value = await run()
            done.signal()
        }
        done.wait()
        exit(status.value)
    }
}

/// The exit status, handed from the task to the main thread (the semaphore
/// orders the accesses).
final class ExitStatus: @unchecked Sendable {
    var value: Int32 = 0
}
