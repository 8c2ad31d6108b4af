import FlowKit

/// One person's run through a flow: the session state machine.
///
/// A value type with no I/O: the daemon holds it, calls its mutations, persists
/// ``record`` after each, and runs the plugin calls it asks for. Every read is
/// localized in the session's locale.
///
/// Navigation model: the *path* is computed from the answers — the first step,
/// then wherever each step's `next` rules lead — so it changes when a branch
/// changes. The session sits on one step of that path (or on Review, or on
/// `complete`). A step is *finished* when Continue accepted it with its
/// current answers and they still pass the built-in rules; changing an answer
/// un-finishes its step.
public struct FlowSession: Sendable {
    /// The `currentStepID` of Review.
    public static let reviewID = "review"
    /// The `currentStepID` once submitted.
    public static let completeID = "complete"

    /// The flow this session runs.
    public let flow: FlowDefinition
    /// Everything persistent. Secure values are never in here.
    public private(set) var record: SessionRecord
    /// True when this session was restored from a record made with another
    /// version of the flow (answers that no longer fit were dropped).
    public private(set) var flowChangedSinceRecord = false

    private var scratch = SessionScratch()
    private let clock: any EngineClock

    private var strings: Strings { .builtin }
    private var locale: String { record.locale }

    // MARK: - Creating and restoring

    /// Starts a session on the flow's first step.
    ///
    /// - Parameters:
    ///   - id: the session id (the daemon's 32 hex characters).
    ///   - owner: the uid that owns the session.
    ///   - locale: a locale tag such as `pt-BR` (`_` is accepted for `-`).
    ///   - clock: the time source; `today` serves `"today"` in date rules.
    ///   - prefill: initial answers for any field of the flow (from the caller
    ///     and from prefill providers), with the same types as `setAnswers`.
    ///   - dynamicOptions: options from the flow's `optionsFrom` providers.
    /// - Throws: `invalidArgs` for a malformed locale, an unknown field or a
    ///   value of the wrong type.
    public init(
        flow: FlowDefinition, id: String, owner: UInt32, locale: String, clock: any EngineClock,
        prefill: [String: AnswerValue] = [:], dynamicOptions: [String: [ChoiceOption]] = [:]
    ) throws(SessionError) {
        let normalized = LocaleFallback.normalize(locale)
        guard LocaleFallback.isWellFormed(normalized) else {
            throw SessionError(.invalidArgs, "\(quoted(locale)) is not a locale tag (expected one like \"en\" or \"pt-BR\")")
        }
        guard !id.isEmpty, id.utf8.count <= 128 else { throw SessionError(.invalidArgs, "a session id must be 1 to 128 bytes") }
        guard let first = flow.steps.first else { throw SessionError(.invalidArgs, "the flow has no steps") }
        self.flow = flow
        self.clock = clock
        let now = clock.now
        self.record = SessionRecord(
            formatVersion: SessionRecord.currentFormatVersion, id: id, flowID: flow.id,
            flowFingerprint: flow.fingerprint, owner: owner, locale: normalized, createdAt: now, updatedAt: now,
            revision: 0, state: .editing, currentStep: first.id, returningToReview: false, visited: [first.id],
            completed: [], shownErrors: [], answers: [:], secureFieldsSet: [], dynamicOptions: [:], stepMessages: [:],
            lastError: nil, announcement: "", receipt: nil, submittedAt: nil)
        for (field, options) in dynamicOptions.sorted(by: { $0.key < $1.key }) {
            try setDynamicOptions(field: field, options)
        }
        var checked: [(key: String, field: FieldDefinition, value: AnswerValue)] = []
        for (key, value) in prefill.sorted(by: { $0.key < $1.key }) {
            guard let target = answerTarget(key) else {
                throw SessionError(.invalidArgs, "prefill names \(quoted(key)), which is not a field of flow \(quoted(flow.id))")
            }
            checked.append((key, target.field, try checkValue(value, key: key, field: target.field, isOther: target.isOther)))
        }
        for item in checked { store(item.value, key: item.key, field: item.field) }
        record.announcement = announcement(forStep: 0, path: route())
    }

    /// Restores a session from its record, with the flow as loaded now.
    ///
    /// Secure answers are gone: the steps that held them are no longer
    /// finished ("Not finished" on Review) and must be filled in again. If
    /// the flow changed since the record was made (``flowChangedSinceRecord``),
    /// answers to fields that no longer exist or changed type are dropped,
    /// their steps are no longer finished, and a session whose step left the
    /// path moves to the first unfinished step on it. A session that was
    /// `submitting` stays so until the daemon calls ``markInterrupted(now:)``.
    ///
    /// - Throws: `incompatibleRecord` for another record format or another flow.
    public init(restoring record: SessionRecord, flow: FlowDefinition, clock: any EngineClock) throws(SessionError) {
        try self.init(restoring: record, flow: flow, clock: clock, secure: [:])
    }

    /// This session on another version of its flow (after the daemon
    /// reloaded the flow file): as if restored from its record with `flow`,
    /// except that the secure answers held in memory are kept for fields that
    /// are still secure, so a reload does not make the person type a password
    /// again.
    ///
    /// - Throws: `incompatibleRecord` when `flow` is another flow.
    public func rebased(onto flow: FlowDefinition) throws(SessionError) -> FlowSession {
        let kept = scratch.secure.filter { flow.field($0.key)?.type == .secure }
        return try FlowSession(restoring: record, flow: flow, clock: clock, secure: kept)
    }

    private init(
        restoring record: SessionRecord, flow: FlowDefinition, clock: any EngineClock, secure: [String: String]
    ) throws(SessionError) {
        guard record.formatVersion == SessionRecord.currentFormatVersion else {
            throw SessionError(.incompatibleRecord, "record format \(record.formatVersion) is not format \(SessionRecord.currentFormatVersion), which this flowd reads")
        }
        guard record.flowID == flow.id else {
            throw SessionError(.incompatibleRecord, "the record belongs to flow \(quoted(record.flowID)), not \(quoted(flow.id))")
        }
        guard !flow.steps.isEmpty else { throw SessionError(.incompatibleRecord, "the flow has no steps") }
        self.flow = flow
        self.clock = clock
        self.record = record
        self.flowChangedSinceRecord = record.flowFingerprint != flow.fingerprint
        self.scratch.secure = secure
        repairAfterRestore()
    }

    // MARK: - Reads

