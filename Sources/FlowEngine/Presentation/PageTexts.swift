import FlowKit
import Synchronization

/// The parts of a flow's step pages that depend only on the flow definition,
/// the step and the locale: titles, labels, hints, the flow's options, the
/// built-in button labels, the templates of the progress line. Made once per
/// flow definition and locale (``FlowDefinition/pageTexts``) and shared by
/// every session of the flow, so a session costs no more memory; a page
/// (``FlowSession/currentStep()``) fills in only what the session decides.
///
/// What holds answers is kept as the template they are piped into
/// (``PageText``); what can name the session's own options (a `requiredIf`
/// hint about a choice) is left to each page.
///
/// A class: the cache hands it out by one reference (a struct of a dozen
/// strings was copied, and released, on every page).
final class PageTexts: Sendable {
    let back: String
    let retry: String
    let cancel: String
    let submitting: String
    let notSent: String
    let optional: String
    /// The four things Continue can say (``SessionPresenter`` `continueLabel`).
    let next: String
    let backToReview: String
    let submit: String
    let finish: String
    /// The Review entry's title on the path (``FlowSession/reviewTitle``).
    let reviewTitle: PageText
    /// "Step {n} of {m}".
    let stepCounter: FillTemplate
    /// "Step {n} of {m}, {title}".
    let stepAnnouncement: FillTemplate
    /// The flow's title and description, and the flow locale they resolved to.
    let summary: LocalizedFlowSummary
    /// By step index.
    let steps: [StepTexts]
    /// The bytes of the page entries made of this object's texts alone,
    /// once a writer has made them (``KeptPageBytes``).
    let sharedBytes = KeptPageBytes()

    init(
        back: String, retry: String, cancel: String, submitting: String, notSent: String, optional: String, next: String,
        backToReview: String, submit: String, finish: String, reviewTitle: PageText, stepCounter: FillTemplate,
        stepAnnouncement: FillTemplate, summary: LocalizedFlowSummary, steps: [StepTexts]
    ) {
        self.back = back
        self.retry = retry
        self.cancel = cancel
        self.submitting = submitting
        self.notSent = notSent
        self.optional = optional
        self.next = next
        self.backToReview = backToReview
        self.submit = submit
        self.finish = finish
        self.reviewTitle = reviewTitle
        self.stepCounter = stepCounter
        self.stepAnnouncement = stepAnnouncement
        self.summary = summary
        self.steps = steps
    }

    /// What Continue says when it leads to `target` (nil: once complete).
    func continueLabel(_ target: FlowSession.ContinueTarget?) -> String {
        switch target {
        case nil: return ""
        case .submit?: return submit
        case .nextStep?: return next
        case .backToReview?: return backToReview
        case .finish?: return finish
        }
    }
}

/// Bytes that a writer of pages (`GetStep`'s reply) makes once from the
/// texts every page of a flow in a locale shows alike, and keeps with
/// those texts (``PageTexts``): the built-in labels, the flow's title and
/// description, the locale asked for (the key of the texts) and the one
/// they resolved to. The engine never reads them: their format is the
/// writer's (``StepView/shared``; docs/performance.md, "The ninth round").
package final class KeptPageBytes: Sendable {
    /// What is kept.
    package enum State: Sendable {
        case unmade
        case made([UInt8])
        /// The writer could not make them (a text it cannot send): it
        /// writes each page's texts itself, as without this.
        case refused
    }

    private let kept = Mutex<State>(.unmade)

    init() {}

    /// What is kept now.
    package var state: State { kept.withLock { $0 } }

    /// Keeps `bytes` (nil: the writer could not make them). Two first
    /// pages at once make the same bytes; either is kept.
    package func keep(_ bytes: [UInt8]?) {
        kept.withLock { $0 = bytes.map { .made($0) } ?? .refused }
    }
}

/// One step's texts in one locale (``PageTexts``).
struct StepTexts: Sendable {
    let title: PageText
    let description: PageText
    let body: PageText
    let ruleHints: [RuleHint]
    /// By field index on the step.
    let fields: [FieldTexts]
}

