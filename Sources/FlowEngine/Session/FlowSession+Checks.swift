import FlowKit

// The rules: what is wrong with a step (built-in field rules, step rules,
// cached plugin results) and what merely deserves a second look (warnings),
// which plugin checks are still needed, and how their results are applied.
extension FlowSession {
    /// The current step's field errors, as `SetAnswers` would return them.
    package func currentErrors() -> FieldErrors {
        guard let i = flow.stepIndex[record.currentStep] else { return [:] }
        return words(issues(of: flow.steps[i], shownOnly: true, plugins: true, in: resolve(including: i)))
    }

    /// Merges plugin results into the session's caches. A result for a value
    /// that has changed since (or a step check for an older revision) is
    /// ignored. A failure or timeout becomes the field's localized error
    /// (fail closed). A warning that appears is announced.
    ///
    /// - Returns: the current step's shown errors, now final.
    package mutating func applyPluginResults(_ results: [PluginCheckResult]) -> FieldErrors {
        for r in results {
            switch r.check.subject {
            case .field(let info, let value):
                guard let current = storedValue(info.id), current == value else { continue }
                if let cleaned = r.normalizedValue, let f = flow.field(info.id) {
                    storeNormalized(cleaned, field: f)
                    scratch.fieldVerdicts[info.id] = SessionScratch.FieldVerdict(
                        value: cleaned, results: [r.check.validator: r.outcome])
                    continue
                }
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
        announceNewWarnings()
        return currentErrors()
    }

    /// Stores a validator's normalized value in place of the one it
    /// checked: an answer change like `setAnswers`'s (a new revision, the
    /// step to be continued again). The other validators of the field are
    /// asked again about the new value when they are next needed.
    private mutating func storeNormalized(_ value: AnswerValue, field f: FieldDefinition) {
        guard store(value, key: f.id, field: f) else { return }
        record.revision &+= 1
        if let stepID = flow.stepID(ofField: f.id) { remove(stepID, from: &record.completed) }
        scratch.pendingContinue = nil
    }

    /// A validator's normalized value for `f` as the field would store
    /// it (``checkValue(_:key:field:isOther:)``), or why it cannot be:
    /// empty, of another type, or breaking the field's own rules.
    func storedForm(ofNormalized value: AnswerValue, field f: FieldDefinition) -> Result<AnswerValue, NormalizationRefused> {
        guard !value.isEmpty else { return .failure(NormalizationRefused("is empty")) }
        let stored: AnswerValue
        do {
            stored = try checkValue(value, key: f.id, field: f, isOther: false)
        } catch {
            return .failure(NormalizationRefused("does not fit the field: \(error.message)"))
        }
        if FieldValidation.error(f, value: stored, otherText: otherText(of: f), context: validationContext)
            != nil
        {
            return .failure(NormalizationRefused("breaks the field's own rules (\(f.type.rawValue) field \(quoted(f.id)))"))
        }
        return .success(stored)
    }

    // MARK: What is wrong

    /// The text typed for Other of `f`, which only a field offering Other
    /// has (its key is made, and looked up, only then).
    func otherText(of f: FieldDefinition) -> String? {
        f.other ? record.answers[f.otherKey]?.textValue : nil
    }

    private var validationContext: ValidationContext {
        ValidationContext(today: clock.today, dynamicOptions: record.dynamicOptions)
    }

    /// A resolution on which `step` counts as on the path: `r` itself, or
    /// one made for the step (a step's rules are checked on it even when an
    /// edit took it off the path).
    func covering(_ step: StepDefinition, _ r: Resolution) -> Resolution {
        guard let si = flow.stepIndex[step.id], !r.onPath[si] else { return r }
        return resolve(including: si)
    }

    /// A step's errors: built-in field rules, then step rules, then (with
    /// `plugins`) cached plugin results. `shownOnly` keeps the fields whose
    /// errors are shown. Hidden and computed fields have none.
    func issues(of step: StepDefinition, shownOnly: Bool, plugins: Bool, in r: Resolution) -> FieldIssues {
        findings(of: step, shownOnly: shownOnly, plugins: plugins, in: r).errors
    }

    /// A step's errors (as ``issues(of:shownOnly:plugins:in:)``) and its
    /// warnings: rules and plugin validators of level `warning`, and what
    /// plugins report as warnings. A field with an error (shown or not) has
    /// no warning. Warnings are not held back until the field is touched:
    /// they never stop Continue, so they are said as soon as they hold.
    func findings(of step: StepDefinition, shownOnly: Bool, plugins: Bool, in r: Resolution)
        -> (errors: FieldIssues, warnings: FieldIssues)
    {
        guard step.kind == .form else { return ([:], [:]) }
        let r = covering(step, r)
        var errors: FieldIssues = [:]
        var warnings: FieldIssues = [:]
        let context = validationContext
        for f in step.fields where r.shows(f) && f.type != .computed {
            if let e = FieldValidation.error(f, value: storedValue(f.id), otherText: otherText(of: f),
                                             context: context) {
                errors[f.id] = e
            } else if plugins {
                let found = pluginFinding(f)
                if let e = found.error { errors[f.id] = e } else if let w = found.warning { warnings[f.id] = w }
            }
        }
        if !step.rules.isEmpty {
            let found = FieldValidation.stepRuleIssues(step, reader: reader(r, secure: true), hidden: r.hidden, flow: flow)
            for (f, e) in found.errors where errors[f] == nil { errors[f] = e }
            for (f, w) in found.warnings where warnings[f] == nil { warnings[f] = w }
        }
        if plugins, let m = record.stepMessages[step.id], m.revision == record.revision {
            for (f, e) in m.messages where errors[f] == nil { errors[f] = .verbatim(e) }
            for (f, w) in m.warnings where warnings[f] == nil { warnings[f] = .verbatim(w) }
        }
        for f in warnings.keys where errors[f] != nil { warnings[f] = nil }
        return (shownOnly ? shownErrors(errors) : errors, warnings)
    }

    /// The entries of `errors` whose fields show their errors (the step's
    /// own, keyed `""`, always do).
    func shownErrors(_ errors: FieldIssues) -> FieldIssues {
        errors.isEmpty ? errors : errors.filter { $0.key.isEmpty || record.shownErrors.contains($0.key) }
    }

    /// Whether `field` of `step` must be answered now: it is shown, and it
    /// is `required` or a `requiredIf` rule (of level error) of the step
    /// names it and its condition holds.
    func isRequiredNow(_ field: FieldDefinition, on step: StepDefinition, in r: Resolution) -> Bool {
        let r = covering(step, r)
        guard r.shows(field), field.type != .computed else { return false }
        if field.required { return true }
        let conditions = step.rules.compactMap { rule -> Condition? in
            guard case .requiredIf(let target, let condition) = rule.kind, target == field.id, rule.level == .error
            else { return nil }
            return condition
        }
        guard !conditions.isEmpty else { return false }
        let reader = self.reader(r, secure: true)
        return conditions.contains { $0.holds(reader) }
    }

    /// The cached plugin verdicts on a field's current value: the first
    /// error, and the first warning (from a validator of level `warning`,
    /// or one the plugin reported as such). A check that failed counts as
    /// an error only for a validator of level error (fail closed); a
    /// warning that could not be checked is no warning.
    private func pluginFinding(_ f: FieldDefinition) -> (error: SessionMessage?, warning: SessionMessage?) {
        guard !f.validators.isEmpty, let v = storedValue(f.id), let verdict = scratch.fieldVerdicts[f.id],
            verdict.value == v
        else { return (nil, nil) }
        var warning: SessionMessage?
        for rule in f.validators {
            let said: SessionMessage
            switch verdict.results[rule.name] {
            case .rejected(let message)?: said = rule.message.map { .flow($0) } ?? .verbatim(message)
            case .issues(let issues)?:
                guard let first = issues.first else { continue }
                said = rule.message.map { .flow($0) } ?? .verbatim(first.message)
            case .warning(let message)?:
                warning = warning ?? .verbatim(message)
                continue
            case .failed?:
                guard rule.level == .error else { continue }
                return (.builtin(.checkFailed), warning)
            case .timedOut?:
                guard rule.level == .error else { continue }
                return (.builtin(.checkTimeout), warning)
            case .accepted?, nil: continue
            }
            if rule.level == .warning {
                warning = warning ?? said
            } else {
                return (said, warning)
            }
        }
        return (nil, warning)
    }

    /// The current step's warnings, in words.
    func currentWarnings() -> FieldErrors {
        guard let i = flow.stepIndex[record.currentStep] else { return [:] }
        let step = flow.steps[i]
        // Only rules and plugin validators warn.
        guard !step.rules.isEmpty || step.fields.contains(where: { !$0.validators.isEmpty }) else { return [:] }
        return words(findings(of: step, shownOnly: true, plugins: true, in: resolve(including: i)).warnings)
    }

    /// Announces the current step's warnings that were not announced yet,
    /// once: a warning is said when it appears (after an answer or a plugin
    /// result), not again while it stays, and again if it goes and comes
    /// back. The ones a step arrives with are on its page, which the
    /// arrival announces (``moveTo(_:on:now:)`` takes them as said).
    mutating func announceNewWarnings() {
        guard isMutable, let i = flow.stepIndex[record.currentStep], flow.steps[i].kind == .form else { return }
        let current = currentWarnings()
        guard !current.isEmpty else {
            // Nothing to say; nothing said is kept (no list of the step's fields made).
            if !record.announcedWarnings.isEmpty { record.announcedWarnings = [:] }
            return
        }
        let order = [""] + flow.steps[i].fields.map(\.id)
        let fresh = order.compactMap { id in current[id].flatMap { record.announcedWarnings[id] == $0 ? nil : $0 } }
        record.announcedWarnings = current
        if !fresh.isEmpty { announce(.verbatim(fresh.joined(separator: " "))) }
    }

    // MARK: Plugin checks

    /// The field validator calls a field's current value still needs (none
    /// for a hidden field, which is not validated).
    func fieldChecks(_ f: FieldDefinition, retryFailures: Bool, in r: Resolution) -> [PluginCheck] {
        guard !f.validators.isEmpty, r.shows(f), let v = storedValue(f.id), !isBlank(v),
            FieldValidation.error(f, value: v, otherText: otherText(of: f),
                                  context: validationContext) == nil,
            let stepID = flow.stepID(ofField: f.id)
        else { return [] }
        let verdict = scratch.fieldVerdicts[f.id].flatMap { $0.value == v ? $0 : nil }
        let info = fieldInfo(f)
        let answers = answersOnPath(includeSecure: false, in: r)
        let session = self
        return f.validators.compactMap { rule -> PluginCheck? in
            switch verdict?.results[rule.name] {
            case .accepted?, .rejected?, .issues?, .warning?: return nil
            case .failed?, .timedOut?: if !retryFailures { return nil }
            case nil: break
            }
            return PluginCheck(
                validator: rule.name, subject: .field(info, v), stepID: stepID,
                context: pluginContext(answers: answers, options: rule.options), revision: record.revision,
                storedForm: { session.storedForm(ofNormalized: $0, field: f) })
        }
    }

    /// The step validator calls the step still needs at this revision.
    func stepChecks(_ step: StepDefinition, retryFailures: Bool, in r: Resolution) -> [PluginCheck] {
        let rules = step.rules.compactMap { rule -> PluginRule? in
            if case .plugin(let p) = rule.kind { return p }
            return nil
        }
        guard !rules.isEmpty else { return [] }
        let r = covering(step, r)
        let verdict = scratch.stepVerdicts[step.id].flatMap { $0.revision == record.revision ? $0 : nil }
        let info = StepInfo(
            id: step.id, title: words(.piped(step.title)), fields: step.fields.filter(r.shows).map(fieldInfo))
        let answers = answersOnPath(includeSecure: false, in: r)
        return rules.compactMap { rule -> PluginCheck? in
            switch verdict?.results[rule.name] {
            case .accepted?, .rejected?, .issues?, .warning?: return nil
            case .failed?, .timedOut?: if !retryFailures { return nil }
            case nil: break
            }
            return PluginCheck(
                validator: rule.name, subject: .step(info), stepID: step.id,
                context: pluginContext(answers: answers, options: rule.options), revision: record.revision)
        }
    }

    /// A field as a plugin sees it in this session: its label in the
    /// session's locale, answers piped in.
    func fieldInfo(_ f: FieldDefinition) -> FieldInfo {
        FieldInfo(id: f.id, type: f.type.rawValue, label: words(.piped(f.label)))
    }

    /// The context of a plugin call for this session (the host fills in
    /// `stateDirectory`).
    func pluginContext(answers: [String: AnswerValue], options: [String: JSONValue]) -> PluginContext {
        PluginContext(
            flowID: flow.id, sessionID: record.id, locale: locale, callerUID: record.owner, answers: answers,
            options: options, stateDirectory: "")
    }

    /// Turns the step validators' results at this revision into the step's
    /// displayed messages (issue field, or `""` for the step), kept in the
    /// record in the session's locale.
    mutating func recordStepMessages(_ step: StepDefinition) {
        guard let verdict = scratch.stepVerdicts[step.id], verdict.revision == record.revision else {
            record.stepMessages[step.id] = nil
            return
        }
        let fieldIDs = Set(step.fields.map(\.id))
        var messages: FieldIssues = [:]
        var warnings: FieldIssues = [:]
        for rule in step.rules {
            guard case .plugin(let p) = rule.kind else { continue }
            let custom = (rule.message ?? p.message).map { SessionMessage.flow($0) }
            let isWarning = rule.level == .warning
            func add(_ key: String, _ message: SessionMessage, warning: Bool) {
                if warning {
                    if warnings[key] == nil { warnings[key] = message }
                } else if messages[key] == nil {
                    messages[key] = message
                }
            }
            switch verdict.results[p.name] {
            case .issues(let issues)?:
                for issue in issues {
                    let key = issue.field.flatMap { fieldIDs.contains($0) ? $0 : nil } ?? ""
                    add(key, custom ?? .verbatim(issue.message), warning: isWarning || issue.level == .warning)
                }
            case .rejected(let m)?:
                add("", custom ?? .verbatim(m), warning: isWarning)
            case .warning(let m)?:
                add("", .verbatim(m), warning: true)
            case .failed?:
                if !isWarning { add("", .builtin(.checkFailed), warning: false) }
            case .timedOut?:
                if !isWarning { add("", .builtin(.checkTimeout), warning: false) }
            case .accepted?, nil:
                continue
            }
        }
        record.stepMessages[step.id] = messages.isEmpty && warnings.isEmpty
            ? nil
            : SessionRecord.StepMessages(revision: record.revision, messages: words(messages), warnings: words(warnings))
    }
}
