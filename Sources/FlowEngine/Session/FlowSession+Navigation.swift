import FlowKit

// Continue, Back and GoTo: the person's moves along the path.
extension FlowSession {
    /// Continue: accept the current step and move along the path.
    ///
    /// On a form step every error of the step is shown from now on. When the
    /// built-in rules pass but plugin results are missing, the outcome is
    /// ``ContinueOutcome/checking(_:)``: the session has not moved. The last
    /// step of a flow without Review, and Review itself, begin the submit.
    /// Does nothing on a settled session or while submitting.
    package mutating func continueStep(now: Int64) throws(SessionError) -> ContinueOutcome {
        guard isMutable else { return .noChange }
        if record.currentStep == Self.reviewID { return .submit(nil, try beginSubmit(now: now)) }
        guard let si = flow.stepIndex[record.currentStep] else { return .noChange }
        let step = flow.steps[si]
        switch accept(si, now: now) {
        case .stayed(let errors): return .stayed(errors)
        case .checking(let checks): return .checking(checks)
        case .accepted: break
        }
        let completion = StepCompletion(step: step.id, answers: answers(of: step, in: resolve(including: si)))
        return try moveOn(from: si, completion: completion, now: now)
    }

    /// Where an accepted step `si` leads: along the path, back to Review
    /// after an Edit, to Review, or (the last step of a flow without Review)
    /// into the submit.
    mutating func moveOn(from si: Int, completion: StepCompletion, now: Int64) throws(SessionError) -> ContinueOutcome {
        let r = resolve()
        let p = r.route
        // Which steps are finished is asked only off the plain way on (a
        // step left the path, or an Edit returns to Review): the closure
        // holds a copy of the session, some 1,200 instructions to make and
        // release on every Continue.
        guard let pos = p.firstIndex(of: si) else {
            let isFinished = finishedSteps(r)
            moveTo(p.first(where: { !isFinished($0) }) ?? 0, on: p, now: now)
            return .moved(completion)
        }
        if record.returningToReview && flow.hasReview {
            let isFinished = finishedSteps(r)
            if let unfinished = p[(pos + 1)...].first(where: { !isFinished($0) }) {
                moveTo(unfinished, on: p, now: now)
            } else {
                moveToReview(now: now)
            }
            return .moved(completion)
        }
        if pos + 1 < p.count {
            moveTo(p[pos + 1], on: p, now: now)
            return .moved(completion)
        }
        if flow.hasReview {
            moveToReview(now: now)
            return .moved(completion)
        }
        return .submit(completion, try beginSubmit(now: now))
    }

    /// What Continue's checks of one step found.
    enum Acceptance {
        /// The step passes: it is finished now.
        case accepted
        /// These errors stop it.
        case stayed(FieldErrors)
        /// Plugin results are missing (see ``ContinueOutcome/checking(_:)``).
        case checking([PluginCheck])
    }

    /// Continue's checks of step `si` without the move: every error of the
    /// step is shown from now on, the built-in rules, then the plugin
    /// checks (asked for once; a second call treats a check still missing
    /// as failed), then the plugin step messages. A step that passes is
    /// finished.
    mutating func accept(_ si: Int, now: Int64) -> Acceptance {
        let step = flow.steps[si]
        if step.kind == .form {
            for f in step.fields { insertSorted(f.id, into: &record.shownErrors) }
            record.updatedAt = now
            let r = resolve(including: si)
            let builtIn = issues(of: step, shownOnly: false, plugins: false, in: r)
            let pending = SessionScratch.PendingContinue(step: step.id, revision: record.revision)
            let resuming = scratch.pendingContinue == pending
            scratch.pendingContinue = nil
            guard builtIn.isEmpty else { return .stayed(words(issues(of: step, shownOnly: false, plugins: true, in: r))) }
            let checks = step.fields.flatMap { fieldChecks($0, retryFailures: !resuming, in: r) }
                + stepChecks(step, retryFailures: !resuming, in: r)
            if !checks.isEmpty {
                if !resuming {
                    scratch.pendingContinue = pending
                    return .checking(checks)
                }
                // Asked for and still missing: fail closed.
                _ = applyPluginResults(checks.map { PluginCheckResult(check: $0, outcome: .failed) })
            }
            recordStepMessages(step)
            // The built-in rules found nothing: only plugins' verdicts (on
            // fields with validators, or the step's messages of this
            // revision) can add to it, so the step is checked again only then.
            let pluginsSpeak = step.fields.contains { !$0.validators.isEmpty }
                || record.stepMessages[step.id]?.revision == record.revision
            let all = pluginsSpeak ? issues(of: step, shownOnly: false, plugins: true, in: r) : [:]
            guard all.isEmpty else { return .stayed(words(all)) }
        }
        insertSorted(step.id, into: &record.completed)
        record.updatedAt = now
        return .accepted
    }

