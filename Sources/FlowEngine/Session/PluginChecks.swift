import FlowKit

/// A plugin validator call the engine needs. The engine cannot call plugins
/// itself (it is pure and synchronous), so `setAnswers` and `continueStep`
/// return these; the daemon runs them off the bus thread under a timeout and
/// hands the results back with ``FlowSession/applyPluginResults(_:)``.
package struct PluginCheck: Sendable, CustomStringConvertible {
    /// What is checked.
    package enum Subject: Sendable {
        /// A field validator on this field and value (called only for a
        /// non-empty value that passed the built-in rules).
        case field(FieldInfo, AnswerValue)
        /// A step validator on this step.
        case step(StepInfo)
    }

    /// The validator's capability name, for example `flowd.username-available`.
    package let validator: String
    /// The field and value, or the step.
    package let subject: Subject
    /// The step the check belongs to.
    package let stepID: String
    /// The context to call the plugin with; the host sets `stateDirectory`.
    package let context: PluginContext
    /// The session revision the check was made for.
    let revision: UInt64
    /// For a field check: a validator's normalized value as the field
    /// stores it, or why the field cannot store it (checked against the
    /// session the check was made from).
    var storedForm: (@Sendable (AnswerValue) -> Result<AnswerValue, NormalizationRefused>)? = nil

    /// The checked field's id, nil for a step check.
    package var fieldID: String? {
        if case .field(let info, _) = subject { return info.id }
        return nil
    }

    /// Names the validator and its target, never the value (it may be secret).
    package var description: String {
        switch subject {
        case .field(let info, _): return "PluginCheck(\(validator) on field \(info.id))"
        case .step(let info): return "PluginCheck(\(validator) on step \(info.id))"
        }
    }
}

extension PluginCheck: CustomReflectable {
    /// Leaves the value out, so `dump` cannot print a secret.
    package var customMirror: Mirror {
        Mirror(self, children: ["validator": validator, "stepID": stepID, "fieldID": fieldID as Any])
    }
}

/// How a plugin check came out.
package enum PluginCheckOutcome: Sendable, Hashable {
    /// The validator accepted the value (a field validator returned nil, a
    /// step validator no issues).
    case accepted
    /// A field validator's message, in the session's locale.
    case rejected(String)
    /// A field validator's warning, in the session's locale: shown, never
    /// stopping Continue.
    case warning(String)
    /// A step validator's issues.
    case issues([ValidationIssue])
    /// The validator threw: the person sees "Couldn't check this value" (fail closed).
    case failed
    /// The validator ran past its time limit: the person sees the timeout message.
    case timedOut

    /// The outcome of a field validator's return value.
    package init(fieldMessage: String?) {
        self = fieldMessage.map(PluginCheckOutcome.rejected) ?? .accepted
    }

    /// The outcome of a field validator's assessment.
    package init(_ assessment: FieldAssessment) {
        switch assessment {
        case .accepted: self = .accepted
        case .rejected(let message): self = .rejected(message)
        case .warning(let message): self = .warning(message)
        }
    }

    /// The outcome of a step validator's return value.
    package init(stepIssues: [ValidationIssue]) {
        self = stepIssues.isEmpty ? .accepted : .issues(stepIssues)
    }
}

/// A check and its outcome.
package struct PluginCheckResult: Sendable {
    /// The check that ran.
    package let check: PluginCheck
    /// How it came out.
    package let outcome: PluginCheckOutcome
    /// The value a field validator cleaned up (``FieldReview``), as the
    /// field stores it, to store instead of the one checked; nil keeps it.
    package let normalizedValue: AnswerValue?

    /// The result of running `check`.
    package init(check: PluginCheck, outcome: PluginCheckOutcome, normalizedValue: AnswerValue? = nil) {
        self.check = check
        self.outcome = outcome
        self.normalizedValue = normalizedValue
    }
}

/// Why a field cannot store a validator's normalized value: the plugin's
/// fault, said in the journal (never with the value).
package struct NormalizationRefused: Error, Sendable, Hashable, CustomStringConvertible {
    package let description: String

    package init(_ description: String) {
        self.description = description
    }
}

/// Runs named plugin validators: what the daemon's plugin host provides, and
/// what tests fake. Calls may throw and may time out (throw
/// ``PluginCheckTimedOut`` to get the timeout message).
package protocol PluginValidating: Sendable {
    /// Runs the field validator `name` (its `assess`): it accepts the
    /// value, rejects it with a message, or warns.
    func validateField(_ name: String, value: AnswerValue, field: FieldInfo, context: PluginContext) async throws
        -> FieldAssessment
    /// Runs the step validator `name`; an empty array accepts the step.
    func validateStep(_ name: String, step: StepInfo, context: PluginContext) async throws -> [ValidationIssue]
    /// Runs the field validator `name` through its `review`: its
    /// assessment and perhaps a normalized value. The default asks
    /// ``validateField(_:value:field:context:)`` and normalizes nothing.
    func reviewField(_ name: String, value: AnswerValue, field: FieldInfo, context: PluginContext) async throws
        -> FieldReview
    /// Hears that field validator `name` returned a normalized value the
    /// field cannot store (the check then counts as failed): the daemon
    /// logs it. The default does nothing.
    func normalizationRefused(_ name: String, field: FieldInfo, context: PluginContext, problem: NormalizationRefused)
}