    /// True while the session holds secure answers. They live only in memory,
    /// so a host that caches sessions must not drop this one from memory.
    public var holdsSecureAnswers: Bool { !scratch.secure.isEmpty }

    /// `editing`, `review`, `submitting`, `submitted` or `failed`.
    public var state: SessionState { record.state }

    /// A step id, `review` or `complete`.
    public var currentStepID: String { record.currentStep }

    /// N of "Step N of M", from 1 along the path; M on Review and once complete.
    public var stepIndex: Int { progress(route()).index }

    /// M of "Step N of M": the predicted path's length, Review included.
    public var stepCount: Int { progress(route()).count }

    /// False on the first step, while submitting and once submitted.
    public var canGoBack: Bool { canGoBack(route: route()) }

    /// Whether Continue can succeed now as far as the built-in rules and the
    /// cached plugin results tell.
    public var canContinue: Bool {
        guard isMutable else { return false }
        if record.currentStep == Self.reviewID { return true }
        guard let i = flow.stepIndex[record.currentStep] else { return false }
        let step = flow.steps[i]
        return step.kind == .content || errors(of: step, shownOnly: false, plugins: true).isEmpty
    }

    /// "Continue", "Back to review", the flow's finish title, or the submit
    /// label on Review.
    public var continueLabel: String { continueLabel(route: route(), isFinished: isFinished) }

    /// The localized Back label.
    public var backLabel: String { strings.text(.back, locale: locale) }

    /// True after an Edit from Review, until the session is back there.
    public var returningToReview: Bool { record.returningToReview }

    /// The last submit failure's localized message.
    public var lastError: String? { record.lastError }

    /// The last announcement: "Step 2 of 4, Day and time", or a submit's outcome.
    public var announcement: String { record.announcement }

    /// The predicted path with each entry's status, Review last.
    public var path: [PathEntry] { path(route: route(), isFinished: isFinished) }

    /// ``stepIndex``, ``stepCount``, ``canGoBack``, ``canContinue``,
    /// ``continueLabel`` and ``path`` at once: the same values, with the path
    /// predicted once and each step's "finished" worked out once. A host
    /// that reads them all after every change (flowd does, to announce what
    /// changed) should use this.
    public var progressSnapshot: ProgressSnapshot {
        let p = route()
        var known: [Int: Bool] = [:]
        let finished = { (i: Int) -> Bool in
            if let f = known[i] { return f }
            let f = isFinished(i)
            known[i] = f
            return f
        }
        let (index, count) = progress(p)
        return ProgressSnapshot(
            stepIndex: index, stepCount: count, canGoBack: canGoBack(route: p), canContinue: canContinue,
            continueLabel: continueLabel(route: p, isFinished: finished), path: path(route: p, isFinished: finished))
    }

    private func canGoBack(route path: [Int]) -> Bool {
        guard isMutable else { return false }
        if record.currentStep == Self.reviewID { return true }
        guard let i = flow.stepIndex[record.currentStep], let pos = path.firstIndex(of: i) else { return false }
        return pos > 0
    }

    private func continueLabel(route path: [Int], isFinished: (Int) -> Bool) -> String {
        if record.currentStep == Self.reviewID { return submitLabel }
        guard let i = flow.stepIndex[record.currentStep] else { return "" }
        guard let pos = path.firstIndex(of: i) else { return strings.text(.continue, locale: locale) }
        if record.returningToReview && flow.hasReview {
            let rest = path[(pos + 1)...]
            return strings.text(rest.allSatisfy(isFinished) ? .backToReview : .continue, locale: locale)
        }
        if pos == path.count - 1 && !flow.hasReview {
            return flow.finishTitle?.resolve(locale) ?? strings.text(.finish, locale: locale)
        }
        return strings.text(.continue, locale: locale)
    }

    private func path(route p: [Int], isFinished: (Int) -> Bool) -> [PathEntry] {
        let settled = record.state == .submitted
        let current = flow.stepIndex[record.currentStep]
        var out = p.map { i -> PathEntry in
            let status: PathEntry.Status =
                settled ? .done : (i == current ? .current : (isFinished(i) ? .done : .upcoming))
            return PathEntry(id: flow.steps[i].id, title: flow.steps[i].title.resolve(locale), status: status)
        }
        if flow.hasReview {
            let status: PathEntry.Status =
                settled ? .done : (record.currentStep == Self.reviewID ? .current : .upcoming)
            out.append(PathEntry(id: Self.reviewID, title: reviewTitle, status: status))
        }
        return out
    }

    /// Everything `GetStep` returns for the current step.
    public func currentStep() -> StepView {
        let p = route()
        let (index, count) = progress(p)
        let base = (index: index, count: count, back: backLabel, canGoBack: canGoBack, canContinue: canContinue)
        if record.currentStep == Self.reviewID {
            return StepView(
                id: Self.reviewID, kind: .review, title: reviewTitle, description: flow.review?.note?.resolve(locale) ?? "",
                body: "", icon: "", fields: [], error: "", announcement: record.announcement, index: base.index,
                count: base.count, continueLabel: submitLabel, backLabel: base.back, canGoBack: base.canGoBack,
                canContinue: base.canContinue)
        }
        guard let si = flow.stepIndex[record.currentStep] else {
            return StepView(
                id: Self.completeID, kind: .complete, title: strings.text(.submitted, locale: locale), description: "",
                body: successMessage ?? "", icon: "", fields: [], error: "", announcement: record.announcement,
                index: base.index, count: base.count, continueLabel: "", backLabel: base.back, canGoBack: false,
                canContinue: false)
        }
        let step = flow.steps[si]
        let shown = errors(of: step, shownOnly: true, plugins: true)
        return StepView(
            id: step.id, kind: step.kind == .content ? .content : .form, title: step.title.resolve(locale),
            description: step.description?.resolve(locale) ?? "", body: step.body?.resolve(locale) ?? "",
            icon: step.icon ?? "", fields: step.fields.map { fieldView($0, error: shown[$0.id] ?? "") },
            error: shown[""] ?? "", announcement: announcement(forStep: si, path: p), index: base.index,
            count: base.count, continueLabel: continueLabel, backLabel: base.back, canGoBack: base.canGoBack,
            canContinue: base.canContinue)
    }

