import FlowKit
import FlowdSystem

/// How one plugin call ended.
package enum PluginCallResult<Value: Sendable>: Sendable {
    /// The plugin returned `Value`.
    case success(Value)
    /// The plugin threw, or returned something the host refuses (see
    /// ``PluginCaller/Limits``). `message` is the text to show the person: a
    /// ``FlowKit/LocalizedFailure``'s message or a `LocalizedError`'s
    /// `errorDescription`; nil means "show the localized default". `detail`
    /// describes the error for the journal only.
    case failure(message: String?, detail: String)
    /// The timeout ran out first. The plugin's task was cancelled; if it
    /// ignores that, it keeps its thread, but nobody waits for it.
    case timedOut
    /// The caller's task was cancelled first (for example `Cancel` on a submit).
    case cancelled
    /// No plugin thread was free for this call's whole timeout (the pool is
    /// full of calls that block their threads): the plugin was never called,
    /// so trying again later is safe. Time spent waiting for a thread does
    /// not count against the call's own timeout; this bounds it.
    case busy(waited: Duration)
    /// No loaded plugin provides a capability of that kind and name.
    case unavailable
}

extension PluginCallResult: Equatable where Value: Equatable {}

/// Calls plugin capabilities: off the caller's thread, on a ``PluginExecutor``,
/// under a timeout, cancellable, inside the crash guard.
///
/// Every call returns as soon as the first of these happens: the plugin
/// returns or throws, the timeout runs out, or the calling task is cancelled.
/// Only the plugin's own work stays on the plugin's thread; the timeout and
/// the caller never wait for it.
///
/// The timeout counts from when the plugin's code starts on a pool thread,
/// not from the call: a call that waits for a thread (behind other calls of
/// the same uid; see ``PluginExecutor``) does not lose its time. The wait is
/// bounded by the same duration, after which the call ends ``PluginCallResult/busy(waited:)``
/// without the plugin having run.
package final class PluginCaller: Sendable {
    /// Timeouts for the calls that have no per-flow timeout.
    package struct Configuration: Sendable {
        /// Field and step validators.
        package var validatorTimeout: Duration
        /// Options and prefill providers.
        package var providerTimeout: Duration

        /// The defaults: 5 seconds each.
        package init(validatorTimeout: Duration = .seconds(5), providerTimeout: Duration = .seconds(5)) {
            self.validatorTimeout = validatorTimeout
            self.providerTimeout = providerTimeout
        }
    }

    /// Bounds on what a plugin may hand back. Anything over is a failure with
    /// the localized default message, so a plugin cannot flood a client.
    package enum Limits {
        /// Scalars in one message; longer messages are cut with "…".
        package static let maxMessageLength = 1000
        /// Options from an options provider (the engine's limit per field too).
        package static let maxOptions = 500
        /// Issues from a step validator.
        package static let maxIssues = 100
        /// The option id an options provider must not use: a choice field's
        /// Other answers it.
        package static let reservedOptionID = "other"
    }

    /// The plugins to call.
    package let registry: PluginRegistry
    /// The timeouts in use.
    package let configuration: Configuration
    private let crashGuard: any CrashGuard
    private let executor: PluginExecutor

    /// A caller for `registry`'s capabilities that records every call with
    /// `crashGuard` and runs plugin code on `executor`.
    package init(
        registry: PluginRegistry, crashGuard: any CrashGuard, executor: PluginExecutor = .shared,
        configuration: Configuration = Configuration()
    ) {
        self.registry = registry
        self.crashGuard = crashGuard
        self.executor = executor
        self.configuration = configuration
    }

    // MARK: the capabilities

    /// Runs field validator `name` (its `assess`, which for a validator
    /// that does not warn is its `validate`): the value is accepted,
    /// rejected with the message to show under the field, or warned about.
    package func validateField(
        _ name: String, value: AnswerValue, field: FieldInfo, context: PluginContext, timeout: Duration? = nil
    ) async -> PluginCallResult<FieldAssessment> {
        await reviewField(name, value: value, field: field, context: context, timeout: timeout).flatMap { .success($0.assessment) }
    }

    /// Runs field validator `name` through its `review` (since SDK 1.1):
    /// its assessment, and the value cleaned up when it gives one (checked
    /// against the field by the engine, which stores it).
    package func reviewField(
        _ name: String, value: AnswerValue, field: FieldInfo, context: PluginContext, timeout: Duration? = nil
    ) async -> PluginCallResult<FieldReview> {
        guard let c = registry.capability(.fieldValidator, named: name),
            case .fieldValidator(_, let validator) = c.capability
        else { return .unavailable }
        let result = await call(c, timeout: timeout ?? configuration.validatorTimeout, uid: context.callerUID) { deadline in
            try await validator.review(value, field: field, context: context.until(deadline))
        }
        return result.flatMap { review in
            let message: String
            switch review.assessment {
            case .accepted: return .success(review)
            case .rejected(let m), .warning(let m): message = m
            }
            guard let text = Self.cleanMessage(message) else {
                return .failure(message: nil, detail: "\(name) returned an empty message")
            }
            if case .warning = review.assessment { return .success(FieldReview(.warning(text), normalizedValue: review.normalizedValue)) }
            return .success(FieldReview(.rejected(text)))
        }
    }

    /// Runs step validator `name`: an empty array means the step is valid.
    package func validateStep(
        _ name: String, step: StepInfo, context: PluginContext, timeout: Duration? = nil
    ) async -> PluginCallResult<[ValidationIssue]> {
        guard let c = registry.capability(.stepValidator, named: name),
            case .stepValidator(_, let validator) = c.capability
        else { return .unavailable }
        let result = await call(c, timeout: timeout ?? configuration.validatorTimeout, uid: context.callerUID) { deadline in
            try await validator.validate(step: step, context: context.until(deadline))
        }
        return result.flatMap { issues in
            guard issues.count <= Limits.maxIssues else {
                return .failure(message: nil, detail: "\(name) returned \(issues.count) issues")
            }
            var cleaned: [ValidationIssue] = []
            for issue in issues {
                guard let text = Self.cleanMessage(issue.message) else {
                    return .failure(message: nil, detail: "\(name) returned an issue with an empty message")
                }
                cleaned.append(ValidationIssue(field: issue.field, message: text, level: issue.level))
            }
            return .success(cleaned)
        }
    }

    /// Asks field validator `name` to describe its rule
    /// (`FieldValidator.describeRule`), under the validators' timeout. A
    /// blank description is none; a long one is cut as messages are.
    package func describeFieldRule(
        _ name: String, field: FieldInfo, context: PluginContext, timeout: Duration? = nil
    ) async -> PluginCallResult<String?> {
        guard let c = registry.capability(.fieldValidator, named: name),
            case .fieldValidator(_, let validator) = c.capability
        else { return .unavailable }
        let result = await call(c, timeout: timeout ?? configuration.validatorTimeout) { deadline in
            try await validator.describeRule(field: field, context: context.until(deadline))
        }
        return result.flatMap { .success($0.flatMap(Self.cleanMessage)) }
    }

    /// Asks step validator `name` to describe its rule
    /// (`StepValidator.describeRule`), as ``describeFieldRule(_:field:context:timeout:)``.
    package func describeStepRule(
        _ name: String, step: StepInfo, context: PluginContext, timeout: Duration? = nil
    ) async -> PluginCallResult<String?> {
        guard let c = registry.capability(.stepValidator, named: name),
            case .stepValidator(_, let validator) = c.capability
        else { return .unavailable }
        let result = await call(c, timeout: timeout ?? configuration.validatorTimeout) { deadline in
            try await validator.describeRule(step: step, context: context.until(deadline))
        }
        return result.flatMap { .success($0.flatMap(Self.cleanMessage)) }
    }

    /// Runs submit action `name` under `timeout` (the flow's `timeoutSeconds`).
    package func submit(
        _ name: String, submission: Submission, context: PluginContext, timeout: Duration
    ) async -> PluginCallResult<SubmitReceipt> {
        guard let c = registry.capability(.submitAction, named: name),
            case .submitAction(_, let action) = c.capability
        else { return .unavailable }
        return await call(c, timeout: timeout, uid: context.callerUID) { deadline in
            try await action.submit(submission, context: context.until(deadline))
        }
    }

    /// Runs options provider `name`. An empty list is a failure ("no options").
    package func options(
        _ name: String, field: FieldInfo, context: PluginContext, timeout: Duration? = nil
    ) async -> PluginCallResult<[ChoiceOption]> {
        guard let c = registry.capability(.optionsProvider, named: name),
            case .optionsProvider(_, let provider) = c.capability
        else { return .unavailable }
        let result = await call(c, timeout: timeout ?? configuration.providerTimeout, uid: context.callerUID) { deadline in
            try await provider.options(for: field, context: context.until(deadline))
        }
        return result.flatMap { options in
            if options.isEmpty {
                return .failure(message: nil, detail: "\(name) returned no options")
            }
            if options.count > Limits.maxOptions {
                return .failure(message: nil, detail: "\(name) returned \(options.count) options")
            }
            var ids = Set<String>()
            for option in options {
                if option.id.isEmpty || !ids.insert(option.id).inserted {
                    return .failure(message: nil, detail: "\(name) returned an empty or repeated option id")
                }
                // The flow's Other choice answers "other": an option of that
                // id would be taken for it.
                if option.id == Limits.reservedOptionID {
                    return .failure(
                        message: nil,
                        detail: "\(name) returned the option id \"other\", which is reserved for a field's Other choice")
                }
            }
            return .success(options)
        }
    }

    /// Runs prefill provider `name`: nil leaves the field empty.
    package func prefill(
        _ name: String, field: FieldInfo, context: PluginContext, timeout: Duration? = nil
    ) async -> PluginCallResult<AnswerValue?> {
        guard let c = registry.capability(.prefillProvider, named: name),
            case .prefillProvider(_, let provider) = c.capability
        else { return .unavailable }
        return await call(c, timeout: timeout ?? configuration.providerTimeout, uid: context.callerUID) { deadline in
            try await provider.prefill(for: field, context: context.until(deadline))
        }
    }

    // MARK: the call path

    /// Runs `body` — a call into `capability`'s plugin for `uid` — on the
    /// plugin executor, in `uid`'s queue, inside the crash guard, and returns
    /// the first of: its result, `.timedOut` once `timeout` has passed since
    /// the plugin's code started, `.busy` when no thread took it within
    /// `timeout`, `.cancelled` when the calling task is cancelled. `body`
    /// gets the instant the timeout runs out, for the plugin's context.
    ///
    /// With a guard that hands out fault markers (``FileCrashGuard``), every
    /// job of the call — its first, each resumption after an `await`, its
    /// child tasks' — runs on a pool thread marked as inside this call, so a
    /// fatal signal in the plugin's code is recorded as the plugin's crash.
    package func call<Value: Sendable>(
        _ capability: RegisteredCapability, timeout: Duration, uid: UInt32? = nil,
        _ body: @escaping @Sendable (_ deadline: ContinuousClock.Instant) async throws -> Value
    ) async -> PluginCallResult<Value> {
        if Task.isCancelled { return .cancelled }
        let rendezvous = Rendezvous<Value>()
        let crashGuard = self.crashGuard
        let executor = self.executor
        let plugin = capability.plugin
        let name = capability.id.name
        let limit = Self.clamp(timeout)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard rendezvous.install(continuation) else { return }
                // Recorded before the task starts, so that its first job can
                // already run with its thread marked as inside this call.
                let token = crashGuard.begin(
                    GuardedCall(
                        pluginPath: plugin.path, pluginName: plugin.name, capability: name,
                        startedAt: WallClock.microsecondsSinceEpoch()))
                let callExecutor = CallExecutor(pool: executor, marker: token.faultMarker, owner: crashGuard, uid: uid)
                let work = Task.detached(executorPreference: callExecutor) {
                    // A thread took the call: its own time starts now. The
                    // deadline the plugin is told is taken first, so it is
                    // never later than the timer's.
                    let deadline = ContinuousClock.now.advanced(by: limit)
                    guard rendezvous.start(limit: limit) else {
                        crashGuard.end(token)
                        return
                    }
                    let outcome: PluginCallResult<Value>
                    do {
                        outcome = .success(try await body(deadline))
                    } catch {
                        // Still marked: describing the error runs the plugin's code.
                        outcome = Self.failure(for: error)
                    }
                    crashGuard.end(token)
                    // The task owns its executor preference; this keeps the
                    // call's executor (and the guard's mapping) alive to here
                    // even where it would not.
                    withExtendedLifetime(callExecutor) {}
                    rendezvous.resolve(outcome)
                }
                // Until a thread takes it, the call waits at most its timeout.
                let waiting = DeadlineTimer.shared.schedule(after: limit) {
                    rendezvous.resolve(.busy(waited: limit))
                }
                rendezvous.attach(work: work, waitingTimer: waiting)
            }
        } onCancel: {
            rendezvous.resolve(.cancelled)
        }
    }

    /// Keeps a timeout between 1 ms and one day.
    static func clamp(_ timeout: Duration) -> Duration {
        min(max(timeout, .milliseconds(1)), .seconds(86_400))
    }

    /// The failure for an error a plugin threw.
    static func failure<Value>(for error: any Error) -> PluginCallResult<Value> {
        // A LocalizedFailure carries only the person's message: the journal
        // gets that message as a quotation, not a Swift dump of the value.
        let detail: String
        if let failure = error as? LocalizedFailure {
            detail = printable("\u{201C}\(failure.message)\u{201D} (the plugin's message for the person; it gave no other cause)")
        } else {
            detail = printable(String(describing: error))
        }
        return .failure(message: ErrorMessages.message(for: error).flatMap(cleanMessage), detail: detail)
    }

    /// Trims a message, cuts it to ``Limits/maxMessageLength`` scalars and
    /// returns nil when nothing is left.
    static func cleanMessage(_ message: String) -> String? {
        let trimmed = message.trimmingWhitespace()
        guard !trimmed.isEmpty else { return nil }
        let scalars = trimmed.unicodeScalars
        guard scalars.count > Limits.maxMessageLength else { return trimmed }
        return String(String.UnicodeScalarView(scalars.prefix(Limits.maxMessageLength - 1))) + "…"
    }
}

