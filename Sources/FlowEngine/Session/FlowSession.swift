import FlowKit

/// One person's run through a flow: the session state machine.
///
/// A value type with no I/O: the daemon holds it, calls its mutations, persists
/// ``record`` after each, and runs the plugin calls it asks for.
///
/// Navigation model: the *path* is computed from the answers — the first step,
/// then wherever each step's `next` rules lead — so it changes when a branch
/// changes. The session sits on one step of that path (or on Review, or on
/// `complete`). A step is *finished* when Continue accepted it with its
/// current answers and they still pass the built-in rules; changing an answer
/// un-finishes its step.
///
/// The state machine decides; it does not word anything. What the person
/// reads (labels, display values, the step and review pages) comes from
/// ``SessionPresenter``. The few texts the record keeps as they were said —
/// the last announcement, the last submit error, plugin step messages — and
/// the field errors the mutations return are ``SessionMessage``s put into
/// words by ``SessionText`` in the session's locale.
///
/// The code is in one file per concern: the path and moves (`+Route`),
/// Continue, Back and GoTo (`+Navigation`), answers (`+Answers`), the rules
/// and plugin checks (`+Checks`), submitting (`+Submit`) and the repairs
/// after a restore (`+Restore`).
package struct FlowSession: Sendable {
    /// The `currentStepID` of Review.
    package static let reviewID = "review"
    /// The `currentStepID` once submitted.
    package static let completeID = "complete"

    /// The flow this session runs.
    package let flow: FlowDefinition
    /// Everything persistent. Secure values are never in here.
    package internal(set) var record: SessionRecord
    /// True when this session was restored from a record made with another
    /// version of the flow (answers that no longer fit were dropped).
    package private(set) var flowChangedSinceRecord = false

    var scratch = SessionScratch()
    let clock: any EngineClock

    /// The session's locale, normalized.
    var locale: String { record.locale }

    /// Words for the texts the session keeps and returns, in its locale,
    /// with the answers piped into the flow's texts.
    var words: SessionText { words(in: record.locale) }

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
    package init(
        flow: FlowDefinition, id: String, owner: UInt32, locale: String, clock: any EngineClock,
        prefill: [String: AnswerValue] = [:], dynamicOptions: [String: [ChoiceOption]] = [:]
    ) throws(SessionError) {
        guard let normalized = LocaleFallback.requested(locale) else {
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
            guard target.field.type != .computed else { throw computedField(key) }
            checked.append((key, target.field, try checkValue(value, key: key, field: target.field, isOther: target.isOther)))
        }
        for item in checked { store(item.value, key: item.key, field: item.field) }
        announce(arrival(atStep: 0, path: route()))
        record.announcedWarnings = currentWarnings()
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
    package init(restoring record: SessionRecord, flow: FlowDefinition, clock: any EngineClock) throws(SessionError) {
        try self.init(restoring: record, flow: flow, clock: clock, secure: [:])
    }

    /// This session on another version of its flow (after the daemon
    /// reloaded the flow file): as if restored from its record with `flow`,
    /// except that the secure answers held in memory are kept for fields that
    /// are still secure, so a reload does not make the person type a password
    /// again.
    ///
    /// - Throws: `incompatibleRecord` when `flow` is another flow.
    package func rebased(onto flow: FlowDefinition) throws(SessionError) -> FlowSession {
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
    package var holdsSecureAnswers: Bool { !scratch.secure.isEmpty }

    /// `editing`, `review`, `submitting`, `submitted` or `failed`.
    package var state: SessionState { record.state }

    /// A step id, `review` or `complete`.
    package var currentStepID: String { record.currentStep }

    /// N of "Step N of M", from 1 along the path; M on Review and once complete.
    package var stepIndex: Int { progress(route()).index }

    /// M of "Step N of M": the predicted path's length, Review included.
    package var stepCount: Int { progress(route()).count }

    /// False on the first step, while submitting and once submitted.
    package var canGoBack: Bool { canGoBack(route: route()) }

    /// Whether Continue can succeed now as far as the built-in rules and the
    /// cached plugin results tell.
    package var canContinue: Bool { canContinue(in: resolve()) }

    /// ``canContinue`` on `r`, a resolution of the current answers (with or
    /// without the current step included: the step's rules are checked on a
    /// resolution that covers it either way), so that a page or a property
    /// snapshot that already has one does not work out the path again.
    @inline(__always) func canContinue(in r: Resolution) -> Bool { canContinue(in: r, at: flow.stepIndex[record.currentStep]) }

    /// ``canContinue(in:)`` with the current step's index (``progress(_:at:)``).
    func canContinue(in r: Resolution, at current: Int?) -> Bool {
        guard isMutable else { return false }
        if record.currentStep == Self.reviewID { return true }
        guard let i = current else { return false }
        let step = flow.steps[i]
        return step.kind == .content || issues(of: step, shownOnly: false, plugins: true, in: r).isEmpty
    }

    /// True after an Edit from Review, until the session is back there.
    package var returningToReview: Bool { record.returningToReview }

    /// The last submit failure's localized message.
    package var lastError: String? { record.lastError }

    /// The last announcement: "Step 2 of 4, Day and time", "Sending…", a
    /// submit's outcome, or "Not sent".
    package var announcement: String { record.announcement }

    /// Counts the announcements made (``SessionRecord/announcementSequence``):
    /// a host signals `Announcement` when this changes, once per event.
    package var announcementSequence: UInt64 { record.announcementSequence }
}

extension FlowSession: CustomStringConvertible, CustomReflectable {
    /// Names the session and where it is; never an answer.
    package var description: String {
        "FlowSession(\(record.id), flow \(flow.id), \(record.state.rawValue) at \(record.currentStep))"
    }

    /// Hides the answers from `dump` and debuggers' summaries.
    package var customMirror: Mirror {
        Mirror(self, children: ["id": record.id, "flow": flow.id, "state": record.state, "currentStep": record.currentStep])
    }
}