    /// The Review page: one group per form step on the path. Works in any
    /// state (and for a flow without Review, for tools).
    public func review() -> ReviewView {
        let p = route()
        let settled = record.state == .submitted
        var groups: [ReviewGroup] = []
        for i in p where flow.steps[i].kind == .form {
            let step = flow.steps[i]
            let finished = settled || isFinished(i)
            let title = step.title.resolve(locale)
            groups.append(ReviewGroup(
                step: step.id, title: title, finished: finished,
                status: finished ? "" : strings.text(.notFinished, locale: locale),
                editLabel: strings.text(.edit, locale: locale, ["step": title]),
                answers: step.fields.map {
                    ReviewAnswer(field: $0.id, label: $0.label.resolve(locale), display: display($0))
                }))
        }
        return ReviewView(
            title: reviewTitle, groups: groups, note: flow.review?.note?.resolve(locale) ?? "",
            submitLabel: submitLabel, canSubmit: p.allSatisfy(isFinished))
    }

    /// The answers on the path: answers on abandoned branches are left out.
    /// An unset toggle counts as `false`; Other's text is included as
    /// `<field>.other` when Other is chosen.
    ///
    /// - Parameter includeSecure: add secure answers (as text). Only a submit
    ///   action may see them; `GetAnswers` leaves them out.
    public func answersOnPath(includeSecure: Bool) -> [String: AnswerValue] {
        var out: [String: AnswerValue] = [:]
        for i in route() {
            for f in flow.steps[i].fields {
                if f.type == .secure {
                    if includeSecure, let s = scratch.secure[f.id] { out[f.id] = .text(s) }
                    continue
                }
                if f.type == .toggle {
                    out[f.id] = record.answers[f.id] ?? .bool(false)
                    continue
                }
                guard let v = record.answers[f.id], !isBlank(v) else { continue }
                out[f.id] = v
                if f.other, chosenOther(v), let t = record.answers[f.otherKey], !isBlank(t) { out[f.otherKey] = t }
            }
        }
        return out
    }

    /// What a submit action receives; its `id` is the session id, so every
    /// retry carries the same id.
    public func submission(now: Int64) -> Submission {
        var secure: [String: String] = [:]
        for i in route() {
            for f in flow.steps[i].fields where f.type == .secure {
                if let s = scratch.secure[f.id] { secure[f.id] = s }
            }
        }
        return Submission(
            id: record.id, flowID: flow.id, sessionID: record.id, ownerUID: record.owner, locale: locale,
            answers: answersOnPath(includeSecure: false), secureAnswers: secure, submittedAt: now)
    }

    /// The current step's field errors, as `SetAnswers` would return them.
    public func currentErrors() -> FieldErrors {
        guard let i = flow.stepIndex[record.currentStep] else { return [:] }
        return errors(of: flow.steps[i], shownOnly: true, plugins: true)
    }

    /// The options a choice field offers now: the provider's, or the flow's,
    /// with labels in the session's locale.
    public func options(of field: FieldDefinition) -> [ChoiceOption] {
        if let dynamic = record.dynamicOptions[field.id] { return dynamic }
        return field.options.map { ChoiceOption(id: $0.id, label: $0.label.resolve(locale), icon: $0.icon) }
    }

    // MARK: - Mutations

    /// Stores answers for fields of the current step (and `<field>.other`).
    /// An empty string or empty list clears an answer. All or nothing: a bad
    /// entry rejects the whole call.
    ///
    /// Numbers are stored as integers when they are whole (so a restored
    /// session returns the same type); `integer: true` refuses fractions.
    ///
    /// - Returns: the step's shown errors, and the plugin field checks to run.
    /// - Throws: `invalidState` while submitting or once submitted;
    ///   `invalidArgs` for a field not on the current step, a value of the
    ///   wrong type, or an option id the field does not have.
    public mutating func setAnswers(_ answers: [String: AnswerValue], now: Int64) throws(SessionError) -> SetAnswersResult {
        try requireMutable()
        guard let si = flow.stepIndex[record.currentStep] else {
            if let key = answers.keys.sorted().first {
                throw SessionError(.invalidArgs, "\(quoted(key)) is not a field of the current step (\(record.currentStep))")
            }
            return SetAnswersResult(errors: [:], checks: [])
        }
        let step = flow.steps[si]
        var checked: [(key: String, field: FieldDefinition, value: AnswerValue)] = []
        for (key, value) in answers.sorted(by: { $0.key < $1.key }) {
            guard let target = answerTarget(key), flow.fieldLocation[target.field.id]?.step == si else {
                throw SessionError(.invalidArgs, "\(quoted(key)) is not a field of the current step \(quoted(step.id))")
            }
            checked.append((key, target.field, try checkValue(value, key: key, field: target.field, isOther: target.isOther)))
        }
        var changed = false
        for item in checked {
            if store(item.value, key: item.key, field: item.field) { changed = true }
            insertSorted(item.field.id, into: &record.shownErrors)
        }
        if changed {
            record.revision &+= 1
            remove(step.id, from: &record.completed)
            scratch.pendingContinue = nil
            leaveFailedState()
        }
        record.updatedAt = now
        let touched = Set(checked.map(\.field.id))
        let checks = step.fields.filter { touched.contains($0.id) }.flatMap { fieldChecks($0, retryFailures: true) }
        return SetAnswersResult(errors: errors(of: step, shownOnly: true, plugins: true), checks: checks)
    }

    /// Merges plugin results into the session's caches. A result for a value
    /// that has changed since (or a step check for an older revision) is
    /// ignored. A failure or timeout becomes the field's localized error
    /// (fail closed).
    ///
    /// - Returns: the current step's shown errors, now final.
    public mutating func applyPluginResults(_ results: [PluginCheckResult]) -> FieldErrors {
        for r in results {
            switch r.check.subject {
            case .field(let info, let value):
                guard let current = storedValue(info.id), current == value else { continue }
                var verdict = scratch.fieldVerdicts[info.id].flatMap { $0.value == value ? $0 : nil }
                    ?? SessionScratch.FieldVerdict(value: value, results: [:])
                verdict.results[r.check.validator] = r.outcome
                scratch.fieldVerdicts[info.id] = verdict
            case .step(let info):
                guard r.check.revision == record.revision else { continue }
                var verdict = scratch.stepVerdicts[info.id].flatMap { $0.revision == record.revision ? $0 : nil }
                    ?? SessionScratch.StepVerdict(revision: record.revision, results: [:])
                verdict.results[r.check.validator] = r.outcome
                scratch.stepVerdicts[info.id] = verdict
            }
        }
        return currentErrors()
    }

