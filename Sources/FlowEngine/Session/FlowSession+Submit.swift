import FlowKit

// Submitting: the checks before, the request the daemon runs, and how the
// run ends (finished, failed, cancelled, interrupted by a restart).
extension FlowSession {
    /// Submit: runs the checks and tells the daemon what to do.
    ///
    /// If a step on the path is not finished the session moves to the first
    /// such step (`redirected`; from there Continue returns to Review). A flow
    /// without a submit action settles at once. Otherwise the state becomes
    /// `submitting`, the person hears "Sending…" (so a slow action is not
    /// silence), and the daemon runs the returned request.
    ///
    /// - Throws: `invalidState` when a submit is already running.
    package mutating func beginSubmit(now: Int64) throws(SessionError) -> SubmitStart {
        switch record.state {
        case .submitted: return .alreadySubmitted
        case .submitting: throw SessionError(.invalidState, "a submit is already running")
        case .editing, .review, .failed: break
        }
        let r = resolve()
        let isFinished = finishedSteps(r)
        if let unfinished = r.route.first(where: { !isFinished($0) }) {
            if flow.hasReview { record.returningToReview = true }
            for f in flow.steps[unfinished].fields { insertSorted(f.id, into: &record.shownErrors) }
            moveTo(unfinished, on: r.route, now: now)
            return .redirected(toStep: flow.steps[unfinished].id)
        }
        guard let action = flow.submit?.action else {
            settle(receipt: [:], now: now)
            return .settledWithoutAction
        }
        record.state = .submitting
        record.lastError = nil
        announce(.builtin(.submitting))
        record.submittedAt = now
        record.updatedAt = now
        scratch.pendingContinue = nil
        let options = flow.submit?.options ?? [:]
        let context = pluginContext(answers: answersOnPath(includeSecure: false, in: r), options: options)
        return .run(SubmitRequest(
            action: action, options: options, timeoutSeconds: flow.submit?.timeoutSeconds ?? SubmitDefinition.defaultTimeoutSeconds,
            submission: submission(now: now), context: context))
    }

    /// The submit action succeeded: the session is settled, its answers are
    /// immutable, and secure values are forgotten.
    ///
    /// - Throws: `invalidState` when no submit is running (for example after a cancel).
    package mutating func finishSubmit(receipt: SubmitReceipt, now: Int64) throws(SessionError) {
        guard record.state == .submitting else { throw SessionError(.invalidState, "no submit is running") }
        settle(receipt: receipt.values, now: now)
    }

    /// The submit action failed: the state is `failed`, `lastError` holds the
    /// localized message, the answers are kept and Submit may be retried.
    ///
    /// - Throws: `invalidState` when no submit is running.
    package mutating func failSubmit(_ failure: SubmitFailure, now: Int64) throws(SessionError) {
        guard record.state == .submitting else { throw SessionError(.invalidState, "no submit is running") }
        let message: String
        switch failure {
        case .localized(let localized): message = localized
        case .other: message = words(.builtin(.submitFailed))
        case .timedOut: message = words(.builtin(.submitTimeout))
        }
        record.state = .failed
        record.lastError = message
        announce(.verbatim(message))
        record.updatedAt = now
    }

    /// Cancels an in-flight submit: back to Review (or the step), with no
    /// error; the person hears "Not sent". Does nothing when no submit is
    /// running.
    ///
    /// - Throws: `invalidState` once submitted.
    package mutating func cancelSubmit(now: Int64) throws(SessionError) {
        switch record.state {
        case .submitted: throw SessionError(.invalidState, "the session is already submitted")
        case .submitting:
            record.state = record.currentStep == Self.reviewID ? .review : .editing
            record.lastError = nil
            announce(.builtin(.notSent))
            record.updatedAt = now
        case .editing, .review, .failed:
            return
        }
    }

    /// The daemon restarted and found this session `submitting`: it becomes
    /// `failed` with the localized "interrupted" message. It is never
    /// re-submitted automatically.
    package mutating func markInterrupted(now: Int64) {
        guard record.state == .submitting else { return }
        let message = words(.builtin(.submitInterrupted))
        record.state = .failed
        record.lastError = message
        announce(.verbatim(message))
        record.updatedAt = now
    }
}
