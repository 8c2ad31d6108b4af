// flowd-plugin-probe: loads one plugin file with flowd's loader and flowd's
// checks (owner, mode, symlink, ABI, names; docs/plugins.md, "How flowd loads
// plugins"), lists its capabilities, and calls one with given inputs through
// flowd's call path (its timeouts and limits). See flowd-plugin-probe(1).
import FlowKit
import FlowdSystem
import PluginHost

/// What the command line asked for.
struct ProbeArguments {
    var plugin = ""
    var capability: String?
    var value: AnswerValue = .text("")
    var locale = "en"
    var fieldType = "text"
    var options: [String: JSONValue] = [:]
    var answers: [String: AnswerValue] = [:]
    var timeout: Duration = .seconds(5)

    static let usage = """
        usage: flowd-plugin-probe PLUGIN.so
               flowd-plugin-probe PLUGIN.so call CAPABILITY [--value TEXT] [--type FIELD-TYPE] [--locale TAG]
                                  [--option KEY=VALUE]... [--answer FIELD=VALUE]... [--timeout SECONDS]
        """

    init(_ argv: [String]) throws(ProbeError) {
        var rest = argv[...]
        guard let plugin = rest.popFirst(), plugin.hasSuffix(".so") else { throw ProbeError.usage("name a PLUGIN.so") }
        self.plugin = plugin
        guard let mode = rest.popFirst() else { return }
        guard mode == "call", let name = rest.popFirst() else { throw ProbeError.usage("expected: call CAPABILITY") }
        capability = name
        while let flag = rest.popFirst() {
            guard let text = rest.popFirst() else { throw ProbeError.usage("\(flag) needs a value") }
            switch flag {
            case "--value": value = .text(text)
            case "--type": fieldType = text
            case "--locale": locale = text
            case "--option":
                let (key, raw) = try Self.pair(text, flag)
                options[key] = Self.json(raw)
            case "--answer":
                let (key, raw) = try Self.pair(text, flag)
                answers[key] = .text(raw)
            case "--timeout":
                guard let seconds = Double(text), seconds > 0, seconds <= 86_400 else {
                    throw ProbeError.usage("--timeout needs seconds, such as 5 or 0.5")
                }
                timeout = .milliseconds(Int64(seconds * 1000))
            default: throw ProbeError.usage("unknown option \(flag)")
            }
        }
        // A number field's answer is a number, as flowd stores it.
        if fieldType == "number", let text = value.textValue {
            if let i = Int64(text) { value = .integer(i) } else if let d = Double(text) { value = .number(d) }
        }
    }

    static func pair(_ text: String, _ flag: String) throws(ProbeError) -> (String, String) {
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
            throw ProbeError.usage("\(flag) needs KEY=VALUE")
        }
        return (String(text[..<equals]), String(text[text.index(after: equals)...]))
    }

    /// `true`, `false` and numbers as JSON; anything else a string.
    static func json(_ text: String) -> JSONValue {
        if text == "true" { return .bool(true) }
        if text == "false" { return .bool(false) }
        if let d = Double(text), d.isFinite { return .number(d) }
        return .string(text)
    }
}

enum ProbeError: Error {
    case usage(String)
}

/// Standard output and error, a line at a time.
/// The plugin's log lines (`context.log`), on stderr as `log: LEVEL: message (name=value …)`.
struct ProbeLog: PluginLogSink {
    func write(_ entry: PluginLogEntry) {
        let fields = entry.fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.description)" }
        let text = "log: \(entry.level.rawValue): \(entry.message)" + (fields.isEmpty ? "" : " (\(fields.joined(separator: " ")))")
        try? FileDescriptor.writeAll(2, (String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) }) + "\n").utf8)
    }
}

enum Output {
    static func line(_ text: String) { try? FileDescriptor.writeAll(1, (text + "\n").utf8) }
    static func error(_ text: String) { try? FileDescriptor.writeAll(2, ("flowd-plugin-probe: " + text + "\n").utf8) }
}