    /// Continue: accept the current step and move along the path.
    ///
    /// On a form step every error of the step is shown from now on. When the
    /// built-in rules pass but plugin results are missing, the outcome is
    /// ``ContinueOutcome/checking(_:)``: the session has not moved. The last
    /// step of a flow without Review, and Review itself, begin the submit.
    /// Does nothing on a settled session or while submitting.
    public mutating func continueStep(now: Int64) throws(SessionError) -> ContinueOutcome {
        guard isMutable else { return .noChange }
        if record.currentStep == Self.reviewID { return .submit(nil, try beginSubmit(now: now)) }
        guard let si = flow.stepIndex[record.currentStep] else { return .noChange }
        let step = flow.steps[si]
        if step.kind == .form {
            for f in step.fields { insertSorted(f.id, into: &record.shownErrors) }
            record.updatedAt = now
            let builtIn = errors(of: step, shownOnly: false, plugins: false)
            let pending = SessionScratch.PendingContinue(step: step.id, revision: record.revision)
            let resuming = scratch.pendingContinue == pending
            scratch.pendingContinue = nil
            guard builtIn.isEmpty else { return .stayed(errors(of: step, shownOnly: false, plugins: true)) }
            let checks = step.fields.flatMap { fieldChecks($0, retryFailures: !resuming) }
                + stepChecks(step, retryFailures: !resuming)
            if !checks.isEmpty {
                if !resuming {
                    scratch.pendingContinue = pending
                    return .checking(checks)
                }
                // Asked for and still missing: fail closed.
                _ = applyPluginResults(checks.map { PluginCheckResult(check: $0, outcome: .failed) })
            }
            recordStepMessages(step)
            let all = errors(of: step, shownOnly: false, plugins: true)
            guard all.isEmpty else { return .stayed(all) }
        }
        insertSorted(step.id, into: &record.completed)
        record.updatedAt = now
        let completion = StepCompletion(step: step.id, answers: answers(of: step))
        let p = route()
        guard let pos = p.firstIndex(of: si) else {
            moveTo(p.first(where: { !isFinished($0) }) ?? 0, now: now)
            return .moved(completion)
        }
        if record.returningToReview && flow.hasReview {
            if let unfinished = p[(pos + 1)...].first(where: { !isFinished($0) }) {
                moveTo(unfinished, now: now)
            } else {
                moveToReview(now: now)
            }
            return .moved(completion)
        }
        if pos + 1 < p.count {
            moveTo(p[pos + 1], now: now)
            return .moved(completion)
        }
        if flow.hasReview {
            moveToReview(now: now)
            return .moved(completion)
        }
        return .submit(completion, try beginSubmit(now: now))
    }

    /// Back along the path actually taken (from Review: to the last step).
    ///
    /// - Throws: `invalidState` on the first step, while submitting and once submitted.
    public mutating func back(now: Int64) throws(SessionError) {
        try requireMutable()
        let p = route()
        if record.currentStep == Self.reviewID {
            guard let last = p.last else { return }
            record.returningToReview = false
            moveTo(last, now: now)
            return
        }
        guard let si = flow.stepIndex[record.currentStep], let pos = p.firstIndex(of: si) else {
            throw SessionError(.invalidState, "the session is not on a step")
        }
        guard pos > 0 else {
            throw SessionError(.invalidState, "\(quoted(flow.steps[si].id)) is the first step; there is no step before it")
        }
        moveTo(p[pos - 1], now: now)
    }

