import FlowKit

// The rules a page says before the person breaks them: a pattern's hint, the
// step rules that name a field, conditional requirements, and what plugin
// validators say of themselves.
extension SessionPresenter {
    /// What `pattern` wants, in words; empty for a field without a pattern.
    func patternHint(_ field: FieldDefinition) -> String {
        guard field.pattern != nil else { return "" }
        return field.patternHint?.resolve(locale) ?? words(.builtin(.patternHint))
    }

    /// The step's rules whose message would go to `field`, then the field's
    /// plugin validators that have a hint or a description.
    func ruleHints(of field: FieldDefinition, on step: StepDefinition) -> [RuleHint] {
        var out: [RuleHint] = []
        for rule in step.rules where rule.targetField == field.id {
            if let hint = hint(of: rule, on: field) { out.append(hint) }
        }
        for (i, validator) in field.validators.enumerated() {
            // A warning's validator is no rule to follow: only a hint of its own is said.
            let described = validator.level == .warning ? nil : descriptions[.field(id: field.id, index: i)]
            guard let text = validator.hint?.resolve(locale) ?? described else { continue }
            out.append(RuleHint(kind: .plugin, subject: validator.name, text: text))
        }
        return out
    }

    /// The step's plugin validators that have a hint or a description.
    func ruleHints(of step: StepDefinition) -> [RuleHint] {
        step.rules.enumerated().compactMap { i, rule in
            guard case .plugin(let plugin) = rule.kind,
                let text = rule.hint?.resolve(locale)
                    ?? (rule.level == .warning ? nil : descriptions[.step(id: step.id, index: i)])
            else { return nil }
            return RuleHint(kind: .plugin, subject: plugin.name, text: text)
        }
    }

    /// A step rule said as a hint to the field its message goes to.
    /// A rule of level warning is no rule the person must follow ("Must be
    /// less than …" would be untrue): it says only a `hint` of its own, and
    /// its warning shows when it holds.
    private func hint(of rule: StepRule, on field: FieldDefinition) -> RuleHint? {
        let own = rule.hint?.resolve(locale)
        if rule.level == .warning, own == nil { return nil }
        func comparison(_ kind: RuleHint.Kind, _ other: String, _ key: BuiltinString) -> RuleHint {
            RuleHint(kind: kind, subject: other, text: own ?? words(.builtin(key, ["field": .verbatim(label(of: other))])))
        }
        let isNumber = field.type == .number
        switch rule.kind {
        case .equals(let other, _): return comparison(.equals, other, .hintMustEqual)
        case .notEquals(let other, _): return comparison(.notEquals, other, .hintMustDiffer)
        case .before(_, let other): return comparison(.before, other, isNumber ? .hintMustBeLess : .hintMustBeBefore)
        case .after(_, let other): return comparison(.after, other, isNumber ? .hintMustBeGreater : .hintMustBeAfter)
        case .requiredIf(_, let condition):
            let fields = uniqueFields(of: condition)
            return RuleHint(
                kind: .requiredIf, subject: fields.count == 1 ? fields[0] : "",
                text: own ?? words(requirement(condition)))
        case .plugin:
            return nil
        }
    }

    /// "Required if Purpose is Loan" and its kin, for a `requiredIf` condition
    /// without a flow `hint`. Conditions of one field test are said exactly;
    /// others name the field they read, or say "your other answers".
    private func requirement(_ condition: Condition) -> SessionMessage {
        func on(_ field: String) -> SessionMessage { .verbatim(label(of: field)) }
        switch condition {
        case .equals(let field, let value):
            return .builtin(.hintRequiredIfEquals, ["field": on(field), "value": .verbatim(display(value, of: field))])
        case .oneOf(let field, let values) where values.count == 1:
            return .builtin(.hintRequiredIfEquals, ["field": on(field), "value": .verbatim(display(values[0], of: field))])
        case .notEmpty(let field, let expected):
            return .builtin(expected ? .hintRequiredIfAnswered : .hintRequiredIfNotAnswered, ["field": on(field)])
        default:
            let fields = uniqueFields(of: condition)
            guard fields.count == 1 else { return .builtin(.hintRequiredDepends) }
            return .builtin(.hintRequiredDependsOn, ["field": on(fields[0])])
        }
    }

    /// The fields a condition reads, each once, in order.
    private func uniqueFields(of condition: Condition) -> [String] {
        var seen: [String] = []
        for id in condition.fieldIDs where !seen.contains(id) { seen.append(id) }
        return seen
    }

    /// A field's label in the page's locale (its id if the flow lost it).
    private func label(of id: String) -> String {
        flow.field(id).map { words(.piped($0.label)) } ?? id
    }

    /// A condition's value as the person knows it: an option's label,
    /// "Yes"/"No", a number as written.
    private func display(_ value: ConditionValue, of id: String) -> String {
        switch value {
        case .bool(let b): return words(.builtin(b ? .yes : .no))
        case .number(let n): return words.format(n)
        case .text(let s):
            guard let field = flow.field(id), field.type.isChoice else { return s }
            if s == "other" && field.other { return otherLabel(field) }
            return options(of: field).first { $0.id == s }?.label ?? s
        }
    }
}