    /// Back along the path actually taken (from Review: to the last step).
    ///
    /// - Throws: `invalidState` on the first step, while submitting and once submitted.
    package mutating func back(now: Int64) throws(SessionError) {
        try requireMutable()
        let p = route()
        if record.currentStep == Self.reviewID {
            guard let last = p.last else { return }
            record.returningToReview = false
            moveTo(last, on: p, now: now)
            return
        }
        guard let si = flow.stepIndex[record.currentStep], let pos = p.firstIndex(of: si) else {
            throw SessionError(.invalidState, "the session is not on a step")
        }
        guard pos > 0 else {
            throw SessionError(.invalidState, "\(quoted(flow.steps[si].id)) is the first step; there is no step before it")
        }
        moveTo(p[pos - 1], on: p, now: now)
    }

    /// Goes to a visited step on the current path (Edit), or to `review`.
    ///
    /// From Review this is Edit: Continue then returns to Review. Going
    /// forward is allowed only over finished steps. Review opens once every
    /// step on the path has been visited, finished or not: it marks an
    /// unfinished step "Not finished", and Submit then leads there. So a
    /// person can go back to Review after an Edit that cleared an answer,
    /// but cannot skip steps they have never seen.
    ///
    /// - Throws: `notFound` for an unknown step (or `review` in a flow without
    ///   one); `invalidState` for a step not visited, not on the path, or
    ///   beyond an unfinished step, for Review while a step on the path was
    ///   never visited, while submitting and once submitted.
    package mutating func goTo(_ target: String, now: Int64) throws(SessionError) {
        try requireMutable()
        let r = resolve()
        let p = r.route
        if target == Self.reviewID {
            guard flow.hasReview else { throw SessionError(.notFound, "flow \(quoted(flow.id)) has no review") }
            if record.currentStep == Self.reviewID { return }
            if let unseen = p.first(where: { !record.visited.contains(flow.steps[$0].id) }) {
                throw SessionError(.invalidState, "step \(quoted(flow.steps[unseen].id)) has not been visited yet; Review opens once every step on the path has been")
            }
            moveToReview(now: now)
            return
        }
        guard let ti = flow.stepIndex[target] else {
            throw SessionError(.notFound, "flow \(quoted(flow.id)) has no step \(quoted(target))")
        }
        guard let tpos = p.firstIndex(of: ti) else {
            throw SessionError(.invalidState, "step \(quoted(target)) is not on the current path")
        }
        guard record.visited.contains(target) else {
            throw SessionError(.invalidState, "step \(quoted(target)) has not been visited yet")
        }
        if record.currentStep == Self.reviewID {
            record.returningToReview = true
            moveTo(ti, on: p, now: now)
            return
        }
        guard let ci = flow.stepIndex[record.currentStep], let cpos = p.firstIndex(of: ci) else {
            moveTo(ti, on: p, now: now)
            return
        }
        if tpos == cpos { return }
        let isFinished = finishedSteps(r)
        if tpos > cpos, let unfinished = p[cpos..<tpos].first(where: { !isFinished($0) }) {
            throw SessionError(.invalidState, "step \(quoted(flow.steps[unfinished].id)) is not finished; Continue from it first")
        }
        moveTo(ti, on: p, now: now)
    }
}