    /// Goes to a visited step on the current path (Edit), or to `review`.
    ///
    /// From Review this is Edit: Continue then returns to Review. Going
    /// forward is allowed only over finished steps; Review opens only when
    /// every step on the path is finished.
    ///
    /// - Throws: `notFound` for an unknown step (or `review` in a flow without
    ///   one); `invalidState` for a step not visited, not on the path, or
    ///   beyond an unfinished step, while submitting and once submitted.
    public mutating func goTo(_ target: String, now: Int64) throws(SessionError) {
        try requireMutable()
        let p = route()
        if target == Self.reviewID {
            guard flow.hasReview else { throw SessionError(.notFound, "flow \(quoted(flow.id)) has no review") }
            if record.currentStep == Self.reviewID { return }
            if let unfinished = p.first(where: { !isFinished($0) }) {
                throw SessionError(.invalidState, "step \(quoted(flow.steps[unfinished].id)) is not finished; Review opens once every step is done")
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
            moveTo(ti, now: now)
            return
        }
        guard let ci = flow.stepIndex[record.currentStep], let cpos = p.firstIndex(of: ci) else {
            moveTo(ti, now: now)
            return
        }
        if tpos == cpos { return }
        if tpos > cpos, let unfinished = p[cpos..<tpos].first(where: { !isFinished($0) }) {
            throw SessionError(.invalidState, "step \(quoted(flow.steps[unfinished].id)) is not finished; Continue from it first")
        }
        moveTo(ti, now: now)
    }

    /// Submit: runs the checks and tells the daemon what to do.
    ///
    /// If a step on the path is not finished the session moves to the first
    /// such step (`redirected`; from there Continue returns to Review). A flow
    /// without a submit action settles at once. Otherwise the state becomes
    /// `submitting` and the daemon runs the returned request.
    ///
    /// - Throws: `invalidState` when a submit is already running.
    public mutating func beginSubmit(now: Int64) throws(SessionError) -> SubmitStart {
        switch record.state {
        case .submitted: return .alreadySubmitted
        case .submitting: throw SessionError(.invalidState, "a submit is already running")
        case .editing, .review, .failed: break
        }
        let p = route()
        if let unfinished = p.first(where: { !isFinished($0) }) {
            if flow.hasReview { record.returningToReview = true }
            for f in flow.steps[unfinished].fields { insertSorted(f.id, into: &record.shownErrors) }
            moveTo(unfinished, now: now)
            return .redirected(toStep: flow.steps[unfinished].id)
        }
        guard let action = flow.submit?.action else {
            settle(receipt: [:], now: now)
            return .settledWithoutAction
        }
        record.state = .submitting
        record.lastError = nil
        record.submittedAt = now
        record.updatedAt = now
        scratch.pendingContinue = nil
        let options = flow.submit?.options ?? [:]
        let context = PluginContext(
            flowID: flow.id, sessionID: record.id, locale: locale, callerUID: record.owner,
            answers: answersOnPath(includeSecure: false), options: options, stateDirectory: "")
        return .run(SubmitRequest(
            action: action, options: options, timeoutSeconds: flow.submit?.timeoutSeconds ?? SubmitDefinition.defaultTimeoutSeconds,
            submission: submission(now: now), context: context))
    }

    /// The submit action succeeded: the session is settled, its answers are
    /// immutable, and secure values are forgotten.
    ///
    /// - Throws: `invalidState` when no submit is running (for example after a cancel).
    public mutating func finishSubmit(receipt: SubmitReceipt, now: Int64) throws(SessionError) {
        guard record.state == .submitting else { throw SessionError(.invalidState, "no submit is running") }
        settle(receipt: receipt.values, now: now)
    }

    /// The submit action failed: the state is `failed`, `lastError` holds the
    /// localized message, the answers are kept and Submit may be retried.
    ///
    /// - Throws: `invalidState` when no submit is running.
    public mutating func failSubmit(_ failure: SubmitFailure, now: Int64) throws(SessionError) {
        guard record.state == .submitting else { throw SessionError(.invalidState, "no submit is running") }
        let message: String
        switch failure {
        case .localized(let text): message = text
        case .other: message = strings.text(.submitFailed, locale: locale)
        case .timedOut: message = strings.text(.submitTimeout, locale: locale)
        }
        record.state = .failed
        record.lastError = message
        record.announcement = message
        record.updatedAt = now
    }

    /// Cancels an in-flight submit: back to Review (or the step) quietly, with
    /// no error. Does nothing when no submit is running.
    ///
    /// - Throws: `invalidState` once submitted.
    public mutating func cancelSubmit(now: Int64) throws(SessionError) {
        switch record.state {
        case .submitted: throw SessionError(.invalidState, "the session is already submitted")
        case .submitting:
            record.state = record.currentStep == Self.reviewID ? .review : .editing
            record.lastError = nil
            record.updatedAt = now
        case .editing, .review, .failed:
            return
        }
    }

    /// The daemon restarted and found this session `submitting`: it becomes
    /// `failed` with the localized "interrupted" message. It is never
    /// re-submitted automatically.
    public mutating func markInterrupted(now: Int64) {
        guard record.state == .submitting else { return }
        let message = strings.text(.submitInterrupted, locale: locale)
        record.state = .failed
        record.lastError = message
        record.announcement = message
        record.updatedAt = now
    }

    /// Sets the options an `optionsFrom` provider returned for a field.
    ///
    /// - Throws: `invalidArgs` for a field without `optionsFrom`, an empty,
    ///   duplicate or reserved (`other`) option id, or an over-long string;
    ///   `limitExceeded` for more options than a flow file may have.
    public mutating func setDynamicOptions(field id: String, _ options: [ChoiceOption]) throws(SessionError) {
        guard let field = flow.field(id), field.optionsFrom != nil else {
            throw SessionError(.invalidArgs, "\(quoted(id)) is not a field whose options come from a provider")
        }
        let limit = FlowLoadLimits.default.maxOptionsPerField
        guard options.count <= limit else {
            throw SessionError(.limitExceeded, "\(options.count) options for \(quoted(id)) are over the limit of \(limit)")
        }
        var seen: Set<String> = []
        for o in options {
            guard !o.id.isEmpty, o.id.utf8.count <= 256, o.label.utf8.count <= 4096,
                (o.icon?.utf8.count ?? 0) <= 128
            else {
                throw SessionError(.invalidArgs, "an option of \(quoted(id)) has an empty or over-long id, label or icon")
            }
            guard o.id != "other" else {
                throw SessionError(.invalidArgs, "the option id \"other\" is reserved (field \(quoted(id)))")
            }
            guard seen.insert(o.id).inserted else {
                throw SessionError(.invalidArgs, "the option id \(quoted(o.id)) appears twice (field \(quoted(id)))")
            }
        }
        record.dynamicOptions[id] = options
    }

    // MARK: - Path

    /// The step indices of the path the current answers predict.
    private func route() -> [Int] {
        var out: [Int] = []
        var onPath = Array(repeating: false, count: flow.steps.count)
        var i = 0
        while i < flow.steps.count {
            out.append(i)
            onPath[i] = true
            let step = flow.steps[i]
            let target: StepTarget
            if step.next.isEmpty {
                target = i + 1 < flow.steps.count ? .step(flow.steps[i + 1].id) : .complete
            } else {
                let answer: (String) -> AnswerValue? = { conditionAnswer($0, onPath: onPath) }
                target = step.next.first { $0.condition?.holds(answer) ?? true }?.target ?? .complete
            }
            guard case .step(let id) = target, let next = flow.stepIndex[id], next > i else { break }
            i = next
        }
        return out
    }

    /// An answer as conditions see it: nothing off the path; an unset toggle is false.
    private func conditionAnswer(_ field: String, onPath: [Bool]) -> AnswerValue? {
        guard let loc = flow.fieldLocation[field], onPath[loc.step] else { return nil }
        let f = flow.steps[loc.step].fields[loc.field]
        if f.type == .toggle { return record.answers[field] ?? .bool(false) }
        return record.answers[field]
    }

    private func progress(_ p: [Int]) -> (index: Int, count: Int) {
        let count = p.count + (flow.hasReview ? 1 : 0)
        guard let si = flow.stepIndex[record.currentStep] else { return (count, count) }
        return ((p.firstIndex(of: si) ?? 0) + 1, count)
    }

    /// Continue accepted the step with its current answers, and they still pass.
    private func isFinished(_ i: Int) -> Bool {
        let step = flow.steps[i]
        guard record.completed.contains(step.id) else { return false }
        return step.kind == .content || errors(of: step, shownOnly: false, plugins: true).isEmpty
    }

    private var isMutable: Bool { record.state != .submitting && record.state != .submitted }

    private func requireMutable() throws(SessionError) {
        switch record.state {
        case .submitting: throw SessionError(.invalidState, "a submit is running; wait for it or cancel it")
        case .submitted: throw SessionError(.invalidState, "the session is submitted; its answers can no longer change")
        case .editing, .review, .failed: return
        }
    }

    private mutating func moveTo(_ i: Int, now: Int64) {
        let step = flow.steps[i]
        record.currentStep = step.id
        if !record.visited.contains(step.id) { record.visited.append(step.id) }
        record.state = .editing
        record.lastError = nil
        record.announcement = announcement(forStep: i, path: route())
        record.updatedAt = now
        scratch.pendingContinue = nil
    }

    private mutating func moveToReview(now: Int64) {
        record.currentStep = Self.reviewID
        record.state = .review
        record.lastError = nil
        record.returningToReview = false
        let (index, count) = progress(route())
        record.announcement = strings.text(.stepAnnouncement, locale: locale,
                                           ["n": String(index), "m": String(count), "title": reviewTitle])
        record.updatedAt = now
        scratch.pendingContinue = nil
    }

    private mutating func settle(receipt: [String: JSONValue], now: Int64) {
        record.state = .submitted
        record.currentStep = Self.completeID
        record.returningToReview = false
        record.lastError = nil
        record.receipt = receipt
        record.submittedAt = record.submittedAt ?? now
        record.announcement = successMessage ?? strings.text(.submitted, locale: locale)
        record.updatedAt = now
        // Settled answers never change again: the secrets are not needed any more.
        scratch.secure = [:]
        scratch.clearVerdicts()
    }

    /// Leaving `failed` by editing: the state follows the position again.
    private mutating func leaveFailedState() {
        guard record.state == .failed else { return }
        record.state = record.currentStep == Self.reviewID ? .review : .editing
        record.lastError = nil
    }

    private func announcement(forStep i: Int, path p: [Int]) -> String {
        let count = p.count + (flow.hasReview ? 1 : 0)
        let index = (p.firstIndex(of: i) ?? 0) + 1
        return strings.text(.stepAnnouncement, locale: locale,
                            ["n": String(index), "m": String(count), "title": flow.steps[i].title.resolve(locale)])
    }

    private var reviewTitle: String {
        flow.review?.title?.resolve(locale) ?? strings.text(.review, locale: locale)
    }

    private var submitLabel: String {
        flow.review?.submitTitle?.resolve(locale) ?? strings.text(.submit, locale: locale)
    }

    /// The receipt's `message`, else the flow's success message.
    private var successMessage: String? {
        if let m = record.receipt?["message"]?.stringValue, !m.isEmpty { return m }
        return flow.submit?.successMessage?.resolve(locale)
    }

    // MARK: - Answers

    /// The field an answer key names: a field id, or `<field>.other` of a
    /// field that offers Other.
    private func answerTarget(_ key: String) -> (field: FieldDefinition, isOther: Bool)? {
        if let f = flow.field(key) { return (f, false) }
        if key.hasSuffix(".other"), let f = flow.field(String(key.dropLast(6))), f.other { return (f, true) }
        return nil
    }

    /// Checks a value's type against its field and normalizes it.
    private func checkValue(_ value: AnswerValue, key: String, field: FieldDefinition, isOther: Bool) throws(SessionError) -> AnswerValue {
        func wrongType() -> SessionError {
            SessionError(.invalidArgs, "\(quoted(key)) is a \(isOther ? "text" : field.type.rawValue) field and takes \(isOther ? "a string" : field.type.valueDescription)")
        }
        // The contract: an empty string or an empty array clears an answer,
        // whatever the field's type.
        if value.isEmpty { return value }
        if isOther {
            guard case .text = value else { throw wrongType() }
            return value
        }
        switch field.type {
        case .text, .multiline, .secure, .email, .date, .time:
            guard case .text = value else { throw wrongType() }
            return value
        case .toggle:
            guard case .bool = value else { throw wrongType() }
            return value
        case .number:
            switch value {
            case .integer: return value
            case .number(let d):
                guard d.isFinite else { throw SessionError(.invalidArgs, "\(quoted(key)) must be a finite number") }
                if d.rounded() == d, abs(d) < 9.0e15 { return .integer(Int64(d)) }
                return value
            default: throw wrongType()
            }
        case .choice:
            guard case .text(let s) = value else { throw wrongType() }
            if s.isEmpty || (s == "other" && field.other) { return value }
            guard hasOption(s, in: field) else {
                throw SessionError(.invalidArgs, "\(quoted(s)) is not an option of \(quoted(key))")
            }
            return value
        case .multichoice:
            guard case .list(let l) = value else { throw wrongType() }
            var seen: Set<String> = []
            for s in l {
                guard hasOption(s, in: field) || (s == "other" && field.other) else {
                    throw SessionError(.invalidArgs, "\(quoted(s)) is not an option of \(quoted(key))")
                }
                guard seen.insert(s).inserted else {
                    throw SessionError(.invalidArgs, "\(quoted(s)) is listed twice in \(quoted(key))")
                }
            }
            return value
        }
    }

    /// True when `id` is one of the options `field` offers now (the
    /// provider's, else the flow's). Only ids are compared: building the
    /// options (``options(of:)``) localizes every label.
    private func hasOption(_ id: String, in field: FieldDefinition) -> Bool {
        if let dynamic = record.dynamicOptions[field.id] { return dynamic.contains { $0.id == id } }
        return field.options.contains { $0.id == id }
    }

    /// Stores (or, for an empty value, clears) one answer. Returns whether it changed.
    @discardableResult
    private mutating func store(_ value: AnswerValue, key: String, field: FieldDefinition) -> Bool {
        if field.type == .secure && key == field.id {
            let new = value.textValue.flatMap { $0.isEmpty ? nil : $0 }
            guard scratch.secure[key] != new else { return false }
            scratch.secure[key] = new
            if new != nil { insertSorted(key, into: &record.secureFieldsSet) } else { remove(key, from: &record.secureFieldsSet) }
            return true
        }
        let new: AnswerValue? = value.isEmpty ? nil : value
        guard record.answers[key] != new else { return false }
        record.answers[key] = new
        return true
    }

    /// A field's answer, secure values included.
    private func storedValue(_ id: String) -> AnswerValue? {
        if let s = scratch.secure[id] { return .text(s) }
        return record.answers[id]
    }

    private func chosenOther(_ v: AnswerValue) -> Bool {
        switch v {
        case .text(let s): return s == "other"
        case .list(let l): return l.contains("other")
        default: return false
        }
    }

    /// One step's non-secure answers, as `StepCompleted` carries them.
    private func answers(of step: StepDefinition) -> [String: AnswerValue] {
        var out: [String: AnswerValue] = [:]
        for f in step.fields where f.type != .secure {
            if f.type == .toggle {
                out[f.id] = record.answers[f.id] ?? .bool(false)
            } else if let v = record.answers[f.id], !isBlank(v) {
                out[f.id] = v
                if f.other, chosenOther(v), let t = record.answers[f.otherKey], !isBlank(t) { out[f.otherKey] = t }
            }
        }
        return out
    }

    // MARK: - Validation

    private var validationContext: ValidationContext {
        let dynamic = record.dynamicOptions
        let locale = self.locale
        return ValidationContext(
            locale: locale, today: clock.today, strings: strings,
            options: { field in
                dynamic[field.id] ?? field.options.map { ChoiceOption(id: $0.id, label: "", icon: nil) }
            })
    }

    /// A step's errors: built-in field rules, then step rules, then (with
    /// `plugins`) cached plugin results. `shownOnly` keeps the fields whose
    /// errors are shown.
    private func errors(of step: StepDefinition, shownOnly: Bool, plugins: Bool) -> FieldErrors {
        guard step.kind == .form else { return [:] }
        var out: FieldErrors = [:]
        let context = validationContext
        let shown = shownOnly ? Set(record.shownErrors) : []
        func visible(_ id: String) -> Bool { !shownOnly || shown.contains(id) }
        for f in step.fields where visible(f.id) {
            if let e = FieldValidation.error(f, value: storedValue(f.id), otherText: record.answers[f.otherKey]?.textValue,
                                             context: context) {
                out[f.id] = e
            } else if plugins, let e = pluginError(f) {
                out[f.id] = e
            }
        }
        if !step.rules.isEmpty {
            let p = route()
            var onPath = Array(repeating: false, count: flow.steps.count)
            for i in p { onPath[i] = true }
            if let si = flow.stepIndex[step.id] { onPath[si] = true }
            let ruleErrors = FieldValidation.stepRuleErrors(
                step,
                answer: { id in
                    guard let loc = flow.fieldLocation[id], onPath[loc.step] else { return nil }
                    if flow.steps[loc.step].fields[loc.field].type == .toggle { return storedValue(id) ?? .bool(false) }
                    return storedValue(id)
                },
                label: { flow.field($0)?.label.resolve(locale) ?? $0 }, context: context)
            for (f, e) in ruleErrors where out[f] == nil && visible(f) { out[f] = e }
        }
        if plugins, let m = record.stepMessages[step.id], m.revision == record.revision {
            for (f, e) in m.messages where out[f] == nil && (f.isEmpty || visible(f)) { out[f] = e }
        }
        return out
    }

    /// The cached plugin verdict on a field's current value, as a message.
    private func pluginError(_ f: FieldDefinition) -> String? {
        guard !f.validators.isEmpty, let v = storedValue(f.id), let verdict = scratch.fieldVerdicts[f.id],
            verdict.value == v
        else { return nil }
        for rule in f.validators {
            switch verdict.results[rule.name] {
            case .rejected(let message)?: return rule.message?.resolve(locale) ?? message
            case .issues(let issues)?:
                if let first = issues.first { return rule.message?.resolve(locale) ?? first.message }
            case .failed?: return strings.text(.checkFailed, locale: locale)
            case .timedOut?: return strings.text(.checkTimeout, locale: locale)
            case .accepted?, nil: continue
            }
        }
        return nil
    }

    /// The field validator calls a field's current value still needs.
    private func fieldChecks(_ f: FieldDefinition, retryFailures: Bool) -> [PluginCheck] {
        guard !f.validators.isEmpty, let v = storedValue(f.id), !isBlank(v),
            FieldValidation.error(f, value: v, otherText: record.answers[f.otherKey]?.textValue,
                                  context: validationContext) == nil,
            let stepID = flow.stepID(ofField: f.id)
        else { return [] }
        let verdict = scratch.fieldVerdicts[f.id].flatMap { $0.value == v ? $0 : nil }
        let info = f.info(locale: locale)
        let answers = answersOnPath(includeSecure: false)
        return f.validators.compactMap { rule -> PluginCheck? in
            switch verdict?.results[rule.name] {
            case .accepted?, .rejected?, .issues?: return nil
            case .failed?, .timedOut?: if !retryFailures { return nil }
            case nil: break
            }
            return PluginCheck(
                validator: rule.name, subject: .field(info, v), stepID: stepID,
                context: pluginContext(answers: answers, options: rule.options), revision: record.revision)
        }
    }

    /// The step validator calls the step still needs at this revision.
    private func stepChecks(_ step: StepDefinition, retryFailures: Bool) -> [PluginCheck] {
        let rules = step.rules.compactMap { rule -> PluginRule? in
            if case .plugin(let p) = rule.kind { return p }
            return nil
        }
        guard !rules.isEmpty else { return [] }
        let verdict = scratch.stepVerdicts[step.id].flatMap { $0.revision == record.revision ? $0 : nil }
        let info = step.info(locale: locale)
        let answers = answersOnPath(includeSecure: false)
        return rules.compactMap { rule -> PluginCheck? in
            switch verdict?.results[rule.name] {
            case .accepted?, .rejected?, .issues?: return nil
            case .failed?, .timedOut?: if !retryFailures { return nil }
            case nil: break
            }
            return PluginCheck(
                validator: rule.name, subject: .step(info), stepID: step.id,
                context: pluginContext(answers: answers, options: rule.options), revision: record.revision)
        }
    }

    private func pluginContext(answers: [String: AnswerValue], options: [String: JSONValue]) -> PluginContext {
        PluginContext(
            flowID: flow.id, sessionID: record.id, locale: locale, callerUID: record.owner, answers: answers,
            options: options, stateDirectory: "")
    }

    /// Turns the step validators' results at this revision into the step's
    /// displayed messages (issue field, or `""` for the step).
    private mutating func recordStepMessages(_ step: StepDefinition) {
        guard let verdict = scratch.stepVerdicts[step.id], verdict.revision == record.revision else {
            record.stepMessages[step.id] = nil
            return
        }
        let fieldIDs = Set(step.fields.map(\.id))
        var messages: [String: String] = [:]
        for rule in step.rules {
            guard case .plugin(let p) = rule.kind else { continue }
            let custom = (rule.message ?? p.message)?.resolve(locale)
            switch verdict.results[p.name] {
            case .issues(let issues)?:
                for issue in issues {
                    let key = issue.field.flatMap { fieldIDs.contains($0) ? $0 : nil } ?? ""
                    if messages[key] == nil { messages[key] = custom ?? issue.message }
                }
            case .rejected(let m)?:
                if messages[""] == nil { messages[""] = custom ?? m }
            case .failed?:
                if messages[""] == nil { messages[""] = strings.text(.checkFailed, locale: locale) }
            case .timedOut?:
                if messages[""] == nil { messages[""] = strings.text(.checkTimeout, locale: locale) }
            case .accepted?, nil:
                continue
            }
        }
        record.stepMessages[step.id] =
            messages.isEmpty ? nil : SessionRecord.StepMessages(revision: record.revision, messages: messages)
    }

    // MARK: - Views

    private func fieldView(_ f: FieldDefinition, error: String) -> FieldView {
        let today = clock.today
        let value = f.type == .secure ? nil : record.answers[f.id]
        return FieldView(
            id: f.id, type: f.type, label: f.label.resolve(locale), help: f.help?.resolve(locale) ?? "",
            placeholder: f.placeholder?.resolve(locale) ?? "", required: f.required,
            options: f.type.isChoice ? options(of: f) : [], other: f.other,
            otherLabel: f.other ? (f.otherLabel?.resolve(locale) ?? strings.text(.other, locale: locale)) : "",
            value: value, otherText: f.other ? record.answers[f.otherKey]?.textValue : nil,
            isSet: storedValue(f.id) != nil, error: error,
            hint: f.type == .multichoice ? strings.text(.selectAllThatApply, locale: locale) : "",
            minLength: f.minLength, maxLength: f.effectiveMaxLength, minimum: f.minimum, maximum: f.maximum, integer: f.integer,
            minSelected: f.minSelected, maxSelected: f.maxSelected,
            after: f.after.map { $0.resolve(today: today).description },
            before: f.before.map { $0.resolve(today: today).description }, mustBeOn: f.mustBeOn)
    }

    /// An answer as Review shows it.
    private func display(_ f: FieldDefinition) -> String {
        let notGiven = strings.text(.notGiven, locale: locale)
        switch f.type {
        case .secure:
            let set = scratch.secure[f.id] != nil || (record.state == .submitted && record.secureFieldsSet.contains(f.id))
            return set ? strings.text(.secureMask, locale: locale) : notGiven
        case .toggle:
            return strings.text(record.answers[f.id]?.boolValue == true ? .yes : .no, locale: locale)
        default:
            break
        }
        guard let v = record.answers[f.id], !isBlank(v) else { return notGiven }
        let options = self.options(of: f)
        func label(_ id: String) -> String {
            if id == "other" && f.other {
                if let t = record.answers[f.otherKey]?.textValue, !isBlank(.text(t)) { return t }
                return f.otherLabel?.resolve(locale) ?? strings.text(.other, locale: locale)
            }
            return options.first { $0.id == id }?.label ?? id
        }
        switch v {
        case .text(let s): return f.type == .choice ? label(s) : s
        case .list(let l): return l.map(label).joined(separator: strings.text(.listSeparator, locale: locale))
        case .bool(let b): return strings.text(b ? .yes : .no, locale: locale)
        case .integer(let i): return String(i)
        case .number(let d): return formatNumber(d)
        }
    }

    // MARK: - Restore

    private mutating func repairAfterRestore() {
        var touchedSteps: Set<String> = []
        // Answers that no longer fit the flow.
        for (key, value) in record.answers {
            guard let target = answerTarget(key), target.field.type != .secure,
                (try? checkShape(value, field: target.field, isOther: target.isOther)) != nil
            else {
                record.answers[key] = nil
                if let s = answerTarget(key).flatMap({ flow.stepID(ofField: $0.field.id) }) { touchedSteps.insert(s) }
                continue
            }
        }
        for key in record.dynamicOptions.keys where flow.field(key)?.optionsFrom == nil {
            record.dynamicOptions[key] = nil
        }
        // Secure values that did not survive (all of them after a restart):
        // their steps must be filled in again.
        if record.state != .submitted {
            for id in record.secureFieldsSet where scratch.secure[id] == nil {
                if let s = flow.stepID(ofField: id) { touchedSteps.insert(s) }
            }
            record.secureFieldsSet = record.secureFieldsSet.filter { scratch.secure[$0] != nil }
        }
        record.visited = record.visited.filter { flow.stepIndex[$0] != nil }
        record.completed = record.completed.filter { flow.stepIndex[$0] != nil && !touchedSteps.contains($0) }
        record.shownErrors = record.shownErrors.filter { flow.field($0) != nil }
        record.stepMessages = record.stepMessages.filter { flow.stepIndex[$0.key] != nil }
        record.flowFingerprint = flow.fingerprint

        // The position must still make sense.
        let p = route()
        let position = record.currentStep
        let valid: Bool
        switch position {
        case Self.completeID: valid = record.state == .submitted
        case Self.reviewID: valid = flow.hasReview && record.state != .submitted
        default: valid = record.state != .submitted && flow.stepIndex[position].map(p.contains) == true
        }
        if record.state == .submitted {
            record.currentStep = Self.completeID
        } else if !valid {
            let target = p.first(where: { !isFinished($0) }) ?? p.last ?? 0
            let step = flow.steps[target]
            record.currentStep = step.id
            if !record.visited.contains(step.id) { record.visited.append(step.id) }
            record.announcement = announcement(forStep: target, path: p)
        }
        switch record.state {
        case .editing, .review:
            record.state = record.currentStep == Self.reviewID ? .review : .editing
        case .submitting, .submitted, .failed:
            break
        }
    }

    /// Like `checkValue`, without the option check (options may have changed).
    private func checkShape(_ value: AnswerValue, field: FieldDefinition, isOther: Bool) throws(SessionError) {
        if isOther {
            guard case .text = value else { throw SessionError(.invalidArgs, "shape") }
            return
        }
        let ok: Bool
        switch (field.type, value) {
        case (.text, .text), (.multiline, .text), (.email, .text), (.date, .text), (.time, .text), (.choice, .text):
            ok = true
        case (.multichoice, .list), (.toggle, .bool), (.number, .integer), (.number, .number):
            ok = true
        default:
            ok = false
        }
        if !ok { throw SessionError(.invalidArgs, "shape") }
    }
}

extension FlowSession: CustomStringConvertible, CustomReflectable {
    /// Names the session and where it is; never an answer.
    public var description: String {
        "FlowSession(\(record.id), flow \(flow.id), \(record.state.rawValue) at \(record.currentStep))"
    }

    /// Hides the answers from `dump` and debuggers' summaries.
    public var customMirror: Mirror {
        Mirror(self, children: ["id": record.id, "flow": flow.id, "state": record.state, "currentStep": record.currentStep])
    }
}

// MARK: - Sorted-array sets

private func insertSorted(_ s: String, into a: inout [String]) {
    var lo = 0
    var hi = a.count
    while lo < hi {
        let mid = (lo + hi) / 2
        if a[mid] < s { lo = mid + 1 } else { hi = mid }
    }
    if lo < a.count && a[lo] == s { return }
    a.insert(s, at: lo)
}

private func remove(_ s: String, from a: inout [String]) {
    a.removeAll { $0 == s }
}
