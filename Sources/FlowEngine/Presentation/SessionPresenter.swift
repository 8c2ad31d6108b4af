import FlowKit

/// What a session looks like to the person: the step page, the Review page,
/// the progress line, with every label and value in words.
///
/// A pure function of (session, built-in strings, locale, the plugins' rule
/// descriptions): it reads the session and never changes it, so the same
/// session can be shown in any locale. The texts the session kept as they were said (the announcement
/// after a move to Review or a submit, plugin step messages, the last
/// submit error) stay in the session's own locale.
///
/// Everything a client shows that is not the state machine's business lives
/// here: labels, hints, display values of answers, the wording of errors.
package struct SessionPresenter {
    /// The session shown.
    package let session: FlowSession
    /// The words, in the locale shown.
    package let words: SessionText
    /// What plugin validators said of their rules, by where the flow names
    /// them (empty unless given for this flow version and locale).
    let descriptions: [ValidatorSite: String]

    /// Shows `session` in `locale` (its own when nil), with `strings` as
    /// flowd's built-in strings and `descriptions` as the plugin validators'
    /// own (``RuleDescriptions``; ignored unless they were made for this
    /// version of the flow in this locale).
    package init(
        _ session: FlowSession, locale: String? = nil, strings: Strings = .builtin, descriptions: RuleDescriptions = .none
    ) {
        self.session = session
        let words = SessionText(locale: locale.map(LocaleFallback.normalize) ?? session.record.locale, strings: strings)
        self.words = words
        let fits = descriptions.flowFingerprint == session.flow.fingerprint && descriptions.locale == words.locale
        self.descriptions = fits ? descriptions.texts : [:]
    }

    var flow: FlowDefinition { session.flow }
    private var record: SessionRecord { session.record }
    var locale: String { words.locale }

    // MARK: Pages

    /// Everything `GetStep` returns for the current step.
    package func step() -> StepView {
        let p = session.route()
        let (index, count) = session.progress(p)
        let canGoBack = session.canGoBack(route: p)
        let canContinue = session.canContinue
        let progressLabel = words(.builtin(.stepCounter, ["n": .verbatim(String(index)), "m": .verbatim(String(count))]))
        let summary = self.summary
        // The last submit's failure, while the session is `failed`.
        let submitError = record.state == .failed ? record.lastError : nil
        func page(
            id: String, kind: StepView.Kind, title: String, description: String = "", body: String = "",
            icon: String = "", fields: [FieldView] = [], error: String, announcement: String, continueLabel: String,
            canGoBack: Bool, canContinue: Bool, ruleHints: [RuleHint] = []
        ) -> StepView {
            StepView(
                id: id, kind: kind, title: title, description: description, body: body, icon: icon, fields: fields,
                error: error, announcement: announcement, index: index, count: count, continueLabel: continueLabel,
                backLabel: backLabel, canGoBack: canGoBack, canContinue: canContinue, progressLabel: progressLabel,
                retryLabel: words(.builtin(.tryAgain)), cancelLabel: words(.builtin(.cancel)),
                submittingLabel: words(.builtin(.submitting)), notSentLabel: words(.builtin(.notSent)),
                optionalLabel: words(.builtin(.optional)), flowTitle: summary.title,
                flowDescription: summary.description, locale: locale, effectiveLocale: summary.locale,
                ruleHints: ruleHints)
        }
        if record.currentStep == FlowSession.reviewID {
            return page(
                id: FlowSession.reviewID, kind: .review, title: words(session.reviewTitle),
                description: flow.review?.note?.resolve(locale) ?? "", error: submitError ?? "",
                announcement: record.announcement, continueLabel: submitLabel, canGoBack: canGoBack,
                canContinue: canContinue)
        }
        guard let si = flow.stepIndex[record.currentStep] else {
            return page(
                id: FlowSession.completeID, kind: .complete, title: words(.builtin(.submitted)),
                body: session.successMessage.map(words.callAsFunction) ?? "", error: "",
                announcement: record.announcement, continueLabel: "", canGoBack: false, canContinue: false)
        }
        let step = flow.steps[si]
        let shown = words(session.issues(of: step, shownOnly: true, plugins: true))
        return page(
            id: step.id, kind: step.kind == .content ? .content : .form, title: step.title.resolve(locale),
            description: step.description?.resolve(locale) ?? "", body: step.body?.resolve(locale) ?? "",
            icon: step.icon ?? "", fields: step.fields.map { fieldView($0, on: step, error: shown[$0.id] ?? "") },
            error: submitError ?? shown[""] ?? "", announcement: words(session.arrival(atStep: si, path: p)),
            continueLabel: continueLabel(route: p, isFinished: session.isFinished), canGoBack: canGoBack,
            canContinue: canContinue, ruleHints: ruleHints(of: step))
    }

    /// The Review page: one group per form step on the path. Works in any
    /// state (and for a flow without Review, for tools).
    package func review() -> ReviewView {
        let p = session.route()
        let settled = record.state == .submitted
        var groups: [ReviewGroup] = []
        for i in p where flow.steps[i].kind == .form {
            let step = flow.steps[i]
            let finished = settled || session.isFinished(i)
            let title = step.title.resolve(locale)
            groups.append(ReviewGroup(
                step: step.id, title: title, finished: finished,
                status: finished ? "" : words(.builtin(.notFinished)),
                editLabel: words(.builtin(.edit, ["step": .verbatim(title)])),
                answers: step.fields.map {
                    ReviewAnswer(field: $0.id, label: $0.label.resolve(locale), display: display($0))
                }))
        }
        return ReviewView(
            title: words(session.reviewTitle), groups: groups, note: flow.review?.note?.resolve(locale) ?? "",
            submitLabel: submitLabel, canSubmit: p.allSatisfy(session.isFinished))
    }

    /// The flow's title and description in the locale shown, and the flow
    /// locale they resolved to.
    package var summary: LocalizedFlowSummary { flow.summary(locale: locale) }

    // MARK: Progress

    /// The path-dependent values, with the path predicted once and each
    /// step's "finished" worked out once.
    package func progress() -> ProgressSnapshot {
        let p = session.route()
        var known: [Int: Bool] = [:]
        let finished = { (i: Int) -> Bool in
            if let f = known[i] { return f }
            let f = session.isFinished(i)
            known[i] = f
            return f
        }
        let (index, count) = session.progress(p)
        return ProgressSnapshot(
            stepIndex: index, stepCount: count, canGoBack: session.canGoBack(route: p),
            canContinue: session.canContinue, continueLabel: continueLabel(route: p, isFinished: finished),
            path: path(route: p, isFinished: finished))
    }

    /// "Continue", "Back to review", the flow's finish title, or the submit
    /// label on Review.
    package var continueLabel: String {
        continueLabel(route: session.route(), isFinished: session.isFinished)
    }

    /// The localized Back label.
    package var backLabel: String { words(.builtin(.back)) }

    /// The predicted path with each entry's status, Review last.
    package var path: [PathEntry] {
        path(route: session.route(), isFinished: session.isFinished)
    }

    private func continueLabel(route p: [Int], isFinished: (Int) -> Bool) -> String {
        switch session.continueTarget(route: p, isFinished: isFinished) {
        case nil: return ""
        case .submit?: return submitLabel
        case .nextStep?: return words(.builtin(.continue))
        case .backToReview?: return words(.builtin(.backToReview))
        case .finish?: return flow.finishTitle?.resolve(locale) ?? words(.builtin(.finish))
        }
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
                settled ? .done : (record.currentStep == FlowSession.reviewID ? .current : .upcoming)
            out.append(PathEntry(id: FlowSession.reviewID, title: words(session.reviewTitle), status: status))
        }
        return out
    }

    private var submitLabel: String {
        flow.review?.submitTitle?.resolve(locale) ?? words(.builtin(.submit))
    }

    // MARK: Fields and answers

    /// The options a choice field offers now: the provider's (in the
    /// session's locale, as the provider gave them), or the flow's.
    package func options(of field: FieldDefinition) -> [ChoiceOption] {
        if let dynamic = record.dynamicOptions[field.id] { return dynamic }
        return field.options.map { ChoiceOption(id: $0.id, label: $0.label.resolve(locale), icon: $0.icon) }
    }

    private func fieldView(_ f: FieldDefinition, on step: StepDefinition, error: String) -> FieldView {
        let today = session.clock.today
        let value = f.type == .secure ? nil : record.answers[f.id]
        return FieldView(
            id: f.id, type: f.type, label: f.label.resolve(locale), help: f.help?.resolve(locale) ?? "",
            placeholder: f.placeholder?.resolve(locale) ?? "", required: session.isRequiredNow(f, on: step),
            options: f.type.isChoice ? options(of: f) : [], other: f.other,
            otherLabel: f.other ? otherLabel(f) : "",
            value: value, otherText: f.other ? record.answers[f.otherKey]?.textValue : nil,
            isSet: session.storedValue(f.id) != nil, error: error,
            hint: f.type == .multichoice ? words(.builtin(.selectAllThatApply)) : "",
            minLength: f.minLength, maxLength: f.effectiveMaxLength, minimum: f.minimum, maximum: f.maximum, integer: f.integer,
            minSelected: f.minSelected, maxSelected: f.maxSelected,
            after: f.after.map { $0.resolve(today: today).description },
            before: f.before.map { $0.resolve(today: today).description }, mustBeOn: f.mustBeOn,
            yesLabel: f.type == .toggle ? words(.builtin(.yes)) : "", noLabel: f.type == .toggle ? words(.builtin(.no)) : "",
            patternHint: patternHint(f),
            conditionallyRequired: !f.required && step.rules.contains { rule in
                if case .requiredIf(let target, _) = rule.kind { return target == f.id }
                return false
            },
            ruleHints: ruleHints(of: f, on: step))
    }

    func otherLabel(_ f: FieldDefinition) -> String {
        f.otherLabel?.resolve(locale) ?? words(.builtin(.other))
    }

    /// An answer as Review shows it.
    private func display(_ f: FieldDefinition) -> String {
        let notGiven = words(.builtin(.notGiven))
        switch f.type {
        case .secure:
            let set = session.storedValue(f.id) != nil
                || (record.state == .submitted && record.secureFieldsSet.contains(f.id))
            return set ? words(.builtin(.secureMask)) : notGiven
        case .toggle:
            return words(.builtin(record.answers[f.id]?.boolValue == true ? .yes : .no))
        default:
            break
        }
        guard let v = record.answers[f.id], !isBlank(v) else { return notGiven }
        let options = self.options(of: f)
        func label(_ id: String) -> String {
            if id == "other" && f.other {
                if let t = record.answers[f.otherKey]?.textValue, !isBlank(.text(t)) { return t }
                return otherLabel(f)
            }
            return options.first { $0.id == id }?.label ?? id
        }
        switch v {
        case .text(let s): return f.type == .choice ? label(s) : s
        case .list(let l): return l.map(label).joined(separator: words(.builtin(.listSeparator)))
        case .bool(let b): return words(.builtin(b ? .yes : .no))
        case .integer(let i): return String(i)
        case .number(let d): return formatNumber(d)
        }
    }
}