/// Loads the plugin and lists it; calls a capability when asked. Returns the exit status.
func probe(_ arguments: ProbeArguments) async -> SysExits {
    let path = arguments.plugin.hasPrefix("/") ? arguments.plugin : (CurrentProcess.currentDirectory() ?? ".") + "/" + arguments.plugin
    guard let slash = path.lastIndex(of: "/") else { return .usage }
    let directory = slash == path.startIndex ? "/" : String(path[..<slash])
    let file = String(path[path.index(after: slash)...])
    var configuration = PluginLoader.Configuration(directories: [directory])
    configuration.onlyFiles = [file]
    let crashGuard = MemoryCrashGuard()
    let report = PluginLoader(configuration: configuration).load(crashGuard: crashGuard)
    for problem in report.directoryProblems {
        Output.error("\(problem.path) \(problem.reason)")
    }
    guard let record = report.registry.records.first else {
        Output.error("\(path): no such plugin file")
        return .noInput
    }
    guard record.status == .loaded else {
        Output.line("\(record.path): \(record.status.rawValue): \(record.error ?? "")")
        return .dataError
    }
    Output.line("\(record.name) \(record.version): loaded from \(record.path)")
    for id in record.capabilities {
        Output.line("  \(id.kind.rawValue)\t\(id.name)")
        // What flowd checks a flow's options against (nothing when undeclared).
        for option in report.registry.capability(id.kind, named: id.name)?.declaredOptions ?? [] {
            Output.line("    option\t\(option.name)\t\(option.type.rawValue)\(option.required ? "\trequired" : "")")
        }
    }
    guard let name = arguments.capability else { return .ok }
    guard let capability = report.registry.capabilities.first(where: { $0.id.name == name }) else {
        Output.error("\(record.name) has no capability \(name)")
        return .usage
    }
    let caller = PluginCaller(
        registry: report.registry, crashGuard: crashGuard,
        configuration: .init(validatorTimeout: arguments.timeout, providerTimeout: arguments.timeout))
    return await call(caller, capability.id.kind, name, arguments)
}

/// Calls capability `name` as flowd would and prints what flowd would make of the answer.
func call(_ caller: PluginCaller, _ kind: CapabilityKind, _ name: String, _ arguments: ProbeArguments) async -> SysExits {
    let field = FieldInfo(id: "value", type: arguments.fieldType, label: "Value")
    var context = PluginContext(
        flowID: "probe", sessionID: "0123456789abcdef0123456789abcdef", locale: arguments.locale,
        callerUID: CurrentProcess.effectiveUserID, answers: arguments.answers, options: arguments.options,
        stateDirectory: "/tmp")
    context.log = PluginLogger(sink: ProbeLog())
    switch kind {
    case .fieldValidator:
        let rule = await caller.describeFieldRule(name, field: field, context: ruleContext(context))
        if case .success(let text?) = rule { Output.line("rule: \(text)") }
        return report(await caller.reviewField(name, value: arguments.value, field: field, context: context)) {
            let normalized = $0.normalizedValue.flatMap { $0 == arguments.value ? nil : "normalized to: \(describe($0))" }
            switch $0.assessment {
            case .accepted: return ["accepted"] + (normalized.map { [$0] } ?? [])
            case .rejected(let message): return ["rejected: \(message)"]
            case .warning(let message): return ["warning: \(message)"] + (normalized.map { [$0] } ?? [])
            }
        }
    case .stepValidator:
        let step = StepInfo(
            id: "step", title: "Step",
            fields: arguments.answers.keys.sorted().map { FieldInfo(id: $0, type: "text", label: $0) })
        let rule = await caller.describeStepRule(name, step: step, context: ruleContext(context))
        if case .success(let text?) = rule { Output.line("rule: \(text)") }
        return report(await caller.validateStep(name, step: step, context: context)) { issues in
            issues.isEmpty
                ? ["valid"] : issues.map { "\($0.level.rawValue) on \($0.field ?? "the step"): \($0.message)" }
        }
    case .optionsProvider:
        return report(await caller.options(name, field: field, context: context)) { options in
            options.map { "\($0.id)\t\($0.label)" + ($0.icon.map { "\t\($0)" } ?? "") }
        }
    case .prefillProvider:
        return report(await caller.prefill(name, field: field, context: context)) { value in
            [value.map { "value: \(describe($0))" } ?? "no value"]
        }
    case .submitAction:
        let submission = Submission(
            id: "fedcba9876543210fedcba9876543210", flowID: "probe", sessionID: context.sessionID,
            ownerUID: context.callerUID, locale: arguments.locale, answers: arguments.answers, secureAnswers: [:],
            submittedAt: WallClock.microsecondsSinceEpoch())
        return report(await caller.submit(name, submission: submission, context: context, timeout: arguments.timeout)) {
            receipt in
            let (finite, replaced) = receipt.replacingNonFiniteNumbers()
            return finite.values.keys.sorted().map { "receipt \($0): \(finite.values[$0].map(describe) ?? "")" }
                + replaced.map { "warning: \($0) is not a finite number; flowd keeps it as text" }
        }
    }
}

