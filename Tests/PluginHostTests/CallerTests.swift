// The call path with real plugins: results, error mapping, timeouts for
// plugins that hang cooperatively or block their thread, cancellation, and
// the crash guard around every call.
import FlowKit
import Glibc
import PluginHost
import PluginTestSupport
import Synchronization
import Testing

@Suite("PluginCaller")
struct CallerTests {
    @Test("each kind of capability is called and its result returned")
    func everyKind() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try PluginFiles.load(["FixtureTestPlugin"], in: temp)
        let context = Samples.context(locale: "de")

        #expect(await caller.validateField("test.even", value: .integer(4), field: Samples.field(), context: context)
            == .success(.accepted))
        #expect(await caller.validateField("test.even", value: .integer(3), field: Samples.field(label: "Anzahl"),
            context: context) == .success(.rejected("Anzahl must be even.")))

        let step = StepInfo(id: "s", title: "S", fields: [Samples.field("a"), Samples.field("b")])
        let same = Samples.context(answers: ["a": .text("x"), "b": .text("x")])
        let differ = Samples.context(answers: ["a": .text("x"), "b": .text("y")])
        #expect(await caller.validateStep("test.same-answers", step: step, context: same) == .success([]))
        #expect(await caller.validateStep("test.same-answers", step: step, context: differ)
            == .success([ValidationIssue(field: "b", message: "These must match.")]))

        let options = await caller.options("test.options", field: Samples.field(), context: context)
        #expect(options == .success([
            ChoiceOption(id: "red", label: "Rot"), ChoiceOption(id: "green", label: "Grün", icon: "emblem-default"),
            ChoiceOption(id: "blue", label: "Blau"),
        ]))

        #expect(await caller.prefill("test.prefill", field: Samples.field(), context: Samples.context(uid: 4242))
            == .success(.text("uid 4242")))

        let receipt = await caller.submit(
            "test.echo-submit", submission: Samples.submission(), context: context, timeout: .seconds(30))
        #expect(receipt == .success(SubmitReceipt([
            "reference": .string(Samples.submission().id), "answers": 1, "flow": "sample",
        ])))
    }

    @Test("warnings through the real plugin: a field validator's assess, a step validator's issues of level warning")
    func warnings() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try PluginFiles.load(["FixtureTestPlugin"], in: temp)
        let field = Samples.field(type: "date")
        #expect(await caller.validateField("test.sunday", value: .text("2030-06-02"), field: field,
            context: Samples.context(locale: "de")) == .success(.warning("Das ist ein Sonntag; da haben wir geschlossen.")))
        #expect(await caller.validateField("test.sunday", value: .text("2000-01-01"), field: field,
            context: Samples.context()) == .success(.rejected("That is in the past.")))
        #expect(await caller.validateField("test.sunday", value: .text("2030-06-03"), field: field,
            context: Samples.context()) == .success(.accepted))
        // A validator written before warnings (validate only) still answers through assess.
        #expect(await caller.validateField("test.even", value: .integer(3), field: Samples.field(label: "N"),
            context: Samples.context()) == .success(.rejected("N must be even.")))
        let step = StepInfo(id: "s", title: "S", fields: [Samples.field("a")])
        let issues = await caller.validateStep("test.busy-step", step: step, context: Samples.context())
        #expect(issues == .success([ValidationIssue(field: nil, message: "We are busy that week.", level: .warning),
                                    ValidationIssue(field: "a", message: "Check this one.", level: .warning)]))
    }

    @Test("a name that is not loaded, or loaded under another kind, is unavailable")
    func unavailable() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try PluginFiles.load(["FixtureTestPlugin"], in: temp)
        #expect(await caller.validateField("nobody.here", value: .text("x"), field: Samples.field(),
            context: Samples.context()) == .unavailable)
        #expect(await caller.submit("test.even", submission: Samples.submission(), context: Samples.context(),
            timeout: .seconds(5)) == .unavailable)
    }

    @Test("errors map to the person's message: LocalizedFailure and LocalizedError keep theirs, others give nil")
    func errorMapping() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try PluginFiles.load(["FixtureTestPlugin", "FixtureThrowingPlugin"], in: temp)
        let context = Samples.context(locale: "de")
        let submission = Samples.submission()

        #expect(await caller.submit("test.fail-submit", submission: submission, context: context, timeout: .seconds(30))
            .failureMessage == .some("Der Kalender ist voll."))
        #expect(await caller.submit("test.localized-error-submit", submission: submission, context: context,
            timeout: .seconds(30)).failureMessage == .some("The room is already booked."))

        let opaque = await caller.submit("test.opaque-fail-submit", submission: submission, context: context,
            timeout: .seconds(30))
        #expect(opaque.failureMessage == .some(nil))

        // The plain error's text goes to the detail (the journal), never the message.
        let plain = await caller.submit("throw.submit", submission: submission, context: context,
            timeout: .seconds(30))
        guard case .failure(let message, let detail) = plain else {
            Issue.record("expected a failure, got \(plain)")
            return
        }
        #expect(message == nil)
        #expect(detail.contains("database connection refused"))

        #expect(await caller.validateField("throw.validator", value: .text("x"), field: Samples.field(),
            context: context).failureMessage == .some(nil))
        let step = StepInfo(id: "s", title: "S", fields: [])
        #expect(await caller.validateStep("throw.step", step: step, context: context).failureMessage
            == .some("The step cannot be checked now."))
        #expect(await caller.options("throw.options", field: Samples.field(), context: context).failureMessage
            == .some("No rooms are free."))
        #expect(await caller.prefill("throw.prefill", field: Samples.field(), context: context).failureMessage
            == .some("The directory service is down."))
    }

    @Test("describeRule: nil from a plugin written before it existed, a failure from one that throws, unavailable for a wrong kind")
    func ruleDescriptions() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try PluginFiles.load(["FixtureTestPlugin", "FixtureThrowingPlugin"], in: temp)
        let context = Samples.context(locale: "de")
        let step = StepInfo(id: "s", title: "S", fields: [Samples.field("a"), Samples.field("b")])
        // FixtureTestPlugin's validators are written as before FlowKit had
        // describeRule: they compile unchanged and describe nothing.
        #expect(await caller.describeFieldRule("test.even", field: Samples.field(), context: context) == .success(nil))
        #expect(await caller.describeStepRule("test.same-answers", step: step, context: context) == .success(nil))
        let plain = await caller.describeFieldRule("throw.validator", field: Samples.field(), context: context)
        #expect(plain.failureMessage == .some(nil))
        #expect(await caller.describeStepRule("throw.step", step: step, context: context).failureMessage
            == .some("The step cannot be described now."))
        #expect(await caller.describeFieldRule("test.same-answers", field: Samples.field(), context: context) == .unavailable)
        #expect(await caller.describeStepRule("nobody.here", step: step, context: context) == .unavailable)
    }

    @Test("an empty LocalizedFailure message falls back to the default; a long one is cut")
    func messageCleaning() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try PluginFiles.load(["FixtureTestPlugin"], in: temp)
        let empty = await caller.submit("test.fail-submit", submission: Samples.submission(),
            context: Samples.context(options: ["message": "   "]), timeout: .seconds(30))
        #expect(empty.failureMessage == .some(nil))
        let long = String(repeating: "x", count: 5000)
        let cut = await caller.submit("test.fail-submit", submission: Samples.submission(),
            context: Samples.context(options: ["message": .string(long)]), timeout: .seconds(30))
        let message = try #require(cut.failureMessage ?? nil)
        #expect(message.unicodeScalars.count == PluginCaller.Limits.maxMessageLength)
        #expect(message.hasSuffix("…"))
    }

    @Test("a plugin that hangs cooperatively times out", arguments: ["hang.cooperative", "hang.blocking"])
    func validatorTimeout(name: String) async throws {
        let temp = try TemporaryDirectory()
        let executor = PluginExecutor(maximumThreads: 8)
        let (_, caller) = try PluginFiles.load(
            ["FixtureHangPlugin"], in: temp, executor: executor,
            configuration: .init(validatorTimeout: .milliseconds(200)))
        let result = await caller.validateField(name, value: .text("x"), field: Samples.field(),
            context: Samples.context())
        #expect(result == .timedOut)
    }

    @Test("submit uses the timeout it is given, even when the plugin ignores cancellation")
    func submitTimeout() async throws {
        let temp = try TemporaryDirectory()
        // One uid makes both calls, and the first keeps its thread: room for two.
        let executor = PluginExecutor(maximumThreads: 4, maximumThreadsPerUser: 2)
        let (_, caller) = try PluginFiles.load(["FixtureHangPlugin"], in: temp, executor: executor)
        for name in ["hang.ignores-cancel", "hang.blocking-submit"] {
            let result = await caller.submit(name, submission: Samples.submission(), context: Samples.context(),
                timeout: .milliseconds(200))
            #expect(result == .timedOut, "\(name)")
        }
    }

    @Test("cancelling the caller's task returns .cancelled at once, also for a blocked plugin")
    func cancellation() async throws {
        let temp = try TemporaryDirectory()
        let executor = PluginExecutor(maximumThreads: 4)
        let crashGuard = MemoryCrashGuard()
        let (_, caller) = try PluginFiles.load(
            ["FixtureTestPlugin", "FixtureHangPlugin"], in: temp, crashGuard: crashGuard, executor: executor)
        for (name, options) in [("test.slow-submit", ["seconds": JSONValue(600)]), ("hang.blocking-submit", [:])] {
            let started = SharedCounters()
            let task = Task {
                started.running.store(1, ordering: .sequentiallyConsistent)
                return await caller.submit(name, submission: Samples.submission(),
                    context: Samples.context(options: options), timeout: .seconds(600))
            }
            // Let the plugin get going before cancelling.
            #expect(await waitUntil { crashGuard.activeCalls.contains { $0.capability == name } })
            task.cancel()
            #expect(await task.value == .cancelled, "\(name)")
            #expect(started.running.load(ordering: .sequentiallyConsistent) == 1)
        }
        // The cooperative plugin noticed the cancellation and ended its call.
        #expect(await waitUntil { !crashGuard.activeCalls.contains { $0.capability == "test.slow-submit" } })
    }

    @Test("a call from a task that is already cancelled does not run the plugin")
    func alreadyCancelled() async throws {
        let temp = try TemporaryDirectory()
        let crashGuard = MemoryCrashGuard()
        let (_, caller) = try PluginFiles.load(["FixtureTestPlugin"], in: temp, crashGuard: crashGuard)
        let before = crashGuard.begunCalls.count
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await caller.validateField("test.even", value: .integer(2), field: Samples.field(),
                context: Samples.context())
        }
        #expect(await task.value == .cancelled)
        #expect(crashGuard.begunCalls.count == before)
    }

    @Test("blocked plugin threads do not stop other calls")
    func blockedThreadsDoNotStarve() async throws {
        // More blocked calls than this machine has cores: on Swift's
        // cooperative pool these would starve everything else.
        let temp = try TemporaryDirectory()
        let executor = PluginExecutor(maximumThreads: 16)
        let crashGuard = MemoryCrashGuard()
        let (_, caller) = try PluginFiles.load(
            ["FixtureTestPlugin", "FixtureHangPlugin"], in: temp, crashGuard: crashGuard, executor: executor,
            configuration: .init(validatorTimeout: .seconds(600)))
        // Two uids, each under its share of the pool (16 / 4 threads), and
        // the other calls from a third.
        let blockedCount = 6
        var blocked: [Task<PluginCallResult<FieldAssessment>, Never>] = []
        for index in 0..<blockedCount {
            blocked.append(Task {
                await caller.validateField("hang.blocking", value: .text("x"), field: Samples.field(),
                    context: Samples.context(uid: 1000 + UInt32(index % 2)))
            })
        }
        #expect(await waitUntil {
            crashGuard.activeCalls.filter { $0.capability == "hang.blocking" }.count == blockedCount
        })
        // Every blocked call holds a thread of its own...
        #expect(executor.threadCounts.current >= blockedCount)
        // ...and other calls still complete, many at once.
        try await withThrowingTaskGroup(of: PluginCallResult<FieldAssessment>.self) { group in
            for i in 0..<20 {
                group.addTask {
                    await caller.validateField("test.even", value: .integer(Int64(i)), field: Samples.field(),
                        context: Samples.context())
                }
            }
            var successes = 0
            for try await result in group {
                if case .success = result { successes += 1 }
            }
            #expect(successes == 20)
        }
        // The daemon's own async work is not held up either.
        try await Task.sleep(for: .milliseconds(1))
        for task in blocked { task.cancel() }
        for task in blocked { #expect(await task.value == .cancelled) }
    }

    @Test("when the pool is full, a queued call ends busy after its timeout, never having run")
    func fullPoolTimesOut() async throws {
        let temp = try TemporaryDirectory()
        let executor = PluginExecutor(maximumThreads: 2, maximumThreadsPerUser: 2)
        let (_, caller) = try PluginFiles.load(
            ["FixtureTestPlugin", "FixtureHangPlugin"], in: temp, executor: executor,
            configuration: .init(validatorTimeout: .milliseconds(300)))
        async let a = caller.validateField("hang.blocking", value: .text("x"), field: Samples.field(),
            context: Samples.context())
        async let b = caller.validateField("hang.blocking", value: .text("x"), field: Samples.field(),
            context: Samples.context())
        #expect(await a == .timedOut)
        #expect(await b == .timedOut)
        // Both threads are stuck for good: the next call waits in the queue
        // for as long as its timeout, and ends busy without the plugin running.
        #expect(await caller.validateField("test.even", value: .integer(2), field: Samples.field(),
            context: Samples.context()) == .busy(waited: .milliseconds(300)))
        #expect(executor.threadCounts.peak == 2)
    }

    @Test("every call is recorded with the crash guard before it runs and cleared after")
    func crashGuardBrackets() async throws {
        let temp = try TemporaryDirectory()
        let crashGuard = MemoryCrashGuard()
        let (report, caller) = try PluginFiles.load(["FixtureTestPlugin"], in: temp, crashGuard: crashGuard)
        let before = crashGuard.begunCalls.count
        _ = await caller.validateField("test.even", value: .integer(2), field: Samples.field(),
            context: Samples.context())
        _ = await caller.submit("test.fail-submit", submission: Samples.submission(), context: Samples.context(),
            timeout: .seconds(30))
        let calls = Array(crashGuard.begunCalls.dropFirst(before))
        #expect(calls.map(\.capability) == ["test.even", "test.fail-submit"])
        #expect(calls.allSatisfy { $0.pluginName == "test" })
        #expect(calls.allSatisfy { $0.pluginPath == report.registry.records.first?.path })
        #expect(crashGuard.activeCalls.isEmpty)
    }

    @Test("bad provider output is a failure, not a crash")
    func providerOutputChecks() async throws {
        // A registry built by hand around in-process providers.
        struct Repeated: OptionsProvider {
            func options(for field: FieldInfo, context: PluginContext) async throws -> [ChoiceOption] {
                [ChoiceOption(id: "a", label: "A"), ChoiceOption(id: "a", label: "A again")]
            }
        }
        struct Nothing: OptionsProvider {
            func options(for field: FieldInfo, context: PluginContext) async throws -> [ChoiceOption] { [] }
        }
        struct Blank: FieldValidator {
            func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
                " \n"
            }
        }
        let plugin = PluginIdentity(name: "inline", path: "/nowhere/inline.so")
        let registry = PluginRegistry(records: [], capabilities: [
            RegisteredCapability(id: .init(kind: .optionsProvider, name: "inline.repeated"), plugin: plugin,
                capability: .optionsProvider("inline.repeated", Repeated())),
            RegisteredCapability(id: .init(kind: .optionsProvider, name: "inline.nothing"), plugin: plugin,
                capability: .optionsProvider("inline.nothing", Nothing())),
            RegisteredCapability(id: .init(kind: .fieldValidator, name: "inline.blank"), plugin: plugin,
                capability: .fieldValidator("inline.blank", Blank())),
        ])
        let caller = PluginCaller(registry: registry, crashGuard: MemoryCrashGuard(), executor: PluginExecutor())
        #expect(await caller.options("inline.repeated", field: Samples.field(), context: Samples.context())
            .failureMessage == .some(nil))
        #expect(await caller.options("inline.nothing", field: Samples.field(), context: Samples.context())
            .failureMessage == .some(nil))
        #expect(await caller.validateField("inline.blank", value: .text("x"), field: Samples.field(),
            context: Samples.context()).failureMessage == .some(nil))
    }
}

extension PluginCallResult {
    /// `.some(message)` for a failure (the message may be nil), nil otherwise.
    var failureMessage: String?? {
        if case .failure(let message, _) = self { return .some(message) }
        return nil
    }
}
