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
        let words = session.words(in: locale.map(LocaleFallback.normalize) ?? session.record.locale, strings: strings)
        self.words = words
        let fits = descriptions.flowFingerprint == session.flow.fingerprint && descriptions.locale == words.locale
        self.descriptions = fits ? descriptions.texts : [:]
    }

    var flow: FlowDefinition { session.flow }
    private var record: SessionRecord { session.record }
    var locale: String { words.locale }
    /// The flow's texts in the locale shown that depend on nothing else.
    var texts: LocalizedFlowTexts { flow.localized(locale) }

    // MARK: Pages

    /// Everything `GetStep` returns for the current step: only the fields
    /// that are shown. The general way, for any locale, strings and rule
    /// descriptions; ``FlowSession/currentStep()`` makes the same page from
    /// texts kept per flow and locale.
    package func step() -> StepView {
        let r = session.resolve(including: flow.stepIndex[record.currentStep])
        let p = r.route
        let (index, count) = session.progress(p)
        let canGoBack = session.canGoBack(route: p)
        let canContinue = session.canContinue(in: r)
        let progressLabel = words(.builtin(.stepCounter, ["n": .verbatim(String(index)), "m": .verbatim(String(count))]))
        let summary = self.summary
        // The last submit's failure, while the session is `failed`.
        let submitError = record.state == .failed ? record.lastError : nil
        func page(
            id: String, kind: StepView.Kind, title: String, description: String = "", body: String = "",
            icon: String = "", fields: [FieldView] = [], error: String, warning: String = "", announcement: String,
            continueLabel: String, canGoBack: Bool, canContinue: Bool, ruleHints: [RuleHint] = []
        ) -> StepView {
            StepView(
                id: id, kind: kind, title: title, description: description, body: body, icon: icon, fields: fields,
                error: error, warning: warning, announcement: announcement, index: index, count: count,
                continueLabel: continueLabel,
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
                description: flow.review?.note.map { words(.piped($0)) } ?? "", error: submitError ?? "",
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
        let found = session.findings(of: step, shownOnly: true, plugins: true, in: r)
        let errors = words(found.errors)
        let warnings = words(found.warnings)
        return page(
            id: step.id, kind: step.kind == .content ? .content : .form, title: words.piped(texts.stepTitles[si]),
            description: step.description.map { words(.piped($0)) } ?? "",
            body: step.body.map { words(.piped($0)) } ?? "", icon: step.icon ?? "",
            fields: step.fields.filter(r.shows).map {
                fieldView($0, on: step, in: r, error: errors[$0.id] ?? "", warning: warnings[$0.id] ?? "")
            },
            error: submitError ?? errors[""] ?? "", warning: warnings[""] ?? "",
            announcement: words(session.arrival(atStep: si, path: p)),
            continueLabel: continueLabel(route: p, isFinished: session.finishedSteps(r)), canGoBack: canGoBack,
            canContinue: canContinue, ruleHints: ruleHints(of: step))
    }

    /// The Review page: one group per form step on the path. Works in any
    /// state (and for a flow without Review, for tools).
    package func review() -> ReviewView {
        let r = session.resolve()
        let p = r.route
        let settled = record.state == .submitted
        let isFinished = session.finishedSteps(r)
        var groups: [ReviewGroup] = []
        for i in p where flow.steps[i].kind == .form {
            let step = flow.steps[i]
            let finished = settled || isFinished(i)
            let title = words(.piped(step.title))
            groups.append(ReviewGroup(
                step: step.id, title: title, finished: finished,
                status: finished ? "" : words(.builtin(.notFinished)),
                editLabel: words(.builtin(.edit, ["step": .verbatim(title)])),
                answers: step.fields.filter(r.shows).map {
                    ReviewAnswer(field: $0.id, label: words(.piped($0.label)), display: display($0, in: r))
                }))
        }
        return ReviewView(
            title: words(session.reviewTitle), groups: groups, note: flow.review?.note.map { words(.piped($0)) } ?? "",
            submitLabel: submitLabel, canSubmit: p.allSatisfy(isFinished))
    }

    /// The flow's title and description in the locale shown, and the flow
    /// locale they resolved to.
    package var summary: LocalizedFlowSummary { flow.summary(locale: locale) }

    // MARK: Progress

    /// The path-dependent values, with the path predicted once and each
    /// step's "finished" worked out once; `canContinue`, when the caller
    /// knows it, is not worked out again.
    package func progress(canContinue known: Bool? = nil) -> ProgressSnapshot {
        let r = session.resolve()
        let p = r.route
        let finished = session.finishedSteps(r)
        let (index, count) = session.progress(p)
        return ProgressSnapshot(
            stepIndex: index, stepCount: count, canGoBack: session.canGoBack(route: p),
            canContinue: known ?? session.canContinue(in: r), continueLabel: continueLabel(route: p, isFinished: finished),
            path: path(route: p, isFinished: finished), visibleFields: session.visibleFieldIDs(in: r))
    }

    /// "Continue", "Back to review", the flow's finish title, or the submit
    /// label on Review.
    package var continueLabel: String {
        let r = session.resolve()
        return continueLabel(route: r.route, isFinished: session.finishedSteps(r))
    }

    /// The localized Back label.
    package var backLabel: String { words(.builtin(.back)) }

    /// The predicted path with each entry's status, Review last.
    package var path: [PathEntry] {
        let r = session.resolve()
        return path(route: r.route, isFinished: session.finishedSteps(r))
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
        let titles = texts.stepTitles
        return session.pathEntries(
            route: p, isFinished: isFinished, title: { words.piped(titles[$0]) },
            reviewTitle: { words(session.reviewTitle) })
    }

    private var submitLabel: String {
        flow.review?.submitTitle?.resolve(locale) ?? words(.builtin(.submit))
    }

    // MARK: Fields and answers

    /// The options a choice field offers now: the provider's (in the
    /// session's locale, as the provider gave them), or the flow's.
    package func options(of field: FieldDefinition) -> [ChoiceOption] {
        if let dynamic = record.dynamicOptions[field.id] { return dynamic }
        if let kept = texts.options[field.id] { return kept }
        return field.options.map { ChoiceOption(id: $0.id, label: $0.label.resolve(locale), icon: $0.icon) }
    }

    private func fieldView(
        _ f: FieldDefinition, on step: StepDefinition, in r: Resolution, error: String, warning: String
    ) -> FieldView {
        let today = session.clock.today
        let value = session.pageValue(f, in: r)
        return FieldView(
            id: f.id, type: f.type, label: words(.piped(f.label)), help: f.help.map { words(.piped($0)) } ?? "",
            placeholder: f.placeholder.map { words(.piped($0)) } ?? "", required: session.isRequiredNow(f, on: step, in: r),
            options: f.type.isChoice ? options(of: f) : [], other: f.other,
            otherLabel: f.other ? otherLabel(f) : "",
            value: value, otherText: session.otherText(of: f),
            isSet: value != nil || session.storedValue(f.id) != nil, error: error, warning: warning,
            display: f.type == .computed ? session.displayValue(f, in: r, words: words) ?? "" : "",
            hint: f.type == .multichoice ? words(.builtin(.selectAllThatApply)) : "",
            minLength: f.minLength, maxLength: f.effectiveMaxLength, minimum: f.minimum, maximum: f.maximum, integer: f.integer,
            minSelected: f.minSelected, maxSelected: f.maxSelected,
            after: f.after.map { $0.resolve(today: today).description },
            before: f.before.map { $0.resolve(today: today).description }, mustBeOn: f.mustBeOn,
            yesLabel: f.type == .toggle ? words(.builtin(.yes)) : "", noLabel: f.type == .toggle ? words(.builtin(.no)) : "",
            patternHint: patternHint(f),
            conditionallyRequired: !f.required && step.rules.contains { rule in
                if case .requiredIf(let target, _) = rule.kind { return target == f.id && rule.level == .error }
                return false
            },
            ruleHints: ruleHints(of: f, on: step))
    }

    func otherLabel(_ f: FieldDefinition) -> String {
        f.otherLabel?.resolve(locale) ?? words(.builtin(.other))
    }

    /// An answer as Review shows it: its words, a mask for a secure value
    /// that is set, "Not given" for the rest.
    private func display(_ f: FieldDefinition, in r: Resolution) -> String {
        if f.type == .secure {
            let set = session.storedValue(f.id) != nil
                || (record.state == .submitted && record.secureFieldsSet.contains(f.id))
            return words(.builtin(set ? .secureMask : .notGiven))
        }
        return session.displayValue(f, in: r, words: words) ?? words(.builtin(.notGiven))
    }
}

// The session's reads that are words, in its own locale: what `GetStep`,
// `GetReview` and the session's properties return.
extension FlowSession {
    /// The current step with the plugin validators' descriptions of their
    /// rules (asked for once per flow and locale: ``RuleDescriptions``).
    package func currentStep(descriptions: RuleDescriptions) -> StepView {
        SessionPresenter(self, descriptions: descriptions).step()
    }

    /// The Review page: one group per form step on the path. Works in any
    /// state (and for a flow without Review, for tools).
    package func review() -> ReviewView { SessionPresenter(self).review() }

    /// "Continue", "Back to review", the flow's finish title, or the submit
    /// label on Review.
    package var continueLabel: String { SessionPresenter(self).continueLabel }

    /// The localized Back label.
    package var backLabel: String { SessionPresenter(self).backLabel }

    /// The flow's title and description in the session's locale, and the
    /// flow locale they resolved to.
    package var flowSummary: LocalizedFlowSummary { SessionPresenter(self).summary }

    /// The predicted path with each entry's status, Review last.
    package var path: [PathEntry] { SessionPresenter(self).path }

    /// The ids of the current step's fields that are shown (format 2
    /// `visibleIf`), in order; empty off a form step. What the
    /// `VisibleFields` property says, so a window hears when one appears.
    package var visibleFieldIDs: [String] {
        guard let i = flow.stepIndex[record.currentStep], flow.steps[i].kind == .form, flow.hasFieldLogic else {
            return visibleFieldIDs(in: nil)
        }
        return visibleFieldIDs(in: resolve(including: i))
    }

    /// ``visibleFieldIDs`` on `r`, a resolution of the current answers (nil
    /// when the flow has no field logic and none was needed).
    @inline(__always) func visibleFieldIDs(in r: Resolution?) -> [String] { visibleFieldIDs(in: r, at: flow.stepIndex[record.currentStep]) }

    /// ``visibleFieldIDs(in:)`` with the current step's index (``progress(_:at:)``).
    func visibleFieldIDs(in r: Resolution?, at current: Int?) -> [String] {
        guard let i = current, flow.steps[i].kind == .form else { return [] }
        let step = flow.steps[i]
        guard flow.hasFieldLogic, let r else { return step.fields.map(\.id) }
        let shown = covering(step, r)
        return step.fields.filter(shown.shows).map(\.id)
    }

    /// ``stepIndex``, ``stepCount``, ``canGoBack``, ``canContinue``,
    /// ``continueLabel`` and ``path`` at once: the same values, with the path
    /// predicted once and each step's "finished" worked out once. A host
    /// that reads them all after every change (flowd does, to announce what
    /// changed) should use this.
    package var progressSnapshot: ProgressSnapshot { progressSnapshot(canContinue: nil) }

    /// ``progressSnapshot`` with ``canContinue`` as the caller worked it out
    /// (``SetAnswersResult/canContinue``), when it did, and `finishedStep` a
    /// step the caller knows to be finished (Continue accepted it: its
    /// checks are not run again for its status on the path).
    ///
    /// The titles and labels come from the page texts kept per flow and
    /// locale (``PageTexts``), so no presenter is made and no word looked up:
    /// the session's words only when a title pipes answers. A locale past
    /// the cache's bound takes the general way (``SessionPresenter/progress(canContinue:)``),
    /// which this equals value for value.
    package func progressSnapshot(canContinue known: Bool?, finishedStep: String? = nil) -> ProgressSnapshot {
        guard let page = flow.pageTexts.kept(for: record.locale, make: { SessionPresenter(self).pageTexts() }) else {
            return SessionPresenter(self).progress(canContinue: known)
        }
        let r = resolve()
        let p = r.route
        // Each step's "finished" worked out once, kept in two bit sets (a
        // flow has at most a few dozen steps; past 64 it is worked out on
        // each question): the escaping closure of ``finishedSteps(_:)``
        // held a copy of the session and an array, made and freed per snapshot.
        var decided: UInt64 = 0
        var finishedBits: UInt64 = 0
        if let finishedStep, let i = flow.stepIndex[finishedStep], i < 64 {
            decided = 1 << UInt64(i)
            finishedBits = decided
        }
        func finished(_ i: Int) -> Bool {
            guard i < 64 else { return isFinished(i, in: r) }
            let bit: UInt64 = 1 << UInt64(i)
            if decided & bit != 0 { return finishedBits & bit != 0 }
            let f = isFinished(i, in: r)
            decided |= bit
            if f { finishedBits |= bit }
            return f
        }
        // The current step's index, looked up once for all that follows.
        let current = flow.stepIndex[record.currentStep]
        let (index, count) = progress(p, at: current)
        var made: SessionText?
        func say(_ text: PageText) -> String {
            guard text.pipes else { return text.text }
            if let made { return made.piped(text.text) }
            let new = words
            made = new
            return new.piped(text.text)
        }
        return ProgressSnapshot(
            stepIndex: index, stepCount: count, canGoBack: canGoBack(route: p, at: current),
            canContinue: known ?? canContinue(in: r, at: current),
            continueLabel: page.continueLabel(continueTarget(route: p, at: current, isFinished: finished)),
            path: pathEntries(
                route: p, at: current, isFinished: finished, title: { say(page.steps[$0].title) },
                reviewTitle: { say(page.reviewTitle) }),
            visibleFields: visibleFieldIDs(in: r, at: current))
    }

    /// The predicted path `p` with each entry's status, Review last, with
    /// `title(i)` as step `i`'s title and `reviewTitle()` as Review's.
    func pathEntries(
        route p: [Int], isFinished: (Int) -> Bool, title: (Int) -> String, reviewTitle: () -> String
    ) -> [PathEntry] {
        pathEntries(
            route: p, at: flow.stepIndex[record.currentStep], isFinished: isFinished, title: title, reviewTitle: reviewTitle)
    }

    /// ``pathEntries(route:isFinished:title:reviewTitle:)`` with the current
    /// step's index (``progress(_:at:)``).
    func pathEntries(
        route p: [Int], at current: Int?, isFinished: (Int) -> Bool, title: (Int) -> String, reviewTitle: () -> String
    ) -> [PathEntry] {
        let settled = record.state == .submitted
        let hasReview = flow.hasReview
        var out: [PathEntry] = []
        out.reserveCapacity(p.count + (hasReview ? 1 : 0))
        for i in p {
            let status: PathEntry.Status =
                settled ? .done : (i == current ? .current : (isFinished(i) ? .done : .upcoming))
            out.append(PathEntry(id: flow.steps[i].id, title: title(i), status: status))
        }
        if hasReview {
            let status: PathEntry.Status =
                settled ? .done : (record.currentStep == FlowSession.reviewID ? .current : .upcoming)
            out.append(PathEntry(id: FlowSession.reviewID, title: reviewTitle(), status: status))
        }
        return out
    }

    /// The options a choice field offers now: the provider's, or the flow's,
    /// with labels in the session's locale.
    package func options(of field: FieldDefinition) -> [ChoiceOption] { SessionPresenter(self).options(of: field) }
}