/// The context `describeRule` gets: no session, no answers, the daemon's uid.
func ruleContext(_ context: PluginContext) -> PluginContext {
    var c = context
    c.sessionID = ""
    c.answers = [:]
    return c
}

/// Prints a call's outcome; the status is 0 only for an answer flowd takes.
func report<V>(_ result: PluginCallResult<V>, _ lines: (V) -> [String]) -> SysExits {
    switch result {
    case .success(let value):
        lines(value).forEach(Output.line)
        return .ok
    case .failure(let message, let detail):
        Output.line("failed: \(message ?? "(flowd shows its own localized message)") [\(detail)]")
        return .failure
    case .timedOut:
        Output.line("timed out")
        return .failure
    case .busy(let waited):
        Output.line("not made: no plugin thread was free for \(waited)")
        return .failure
    case .cancelled, .unavailable:
        Output.line("not available")
        return .failure
    }
}

func describe(_ value: AnswerValue) -> String {
    switch value {
    case .text(let s): return "\"\(s)\""
    case .list(let l): return "[" + l.map { "\"\($0)\"" }.joined(separator: ", ") + "]"
    case .bool(let b): return String(b)
    case .integer(let i): return String(i)
    case .number(let d): return String(d)
    }
}

func describe(_ value: JSONValue) -> String {
    switch value {
    case .null: return "null"
    case .bool(let b): return String(b)
    case .number(let d): return String(d)
    case .string(let s): return "\"\(s)\""
    case .array(let a): return "[" + a.map(describe).joined(separator: ", ") + "]"
    case .object(let o): return "{" + o.keys.sorted().map { "\"\($0)\": \(o[$0].map(describe) ?? "")" }.joined(separator: ", ") + "}"
    }
}

// Synchronous on purpose: the work runs in a detached task and the main
// thread waits. With `await` at the top level the main thread would sit in
// the main queue, which CoreFoundation takes over once a plugin pulls in
// Foundation (docs/plugins.md, "Pitfalls").
let arguments: ProbeArguments
do {
    arguments = try ProbeArguments(Array(CommandLine.arguments.dropFirst()))
} catch {
    if case .usage(let problem) = error { Output.error(problem) }
    Output.error(ProbeArguments.usage)
    CurrentProcess.exit(SysExits.usage.rawValue)
}
let finished = Semaphore()
let status = LockedValue(SysExits.ok)
Task.detached {
    let result = await probe(arguments)
    status.withLock { $0 = result }
    finished.signal()
}
finished.wait()
CurrentProcess.exit(status.withLock { $0 }.rawValue)
