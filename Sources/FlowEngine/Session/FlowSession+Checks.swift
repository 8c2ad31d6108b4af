import FlowKit

// The rules: what is wrong with a step (built-in field rules, step rules,
// cached plugin results), which plugin checks are still needed, and how
// their results are applied.
extension FlowSession {
    /// The current step's field errors, as `SetAnswers` would return them.
    public func currentErrors() -> FieldErrors {
        guard let i = flow.stepIndex[record.currentStep] else { return [:] }
        return words(issues(of: flow.steps[i], shownOnly: true, plugins: true))
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

    // MARK: What is wrong

    private var validationContext: ValidationContext {
        let dynamic = record.dynamicOptions
        return ValidationContext(
            today: clock.today,
            options: { field in
                dynamic[field.id] ?? field.options.map { ChoiceOption(id: $0.id, label: "", icon: nil) }
            })
    }

    /// A step's issues: built-in field rules, then step rules, then (with
    /// `plugins`) cached plugin results. `shownOnly` keeps the fields whose
    /// errors are shown.
    func issues(of step: StepDefinition, shownOnly: Bool, plugins: Bool) -> FieldIssues {
        guard step.kind == .form else { return [:] }
        var out: FieldIssues = [:]
        let context = validationContext
        let shown = shownOnly ? Set(record.shownErrors) : []
        func visible(_ id: String) -> Bool { !shownOnly || shown.contains(id) }
        for f in step.fields where visible(f.id) {
            if let e = FieldValidation.error(f, value: storedValue(f.id), otherText: record.answers[f.otherKey]?.textValue,
                                             context: context) {
                out[f.id] = e
            } else if plugins, let e = pluginIssue(f) {
                out[f.id] = e
            }
        }
        if !step.rules.isEmpty {
            let ruleIssues = FieldValidation.stepRuleErrors(step, answer: ruleAnswer(for: step), flow: flow)
            for (f, e) in ruleIssues where out[f] == nil && visible(f) { out[f] = e }
        }
        if plugins, let m = record.stepMessages[step.id], m.revision == record.revision {
            for (f, e) in m.messages where out[f] == nil && (f.isEmpty || visible(f)) { out[f] = .verbatim(e) }
        }
        return out
    }

    /// Answers as `step`'s rules see them: secure values included, nothing
    /// on a step off the path (the step itself counts as on it), an unset
    /// toggle `false`.
    func ruleAnswer(for step: StepDefinition) -> (String) -> AnswerValue? {
        var onPath = Array(repeating: false, count: flow.steps.count)
        for i in route() { onPath[i] = true }
        if let si = flow.stepIndex[step.id] { onPath[si] = true }
        return { [self] id in
            guard let loc = flow.fieldLocation[id], onPath[loc.step] else { return nil }
            if flow.steps[loc.step].fields[loc.field].type == .toggle { return storedValue(id) ?? .bool(false) }
            return storedValue(id)
        }
    }

    /// Whether `field` of `step` must be answered now: it is `required`, or
    /// a `requiredIf` rule of the step names it and its condition holds.
    func isRequiredNow(_ field: FieldDefinition, on step: StepDefinition) -> Bool {
        if field.required { return true }
        let conditions = step.rules.compactMap { rule -> Condition? in
            guard case .requiredIf(let target, let condition) = rule.kind, target == field.id else { return nil }
            return condition
        }
        guard !conditions.isEmpty else { return false }
        let answer = ruleAnswer(for: step)
        return conditions.contains { $0.holds(answer) }
    }

    /// The cached plugin verdict on a field's current value.
    private func pluginIssue(_ f: FieldDefinition) -> SessionMessage? {
        guard !f.validators.isEmpty, let v = storedValue(f.id), let verdict = scratch.fieldVerdicts[f.id],
            verdict.value == v
        else { return nil }
        for rule in f.validators {
            switch verdict.results[rule.name] {
            case .rejected(let message)?: return rule.message.map { .flow($0) } ?? .verbatim(message)
            case .issues(let issues)?:
                if let first = issues.first { return rule.message.map { .flow($0) } ?? .verbatim(first.message) }
            case .failed?: return .builtin(.checkFailed)
            case .timedOut?: return .builtin(.checkTimeout)
            case .accepted?, nil: continue
            }
        }
        return nil
    }

    // MARK: Plugin checks

    /// The field validator calls a field's current value still needs.
    func fieldChecks(_ f: FieldDefinition, retryFailures: Bool) -> [PluginCheck] {
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
    func stepChecks(_ step: StepDefinition, retryFailures: Bool) -> [PluginCheck] {
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
        for rule in step.rules {
            guard case .plugin(let p) = rule.kind else { continue }
            let custom = (rule.message ?? p.message).map { SessionMessage.flow($0) }
            switch verdict.results[p.name] {
            case .issues(let issues)?:
                for issue in issues {
                    let key = issue.field.flatMap { fieldIDs.contains($0) ? $0 : nil } ?? ""
                    if messages[key] == nil { messages[key] = custom ?? .verbatim(issue.message) }
                }
            case .rejected(let m)?:
                if messages[""] == nil { messages[""] = custom ?? .verbatim(m) }
            case .failed?:
                if messages[""] == nil { messages[""] = .builtin(.checkFailed) }
            case .timedOut?:
                if messages[""] == nil { messages[""] = .builtin(.checkTimeout) }
            case .accepted?, nil:
                continue
            }
        }
        record.stepMessages[step.id] =
            messages.isEmpty ? nil : SessionRecord.StepMessages(revision: record.revision, messages: words(messages))
    }
}