/// One field's texts in one locale, and what its page entry says that no
/// answer changes (``PageTexts``). A class, as ``PageTexts`` is: a page
/// holds it by one reference instead of copying each of its texts.
final class FieldTexts: Sendable {
    let label: PageText
    let help: PageText
    let placeholder: PageText
    /// A choice field's own options in the locale (a provider's, kept in
    /// the session, replace them); empty for other types.
    let options: [ChoiceOption]
    let otherLabel: String
    let hint: String
    let yesLabel: String
    let noLabel: String
    let patternHint: String
    let conditionallyRequired: Bool
    /// Nil when the hints can depend on the session: a step rule names the
    /// field, and its hint can show piped labels or the session's options.
    let ruleHints: [RuleHint]?

    init(
        label: PageText, help: PageText, placeholder: PageText, options: [ChoiceOption], otherLabel: String, hint: String,
        yesLabel: String, noLabel: String, patternHint: String, conditionallyRequired: Bool, ruleHints: [RuleHint]?
    ) {
        self.label = label
        self.help = help
        self.placeholder = placeholder
        self.options = options
        self.otherLabel = otherLabel
        self.hint = hint
        self.yesLabel = yesLabel
        self.noLabel = noLabel
        self.patternHint = patternHint
        self.conditionallyRequired = conditionallyRequired
        self.ruleHints = ruleHints
    }
}

/// A flow text resolved in a locale: the words themselves, or the template
/// answers are piped into.
struct PageText: Sendable {
    let text: String
    /// The flow pipes and the text has a brace: ``SessionText/piped(_:)``
    /// must see it (it leaves any other text as it is).
    let pipes: Bool

    init(_ text: String, flowPipes: Bool) {
        self.text = text
        self.pipes = flowPipes && Piping.mayPipe(text)
    }
}

/// A built-in template cut at the placeholders it is filled with, once, so
/// filling it is appending: what ``Strings/fill(_:_:)`` gives for the same
/// values, placeholder for placeholder (one scan; unknown names and an
/// unclosed brace stay as they are; a value is never scanned again).
struct FillTemplate: Sendable {
    enum Part: Sendable {
        case text([UInt8])
        /// The value at this index of the names given.
        case value(Int)
    }

    let parts: [Part]
    /// The bytes of the text parts together.
    private let textCount: Int

    /// Cuts `template` at the placeholders named in `names`.
    init(_ template: String, names: [String]) {
        let open = UInt8(ascii: "{")
        let close = UInt8(ascii: "}")
        let bytes = Array(template.utf8)
        var parts: [Part] = []
        var rest = 0
        var index = 0
        while let start = bytes[index...].firstIndex(of: open) {
            let nameStart = start + 1
            guard let end = bytes[nameStart...].firstIndex(of: close) else { break }
            let name = String(decoding: bytes[nameStart..<end], as: UTF8.self)
            index = end + 1
            guard let n = names.firstIndex(of: name) else { continue }
            if start > rest { parts.append(.text(Array(bytes[rest..<start]))) }
            parts.append(.value(n))
            rest = index
        }
        if rest < bytes.count { parts.append(.text(Array(bytes[rest...]))) }
        self.parts = parts
        self.textCount = parts.reduce(0) { count, part in
            if case .text(let t) = part { return count + t.count }
            return count
        }
    }

    /// The template with `a`, `b` and `c` in place of the names, in their
    /// order (the templates have two or three): no array of them is made
    /// for each page and move.
    ///
    /// The bytes are counted first and copied into the new string once:
    /// appending piece by piece grew it several times.
    func fill(_ a: String, _ b: String, _ c: String = "") -> String {
        func value(_ i: Int) -> String { i == 0 ? a : i == 1 ? b : c }
        var count = textCount
        for part in parts { if case .value(let i) = part { count += value(i).utf8.count } }
        return String(unsafeUninitializedCapacity: count) { out in
            guard let start = out.baseAddress else { return 0 }
            var at = 0
            func copy(_ bytes: UnsafeBufferPointer<UInt8>) {
                guard at + bytes.count <= out.count else { return }
                guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
                (start + at).update(from: base, count: bytes.count)
                at += bytes.count
            }
            for part in parts {
                switch part {
                case .text(let t): t.withUnsafeBufferPointer(copy)
                case .value(let i):
                    // Native strings are contiguous; others are copied to an array first.
                    let text = value(i)
                    if text.utf8.withContiguousStorageIfAvailable(copy) == nil {
                        Array(text.utf8).withUnsafeBufferPointer(copy)
                    }
                }
            }
            return at
        }
    }
}

