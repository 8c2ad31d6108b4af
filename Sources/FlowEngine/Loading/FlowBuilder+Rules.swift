import FlowKit

// Step rules (cross-field checks on Continue) and conditions (in `next` rules
// and `requiredIf`). Field references are recorded for pass 2, which checks
// them against the whole flow.
extension FlowBuilder {
    /// One entry of a step's `rules`: exactly one rule kind.
    mutating func stepRule(_ node: JSONNode, _ path: JSONPath, step: Int) -> StepRule? {
        guard let o = reader.object(node, path, "a rule") else { return nil }
        reader.checkKeys(o, allowed: Self.ruleKeys, in: "a rule")
        let kinds = ["equals", "notEquals", "before", "after", "requiredIf", "plugin"].filter { o.has($0) }
        guard kinds.count == 1 else {
            problem(path, kinds.isEmpty
                ? "a rule needs one of equals, notEquals, before, after, requiredIf or plugin"
                : "a rule has exactly one of equals, notEquals, before, after, requiredIf or plugin, not \(kinds.joined(separator: " and "))")
            return nil
        }
        let kindName = kinds[0]
        if o.has("if") && kindName != "requiredIf" { problem(path / "if", "\"if\" belongs to requiredIf rules") }
        if o.has("options") && kindName != "plugin" { problem(path / "options", "\"options\" belongs to plugin rules") }
        let message = o["message"].flatMap { reader.localized($0, path / "message", "the message") }
        let hint = o["hint"].flatMap { reader.localized($0, path / "hint", "the hint") }
        let level = self.level(o, path)
        let p = path / kindName
        guard let value = o[kindName] else { return nil }
        let kind: StepRule.Kind
        switch kindName {
        case "plugin":
            guard let name = reader.capabilityName(value, p) else { return nil }
            requireCapability(.stepValidator, name, p, "step validator")
            let options = o["options"].flatMap { reader.pluginOptions($0, path / "options") } ?? [:]
            checkOptions(.stepValidator, name, o["options"], at: path / "options", reference: path)
            kind = .plugin(PluginRule(name: name, options: options, message: message, hint: hint, level: level))
        case "requiredIf":
            guard let field = reader.string(value, p, "the field id") else { return nil }
            guard let c = o["if"] else {
                missing(o, "if", "the condition under which the field is required")
                return nil
            }
            guard let condition = condition(c, path / "if", step: step) else { return nil }
            references.ruleRefs.append(.init(step: step, path: path, kind: kindName, fields: [(field, p)], target: field))
            kind = .requiredIf(field: field, condition: condition)
        default:
            guard let items = reader.array(value, p, "two field ids", max: 2), items.count == 2 else {
                if case .array = value { problem(p, "expected exactly two field ids") }
                return nil
            }
            guard let a = reader.string(items[0], p / 0, "a field id"), let b = reader.string(items[1], p / 1, "a field id")
            else { return nil }
            if a == b {
                problem(p, "the rule compares \(quoted(a)) with itself")
                return nil
            }
            let targetIsFirst = kindName == "before" || kindName == "after"
            references.ruleRefs.append(.init(step: step, path: path, kind: kindName, fields: [(a, p / 0), (b, p / 1)],
                                    target: targetIsFirst ? a : b))
            switch kindName {
            case "equals": kind = .equals(a, b)
            case "notEquals": kind = .notEquals(a, b)
            case "before": kind = .before(a, b)
            default: kind = .after(a, b)
            }
        }
        return StepRule(kind: kind, message: message, hint: hint, level: level)
    }

    /// A condition (`if`, `requiredIf`, `visibleIf`): a field test, an
    /// expression, or `all`, `any`, `not`.
    ///
    /// - Parameter above: for a field's `visibleIf`, the field's index on
    ///   its step: the condition may read only the fields above it there.
    mutating func condition(_ node: JSONNode, _ path: JSONPath, step: Int, above: Int? = nil) -> Condition? {
        guard let o = reader.object(node, path, "a condition") else { return nil }
        reader.checkKeys(o, allowed: Self.conditionKeys, in: "a condition")
        let forms = ["field", "all", "any", "not", "expr"].filter { o.has($0) }
        guard forms.count == 1 else {
            problem(path, "a condition has exactly one of: field (with equals, in or notEmpty), all, any, not, expr")
            return nil
        }
        switch forms[0] {
        case "expr":
            guard requireFormat2(path / "expr", "\"expr\"") else { return nil }
            guard let e = expression(o["expr"] ?? .null, path / "expr") else { return nil }
            references.exprRefs.append(.init(step: step, fieldLimit: above, path: path / "expr", expression: e, computedField: nil))
            return .expr(e)
        case "all", "any":
            let key = forms[0]
            guard let items = reader.array(o[key] ?? .null, path / key, "a list of conditions", max: limits.maxConditionItems)
            else { return nil }
            if items.isEmpty {
                problem(path / key, "an empty \(quoted(key)) list (expected at least one condition)")
                return nil
            }
            var list: [Condition] = []
            for (i, item) in items.enumerated() {
                if let c = condition(item, path / key / i, step: step, above: above) { list.append(c) }
            }
            guard list.count == items.count else { return nil }
            return key == "all" ? .all(list) : .any(list)
        case "not":
            return condition(o["not"] ?? .null, path / "not", step: step, above: above).map(Condition.not)
        default:
            guard let field = reader.string(o["field"] ?? .null, path / "field", "the field id") else { return nil }
            let tests = ["equals", "in", "notEmpty"].filter { o.has($0) }
            guard tests.count == 1 else {
                problem(path, "a field condition has exactly one of equals, in or notEmpty")
                return nil
            }
            switch tests[0] {
            case "equals":
                guard let v = conditionValue(o["equals"] ?? .null, path / "equals") else { return nil }
                references.conditionLeaves.append(.init(step: step, fieldLimit: above, path: path, field: field, values: [(v, path / "equals")]))
                return .equals(field: field, value: v)
            case "in":
                guard let items = reader.array(o["in"] ?? .null, path / "in", "a list of values", max: limits.maxConditionItems)
                else { return nil }
                if items.isEmpty {
                    problem(path / "in", "an empty \"in\" list never holds (expected at least one value)")
                    return nil
                }
                var values: [(ConditionValue, JSONPath)] = []
                for (i, item) in items.enumerated() {
                    if let v = conditionValue(item, path / "in" / i) { values.append((v, path / "in" / i)) }
                }
                guard values.count == items.count else { return nil }
                references.conditionLeaves.append(.init(step: step, fieldLimit: above, path: path, field: field, values: values))
                return .oneOf(field: field, values: values.map(\.0))
            default:
                guard let b = reader.bool(o["notEmpty"] ?? .null, path / "notEmpty") else { return nil }
                references.conditionLeaves.append(.init(step: step, fieldLimit: above, path: path, field: field, values: []))
                return .notEmpty(field: field, expected: b)
            }
        }
    }

    private mutating func conditionValue(_ node: JSONNode, _ path: JSONPath) -> ConditionValue? {
        switch node {
        case .string(let s):
            guard s.utf8.count <= limits.maxStringBytes else {
                problem(path, "the string is longer than \(limits.maxStringBytes) bytes")
                return nil
            }
            return .text(s)
        case .bool(let b): return .bool(b)
        case .integer(let i): return .number(Double(i))
        case .number(let d): return .number(d)
        default:
            problem(path, "expected a string, a number or a boolean to compare with, got \(node.kindName)")
            return nil
        }
    }
}
