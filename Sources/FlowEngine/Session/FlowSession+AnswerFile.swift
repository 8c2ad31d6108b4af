import FlowKit

/// What driving a session with an answer file did
/// (``FlowSession/run(answers:now:)``).
package enum AnswerRunOutcome: Sendable {
    /// Every step on the path passed: the session is on Review, or, in a
    /// flow without Review, on its last step, finished, so that Submit
    /// sends. Nothing was submitted.
    case ready
    /// This step did not pass: the session stays on it, with these errors
    /// (as Continue would reply), and can be resumed.
    case stopped(step: String, errors: FieldErrors)
    /// Plugin results are missing: run these checks, pass the results to
    /// ``FlowSession/applyPluginResults(_:)``, and run the same answers again.
    case checking([PluginCheck])
}

// Answer files: answers for all the steps of a flow at once, as
// `flowctl answers --json` writes them, drive a session without a person
// (an installer, a fleet of machines). The session does what Continue would
// do on each step, so the file follows the branches its answers choose.
extension FlowSession {
    /// Checks an answer file against the whole flow before anything is
    /// stored: every key names a field of the flow (or `<field>.other`) and
    /// every value has that field's type and options. Values of computed
    /// fields are left out: they are worked out from the others.
    ///
    /// - Returns: the answers to store, normalized as `setAnswers` does.
    /// - Throws: `invalidArgs` naming the first key that is not a field or
    ///   whose value does not fit it.
    package func checkAnswerFile(_ answers: [String: AnswerValue]) throws(SessionError) -> [String: AnswerValue] {
        var out: [String: AnswerValue] = [:]
        for (key, value) in answers.sorted(by: { $0.key < $1.key }) {
            guard let target = answerTarget(key) else {
                var message = "\(quoted(key)) is not a field of flow \(quoted(flow.id))"
                if let near = nearest(key, in: Array(flow.fieldLocation.keys).sorted()) { message += " (did you mean \(quoted(near))?)" }
                throw SessionError(.invalidArgs, message)
            }
            if target.field.type == .computed { continue }
            out[key] = try checkValue(value, key: key, field: target.field, isOther: target.isOther)
        }
        return out
    }

    /// Drives the session from its current step with answers for all the
    /// steps: on each step it sets that step's answers and continues, as a
    /// person would, so the path follows the branches the answers choose.
    /// It stops at the first step that does not pass, with that step's
    /// errors, and at the end of the steps (Review, or the last step of a
    /// flow without Review, finished). It never submits.
    ///
    /// Answers to steps the path does not reach are not stored. Steps the
    /// file says nothing about keep what they have (prefill), and content
    /// steps are passed.
    ///
    /// - Throws: as ``checkAnswerFile(_:)``, before anything changes;
    ///   `invalidState` while submitting or once submitted.
    package mutating func run(answers: [String: AnswerValue], now: Int64) throws(SessionError) -> AnswerRunOutcome {
        try requireMutable()
        let checked = try checkAnswerFile(answers)
        // Each round accepts a step and moves forward along the path (steps
        // only lead forward), so this bound is never reached.
        for _ in 0...(2 * flow.steps.count + 2) {
            guard let si = flow.stepIndex[record.currentStep] else { return .ready }
            let mine = checked.filter { answerTarget($0.key).flatMap { flow.fieldLocation[$0.field.id]?.step } == si }
            if !mine.isEmpty { _ = try setAnswers(mine, now: now) }
            switch accept(si, now: now) {
            case .stayed(let errors): return .stopped(step: flow.steps[si].id, errors: errors)
            case .checking(let checks): return .checking(checks)
            case .accepted: break
            }
            let r = resolve()
            if continueTarget(route: r.route, isFinished: finishedSteps(r)) == .finish { return .ready }
            let completion = StepCompletion(step: flow.steps[si].id, answers: [:])
            _ = try moveOn(from: si, completion: completion, now: now)
        }
        return .stopped(step: record.currentStep, errors: currentErrors())
    }

    /// ``run(answers:now:)``, running the plugin checks it asks for: the
    /// final outcome in one call (never ``AnswerRunOutcome/checking(_:)``).
    package nonisolated(nonsending) mutating func run(
        answers: [String: AnswerValue], now: Int64, validating validator: some PluginValidating
    ) async throws(SessionError) -> AnswerRunOutcome {
        // One round of checks per step at most: a step whose checks were
        // asked for treats missing results as failed the next time.
        for _ in 0...(flow.steps.count + 1) {
            let outcome = try run(answers: answers, now: now)
            guard case .checking(let checks) = outcome else { return outcome }
            _ = applyPluginResults(await checks.run(using: validator))
        }
        return .stopped(step: record.currentStep, errors: currentErrors())
    }
}