extension SessionPresenter {
    /// The page texts of every step of the flow in the locale shown, with
    /// flowd's built-in strings. Only what depends on nothing of the
    /// session is read from it.
    func pageTexts() -> PageTexts {
        // Built-in strings are never piped: the plain words say them alike.
        let plain = SessionText(locale: locale, strings: words.strings)
        let pipes = flow.pipes
        let options = texts.options
        func text(_ t: LocalizedText?) -> PageText { PageText(t?.resolve(locale) ?? "", flowPipes: pipes) }
        let steps = flow.steps.enumerated().map { si, step in
            StepTexts(
                title: PageText(texts.stepTitles[si], flowPipes: pipes), description: text(step.description),
                body: text(step.body), ruleHints: ruleHints(of: step),
                fields: step.fields.map { f in
                    let rules = step.rules.filter { $0.targetField == f.id }
                    let sessionBound = !rules.isEmpty && (pipes || rules.contains { rule in
                        guard case .requiredIf(_, let condition) = rule.kind else { return false }
                        return condition.fieldIDs.contains { flow.field($0)?.type.isChoice ?? false }
                    })
                    return FieldTexts(
                        label: text(f.label), help: text(f.help), placeholder: text(f.placeholder),
                        options: f.type.isChoice ? options[f.id] ?? [] : [], otherLabel: f.other ? otherLabel(f) : "",
                        hint: f.type == .multichoice ? plain(.builtin(.selectAllThatApply)) : "",
                        yesLabel: f.type == .toggle ? plain(.builtin(.yes)) : "",
                        noLabel: f.type == .toggle ? plain(.builtin(.no)) : "", patternHint: patternHint(f),
                        conditionallyRequired: !f.required && rules.contains { rule in
                            if case .requiredIf = rule.kind { return rule.level == .error }
                            return false
                        },
                        ruleHints: sessionBound ? nil : ruleHints(of: f, on: step))
                })
        }
        return PageTexts(
            back: plain(.builtin(.back)), retry: plain(.builtin(.tryAgain)), cancel: plain(.builtin(.cancel)),
            submitting: plain(.builtin(.submitting)), notSent: plain(.builtin(.notSent)),
            optional: plain(.builtin(.optional)), next: plain(.builtin(.continue)),
            backToReview: plain(.builtin(.backToReview)),
            submit: flow.review?.submitTitle?.resolve(locale) ?? plain(.builtin(.submit)),
            finish: flow.finishTitle?.resolve(locale) ?? plain(.builtin(.finish)),
            reviewTitle: flow.review?.title.map { PageText($0.resolve(locale), flowPipes: pipes) }
                ?? PageText(plain(.builtin(.review)), flowPipes: false),
            stepCounter: FillTemplate(plain(.builtin(.stepCounter)), names: ["n", "m"]),
            stepAnnouncement: FillTemplate(plain(.builtin(.stepAnnouncement)), names: ["n", "m", "title"]),
            summary: summary, steps: steps)
    }
}

// The step page made from the page texts: what `GetStep` returns.
extension FlowSession {
    /// Everything `GetStep` returns for the current step: the step's page
    /// texts in the session's locale (made once per flow and locale), with
    /// what the session decides filled in. Review, the complete page and
    /// a locale past the cache's bound take the general way
    /// (``SessionPresenter/step()``), which this equals field for field.
    package func currentStep() -> StepView {
        guard let si = flow.stepIndex[record.currentStep],
            let page = flow.pageTexts.kept(for: record.locale, make: { SessionPresenter(self).pageTexts() })
        else { return SessionPresenter(self).step() }
        return step(si, page)
    }