// The session's reads that are words, in its own locale: what `GetStep`,
// `GetReview` and the session's properties return.
extension FlowSession {
    /// Everything `GetStep` returns for the current step.
    public func currentStep() -> StepView { SessionPresenter(self).step() }

    /// The current step with the plugin validators' descriptions of their
    /// rules (asked for once per flow and locale: ``RuleDescriptions``).
    package func currentStep(descriptions: RuleDescriptions) -> StepView {
        SessionPresenter(self, descriptions: descriptions).step()
    }

    /// The Review page: one group per form step on the path. Works in any
    /// state (and for a flow without Review, for tools).
    public func review() -> ReviewView { SessionPresenter(self).review() }

    /// "Continue", "Back to review", the flow's finish title, or the submit
    /// label on Review.
    public var continueLabel: String { SessionPresenter(self).continueLabel }

    /// The localized Back label.
    public var backLabel: String { SessionPresenter(self).backLabel }

    /// The flow's title and description in the session's locale, and the
    /// flow locale they resolved to.
    package var flowSummary: LocalizedFlowSummary { SessionPresenter(self).summary }

    /// The predicted path with each entry's status, Review last.
    public var path: [PathEntry] { SessionPresenter(self).path }

    /// ``stepIndex``, ``stepCount``, ``canGoBack``, ``canContinue``,
    /// ``continueLabel`` and ``path`` at once: the same values, with the path
    /// predicted once and each step's "finished" worked out once. A host
    /// that reads them all after every change (flowd does, to announce what
    /// changed) should use this.
    public var progressSnapshot: ProgressSnapshot { SessionPresenter(self).progress() }

    /// The options a choice field offers now: the provider's, or the flow's,
    /// with labels in the session's locale.
    public func options(of field: FieldDefinition) -> [ChoiceOption] { SessionPresenter(self).options(of: field) }
}