extension PluginCallResult {
    /// Transforms a success; every other case passes through.
    func flatMap<Other>(_ transform: (Value) -> PluginCallResult<Other>) -> PluginCallResult<Other> {
        switch self {
        case .success(let v): return transform(v)
        case .failure(let message, let detail): return .failure(message: message, detail: detail)
        case .timedOut: return .timedOut
        case .cancelled: return .cancelled
        case .busy(let waited): return .busy(waited: waited)
        case .unavailable: return .unavailable
        }
    }
}

/// Where the first outcome of a call meets the waiting caller. Whichever of
/// plugin, timers and cancellation resolves first wins; the others are no-ops.
///
/// Two timers in turn: while the call waits for a pool thread, the one that
/// ends it `.busy`; once its code starts (``start(limit:)``), the call's own
/// timeout.
private final class Rendezvous<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<PluginCallResult<Value>, Never>?
        var result: PluginCallResult<Value>?
        var work: Task<Void, Never>?
        var timer: UInt64?
        var started = false
    }
    private let state = LockedValue(State())

    /// Stores the caller's continuation. Returns false (having resumed it)
    /// when the call was already resolved, by cancellation.
    func install(_ continuation: CheckedContinuation<PluginCallResult<Value>, Never>) -> Bool {
        let early: PluginCallResult<Value>? = state.withLock { s in
            if let r = s.result { return r }
            s.continuation = continuation
            return nil
        }
        if let early {
            continuation.resume(returning: early)
            return false
        }
        return true
    }

    /// Keeps the task and the waiting timer so that the winner can cancel
    /// them. The timer is dropped when the code has started already.
    func attach(work: Task<Void, Never>, waitingTimer: UInt64) {
        let (resolved, started) = state.withLock { s in
            if s.result != nil { return (true, s.started) }
            s.work = work
            if !s.started { s.timer = waitingTimer }
            return (false, s.started)
        }
        if resolved { work.cancel() }
        if resolved || started { DeadlineTimer.shared.cancel(waitingTimer) }
    }

    /// The plugin's code is about to run: replaces the waiting timer with the
    /// call's timeout, `limit` from now. False when the call is already over
    /// (it waited too long, or was cancelled): then the plugin must not run.
    func start(limit: Duration) -> Bool {
        let proceed = state.withLock { s -> Bool in
            guard s.result == nil else { return false }
            s.started = true
            return true
        }
        guard proceed else { return false }
        let timer = DeadlineTimer.shared.schedule(after: limit) { [self] in resolve(.timedOut) }
        let (waiting, resolved) = state.withLock { s -> (UInt64?, Bool) in
            if s.result != nil { return (nil, true) }
            defer { s.timer = timer }
            return (s.timer, false)
        }
        if let waiting { DeadlineTimer.shared.cancel(waiting) }
        if resolved { DeadlineTimer.shared.cancel(timer) }
        return true
    }

    /// Delivers `result` unless something else was first.
    func resolve(_ result: PluginCallResult<Value>) {
        let (continuation, work, timer) = state.withLock { s in
            guard s.result == nil else {
                return (CheckedContinuation<PluginCallResult<Value>, Never>?.none, Task<Void, Never>?.none,
                    UInt64?.none)
            }
            s.result = result
            defer {
                s.continuation = nil
                s.work = nil
                s.timer = nil
            }
            return (s.continuation, s.work, s.timer)
        }
        continuation?.resume(returning: result)
        work?.cancel()
        if let timer { DeadlineTimer.shared.cancel(timer) }
    }
}

extension String {
    /// The string without leading and trailing white space and newlines.
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[start...end])
    }
}

extension PluginContext {
    /// This context with the call's deadline, as the plugin is given it.
    func until(_ deadline: ContinuousClock.Instant) -> PluginContext {
        var context = self
        context.deadline = deadline
        return context
    }
}
