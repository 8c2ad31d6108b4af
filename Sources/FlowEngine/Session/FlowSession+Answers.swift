import FlowKit

// Answers: reading them along the path, setting them (type and option
// checks, normalizing, secure values apart), and provider options.
extension FlowSession {
    /// The answers on the path: answers on abandoned branches and to hidden
    /// fields are left out, computed values are in. An unset toggle counts
    /// as `false`; Other's text is included as `<field>.other` when Other is
    /// chosen.
    ///
    /// - Parameter includeSecure: add secure answers (as text). Only a submit
    ///   action may see them; `GetAnswers` leaves them out.
    package func answersOnPath(includeSecure: Bool) -> [String: AnswerValue] {
        answersOnPath(includeSecure: includeSecure, in: resolve())
    }

    func answersOnPath(includeSecure: Bool, in r: Resolution) -> [String: AnswerValue] {
        var out: [String: AnswerValue] = [:]
        for i in r.route {
            out.merge(answers(of: flow.steps[i], includeSecure: includeSecure, in: r)) { a, _ in a }
        }
        return out
    }

    /// The idempotency key of a submit now: the session id and the revision
    /// of its answers (`<session id>-<revision>`). Every attempt to submit the
    /// same answers — a retry after a failure, a timeout, a cancel or a
    /// restart of flowd — carries the same key, since the revision is stored
    /// with the session; a change to the answers makes a new one, so a
    /// receiver that drops a repeated key never drops corrected answers.
    package var idempotencyKey: String { "\(record.id)-\(record.revision)" }

    /// What a submit action receives; its `id` is the ``idempotencyKey``.
    package func submission(now: Int64) -> Submission {
        let r = resolve()
        var secure: [String: String] = [:]
        for i in r.route {
            for f in flow.steps[i].fields where f.type == .secure && r.shows(f) {
                if let s = scratch.secure[f.id] { secure[f.id] = s }
            }
        }
        return Submission(
            id: idempotencyKey, flowID: flow.id, sessionID: record.id, ownerUID: record.owner, locale: locale,
            answers: answersOnPath(includeSecure: false, in: r), secureAnswers: secure, submittedAt: now)
    }

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
    package mutating func setAnswers(_ answers: [String: AnswerValue], now: Int64) throws(SessionError) -> SetAnswersResult {
        try requireMutable()
        guard let si = flow.stepIndex[record.currentStep] else {
            if let key = answers.keys.sorted().first {
                throw SessionError(.invalidArgs, "\(quoted(key)) is not a field of the current step (\(record.currentStep))")
            }
            return SetAnswersResult(errors: [:], checks: [], canContinue: canContinue)
        }
        let step = flow.steps[si]
        var checked: [(key: String, field: FieldDefinition, value: AnswerValue)] = []
        for (key, value) in answers.sorted(by: { $0.key < $1.key }) {
            guard let target = answerTarget(key), flow.fieldLocation[target.field.id]?.step == si else {
                throw SessionError(.invalidArgs, "\(quoted(key)) is not a field of the current step \(quoted(step.id))")
            }
            guard target.field.type != .computed else { throw computedField(key) }
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
        announceNewWarnings()
        let r = resolve(including: si)
        let checks = step.fields.filter { f in checked.contains { $0.field.id == f.id } }
            .flatMap { fieldChecks($0, retryFailures: true, in: r) }
        // One run of the step's checks: the reply shows the errors of the
        // fields already shown, and any error at all stops Continue.
        let errors = issues(of: step, shownOnly: false, plugins: true, in: r)
        let shown = shownErrors(errors)
        return SetAnswersResult(
            errors: shown.isEmpty ? [:] : words(shown), checks: checks, canContinue: step.kind == .content || errors.isEmpty)
    }

    /// The refusal of an answer to a computed field, which nothing sets.
    func computedField(_ key: String) -> SessionError {
        SessionError(.invalidArgs, "\(quoted(key)) is computed from other answers and cannot be set")
    }

    /// Checks answers for the current step exactly as ``setAnswers(_:now:)``
    /// would (the same refusals, field errors and plugin checks) without
    /// changing the session: nothing to store, nothing to announce. For a
    /// client that validates as the person types.
    ///
    /// - Throws: as `setAnswers` does.
    package func checkAnswers(_ answers: [String: AnswerValue], now: Int64) throws(SessionError) -> AnswerCheck {
        var trial = self
        let result = try trial.setAnswers(answers, now: now)
        return AnswerCheck(errors: result.errors, checks: result.checks, trial: trial)
    }

    /// Sets the options an `optionsFrom` provider returned for a field.
    ///
    /// - Throws: `invalidArgs` for a field without `optionsFrom`, an empty,
    ///   duplicate or reserved (`other`) option id, or an over-long string;
    ///   `limitExceeded` for more options than a flow file may have.
    package mutating func setDynamicOptions(field id: String, _ options: [ChoiceOption]) throws(SessionError) {
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

    // MARK: Checking and storing

    /// The field an answer key names: a field id, or `<field>.other` of a
    /// field that offers Other.
    func answerTarget(_ key: String) -> (field: FieldDefinition, isOther: Bool)? {
        if let f = flow.field(key) { return (f, false) }
        if key.hasSuffix(".other"), let f = flow.field(String(key.dropLast(6))), f.other { return (f, true) }
        return nil
    }

    /// Checks a value's type against its field and normalizes it.
    func checkValue(_ value: AnswerValue, key: String, field: FieldDefinition, isOther: Bool) throws(SessionError) -> AnswerValue {
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
        case .computed:
            throw computedField(key)
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
    mutating func store(_ value: AnswerValue, key: String, field: FieldDefinition) -> Bool {
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
    func storedValue(_ id: String) -> AnswerValue? {
        if let s = scratch.secure[id] { return .text(s) }
        return record.answers[id]
    }

    func chosenOther(_ v: AnswerValue) -> Bool {
        switch v {
        case .text(let s): return s == "other"
        case .list(let l): return l.contains("other")
        default: return false
        }
    }

    /// One step's answers as they count on `r` (as `StepCompleted` carries
    /// them): hidden fields left out, computed values in, secure ones only
    /// with `includeSecure`.
    func answers(of step: StepDefinition, includeSecure: Bool = false, in r: Resolution) -> [String: AnswerValue] {
        var out: [String: AnswerValue] = [:]
        for f in step.fields where r.shows(f) {
            switch f.type {
            case .secure:
                if includeSecure, let s = scratch.secure[f.id] { out[f.id] = .text(s) }
            case .toggle:
                out[f.id] = record.answers[f.id] ?? .bool(false)
            case .computed:
                if let v = r.computed[f.id]?.answer { out[f.id] = v }
            default:
                guard let v = record.answers[f.id], !isBlank(v) else { continue }
                out[f.id] = v
                if f.other, chosenOther(v), let t = record.answers[f.otherKey], !isBlank(t) { out[f.otherKey] = t }
            }
        }
        return out
    }
}

// MARK: - Sorted-array sets

func insertSorted(_ s: String, into a: inout [String]) {
    var lo = 0
    var hi = a.count
    while lo < hi {
        let mid = (lo + hi) / 2
        if a[mid] < s { lo = mid + 1 } else { hi = mid }
    }
    if lo < a.count && a[lo] == s { return }
    a.insert(s, at: lo)
}

func remove(_ s: String, from a: inout [String]) {
    a.removeAll { $0 == s }
}