    private func step(_ si: Int, _ page: PageTexts) -> StepView {
        let step = flow.steps[si]
        let texts = page.steps[si]
        let r = resolve(including: si)
        let p = r.route
        let (index, count, canGoBack) = place(ofCurrent: si, on: p)
        // One look at the step's rules: its errors (all of them decide
        // Continue, the shown ones are on the page) and its warnings.
        let found = findings(of: step, shownOnly: false, plugins: true, in: r)
        let canContinue = isMutable && found.errors.isEmpty
        // The words (with the answers to pipe, when the flow pipes) only
        // when something must be said in them.
        var made: SessionText?
        func words() -> SessionText {
            if let made { return made }
            let new = self.words
            made = new
            return new
        }
        func say(_ text: PageText) -> String { text.pipes ? words().piped(text.text) : text.text }
        let shown = shownErrors(found.errors)
        let errors = shown.isEmpty ? [:] : words()(shown)
        let warnings = found.warnings.isEmpty ? [:] : words()(found.warnings)
        let title = say(texts.title)
        let n = Self.number(index)
        let m = Self.number(count)
        // Each step is asked about once at most (the steps after this one,
        // returning to Review), so nothing is kept between the questions.
        let continueLabel = page.continueLabel(continueTarget(route: p, isFinished: { isFinished($0, in: r) }))
        var fields: [FieldView] = []
        for (fi, f) in step.fields.enumerated() where r.shows(f) {
            fields.append(fieldView(
                f, texts.fields[fi], on: step, in: r, error: errors[f.id] ?? "", warning: warnings[f.id] ?? "",
                words: words))
        }
        let summary = page.summary
        return StepView(
            id: step.id, kind: step.kind == .content ? .content : .form, title: title,
            description: say(texts.description), body: say(texts.body), icon: step.icon ?? "", fields: fields,
            error: (record.state == .failed ? record.lastError : nil) ?? errors[""] ?? "",
            warning: warnings[""] ?? "", announcement: page.stepAnnouncement.fill(n, m, title), index: index,
            count: count, continueLabel: continueLabel, backLabel: page.back, canGoBack: canGoBack,
            canContinue: canContinue, progressLabel: page.stepCounter.fill(n, m), retryLabel: page.retry,
            cancelLabel: page.cancel, submittingLabel: page.submitting, notSentLabel: page.notSent,
            optionalLabel: page.optional, flowTitle: summary.title, flowDescription: summary.description,
            locale: record.locale, effectiveLocale: summary.locale, ruleHints: texts.ruleHints,
            shared: SharedPageBytes(page.sharedBytes))
    }

    private func fieldView(
        _ f: FieldDefinition, _ texts: FieldTexts, on step: StepDefinition, in r: Resolution, error: String,
        warning: String, words: () -> SessionText
    ) -> FieldView {
        func say(_ text: PageText) -> String { text.pipes ? words().piped(text.text) : text.text }
        let value = pageValue(f, in: r)
        return FieldView(
            id: f.id, type: f.type, label: say(texts.label), help: say(texts.help), placeholder: say(texts.placeholder),
            required: f.type != .computed && (f.required || (texts.conditionallyRequired && isRequiredNow(f, on: step, in: r))),
            options: f.type.isChoice ? record.dynamicOptions[f.id] ?? texts.options : [], other: f.other,
            otherLabel: texts.otherLabel, value: value, otherText: otherText(of: f),
            isSet: value != nil || storedValue(f.id) != nil, error: error, warning: warning,
            display: f.type == .computed ? displayValue(f, in: r, words: words()) ?? "" : "", hint: texts.hint,
            minLength: f.minLength, maxLength: f.effectiveMaxLength, minimum: f.minimum, maximum: f.maximum,
            integer: f.integer, minSelected: f.minSelected, maxSelected: f.maxSelected,
            after: f.after.map { $0.resolve(today: clock.today).description },
            before: f.before.map { $0.resolve(today: clock.today).description }, mustBeOn: f.mustBeOn,
            yesLabel: texts.yesLabel, noLabel: texts.noLabel, patternHint: texts.patternHint,
            conditionallyRequired: texts.conditionallyRequired,
            ruleHints: texts.ruleHints ?? SessionPresenter(self).ruleHints(of: f, on: step))
    }

    /// A field's answer as its page entry holds it: never a secure one's,
    /// a computed one's as worked out on `r`.
    func pageValue(_ f: FieldDefinition, in r: Resolution) -> AnswerValue? {
        switch f.type {
        case .secure: return nil
        case .computed: return r.computed[f.id]?.answer
        default: return record.answers[f.id]
        }
    }
}