extension PluginValidating {
    package func reviewField(_ name: String, value: AnswerValue, field: FieldInfo, context: PluginContext) async throws
        -> FieldReview
    {
        FieldReview(try await validateField(name, value: value, field: field, context: context))
    }

    package func normalizationRefused(
        _ name: String, field: FieldInfo, context: PluginContext, problem: NormalizationRefused
    ) {}
}

/// Thrown by a ``PluginValidating`` when a call ran past its time limit.
package struct PluginCheckTimedOut: Error, Sendable, Hashable {
    /// A timeout.
    package init() {}
}

extension PluginCheck {
    /// Runs this check with `validator`, turning a thrown error into
    /// ``PluginCheckOutcome/failed`` (or ``PluginCheckOutcome/timedOut``).
    package nonisolated(nonsending) func run(using validator: some PluginValidating) async -> PluginCheckResult {
        var outcome: PluginCheckOutcome
        var normalized: AnswerValue?
        do {
            switch subject {
            case .field(let info, let value):
                let review = try await validator.reviewField(self.validator, value: value, field: info, context: context)
                outcome = PluginCheckOutcome(review.assessment)
                if let cleaned = review.normalizedValue, review.assessment.rejection == nil, cleaned != value,
                    let storedForm
                {
                    switch storedForm(cleaned) {
                    case .success(let stored): normalized = stored == value ? nil : stored
                    case .failure(let problem):
                        validator.normalizationRefused(self.validator, field: info, context: context, problem: problem)
                        outcome = .failed
                    }
                }
            case .step(let info):
                outcome = PluginCheckOutcome(
                    stepIssues: try await validator.validateStep(self.validator, step: info, context: context))
            }
        } catch is PluginCheckTimedOut {
            outcome = .timedOut
        } catch {
            outcome = .failed
        }
        return PluginCheckResult(check: self, outcome: outcome, normalizedValue: normalized)
    }
}

extension Array where Element == PluginCheck {
    /// Runs every check concurrently and returns the results in order.
    package nonisolated(nonsending) func run(using validator: some PluginValidating) async -> [PluginCheckResult] {
        if count == 1, let only = first { return [await only.run(using: validator)] }
        return await withTaskGroup(of: (Int, PluginCheckResult).self) { group in
            for (i, check) in enumerated() {
                group.addTask { (i, await check.run(using: validator)) }
            }
            var results: [PluginCheckResult?] = Array<PluginCheckResult?>(repeating: nil, count: count)
            for await (i, r) in group { results[i] = r }
            return results.compactMap { $0 }
        }
    }
}

extension FlowSession {
    /// `setAnswers`, then runs the plugin field validators it asks for and
    /// applies their results: the final field errors in one call.
    package nonisolated(nonsending) mutating func setAnswers(
        _ answers: [String: AnswerValue], now: Int64, validating validator: some PluginValidating
    ) async throws(SessionError) -> FieldErrors {
        let result = try setAnswers(answers, now: now)
        guard !result.checks.isEmpty else { return result.errors }
        let results = await result.checks.run(using: validator)
        return applyPluginResults(results)
    }

    /// `checkAnswers`, then runs the plugin field validators it asks for:
    /// the final field errors, with the session unchanged.
    package nonisolated(nonsending) func checkAnswers(
        _ answers: [String: AnswerValue], now: Int64, validating validator: some PluginValidating
    ) async throws(SessionError) -> FieldErrors {
        let check = try checkAnswers(answers, now: now)
        guard !check.checks.isEmpty else { return check.errors }
        return check.errors(applying: await check.checks.run(using: validator))
    }

    /// `continueStep`, running whatever plugin checks it asks for: the final
    /// outcome in one call (never ``ContinueOutcome/checking(_:)``).
    package nonisolated(nonsending) mutating func continueStep(
        now: Int64, validating validator: some PluginValidating
    ) async throws(SessionError) -> ContinueOutcome {
        var outcome = try continueStep(now: now)
        if case .checking(let checks) = outcome {
            let results = await checks.run(using: validator)
            _ = applyPluginResults(results)
            outcome = try continueStep(now: now)
        }
        return outcome
    }
}
