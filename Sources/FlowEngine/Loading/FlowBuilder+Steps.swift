import FlowKit

// Steps, and where Continue goes from each (`next`).
extension FlowBuilder {
    /// One step; `index` is its position among the steps read so far.
    mutating func step(_ node: JSONNode, _ path: JSONPath, index: Int) -> StepDefinition? {
        guard let o = reader.object(node, path, "a step") else { return nil }
        reader.checkKeys(o, allowed: Self.stepKeys, in: "a step")
        var id: String?
        if let n = o["id"], let s = reader.identifier(n, path / "id", "the step id") {
            if s == "review" || s == "complete" {
                problem(path / "id", "\(quoted(s)) is reserved and cannot be a step id")
            } else {
                id = s
            }
        } else if o["id"] == nil {
            missing(o, "id", "the step's id")
        }
        var kind = StepKind.form
        if let n = o["kind"], let s = reader.string(n, path / "kind", "the step kind") {
            if let k = StepKind(rawValue: s) {
                kind = k
            } else {
                problem(path / "kind", "unknown step kind \(quoted(s)) (expected form or content)")
            }
        }
        var title: LocalizedText?
        if let n = o["title"] { title = piped(n, path / "title", "the title", step: index) } else { missing(o, "title", "a string or translations") }
        // Filled in below; returned only when its id and title were read.
        var s = StepDefinition(id: id ?? "", kind: kind, title: title ?? "")
        s.description = o["description"].flatMap { piped($0, path / "description", "the description", step: index) }
        switch kind {
        case .content:
            s.body = o["body"].flatMap { piped($0, path / "body", "the body", step: index) }
            s.icon = o["icon"].flatMap { reader.iconName($0, path / "icon") }
            for key in ["fields", "rules"] where o.has(key) {
                problem(path / key, "a content step has no \(key) (use \"kind\": \"form\")")
            }
        case .form:
            for key in ["body", "icon"] where o.has(key) {
                problem(path / key, "\(quoted(key)) applies only to content steps (\"kind\": \"content\")")
            }
            s.fields = self.fields(o, path, title: title, step: index)
            if let n = o["rules"], let items = reader.array(n, path / "rules", "the list of rules", max: limits.maxRulesPerStep) {
                s.rules = items.enumerated().compactMap { i, item in stepRule(item, path / "rules" / i, step: index) }
            }
        }
        s.next = o["next"].map { self.next($0, path / "next", step: index) } ?? []
        guard id != nil, title != nil else { return nil }
        return s
    }

    /// A form step's `fields`. The only field of a step may leave out its
    /// label: it is the step's `title` (a one-question step whose title is
    /// the question).
    private mutating func fields(_ o: ObjectView, _ path: JSONPath, title: LocalizedText?, step: Int) -> [FieldDefinition] {
        guard let n = o["fields"] else {
            missing(o, "fields", "a list of fields, or \"kind\": \"content\"")
            return []
        }
        guard let items = reader.array(n, path / "fields", "the list of fields", max: limits.maxFieldsPerStep) else {
            return []
        }
        if items.isEmpty { problem(path / "fields", "a form step needs at least one field (or use \"kind\": \"content\")") }
        fieldCount += items.count
        let onlyField = items.count == 1
        return items.enumerated().compactMap { i, item in
            field(item, path / "fields" / i, isOnlyField: onlyField, stepTitle: title, step: step, index: i)
        }
    }

    /// `next`: a step id, or a list of `{"if": …, "goto": …}` ending in a default.
    private mutating func next(_ node: JSONNode, _ path: JSONPath, step: Int) -> [NextRule] {
        if case .string(let s) = node {
            references.nextRefs.append(.init(step: step, path: path, target: s))
            return [NextRule(condition: nil, target: target(s))]
        }
        guard let items = reader.array(node, path, "the next rules (or a step id)", max: limits.maxRulesPerStep) else { return [] }
        if items.isEmpty {
            problem(path, "the next list is empty (leave \"next\" out to go on to the following step)")
            return []
        }
        var rules: [NextRule] = []
        var defaultAt: Int?
        for (i, item) in items.enumerated() {
            let p = path / i
            guard let o = reader.object(item, p, "a next rule") else { continue }
            reader.checkKeys(o, allowed: Self.nextKeys, in: "a next rule")
            var condition: Condition?
            if let c = o["if"] { condition = self.condition(c, p / "if", step: step) }
            if let d = defaultAt {
                problem(p, "this rule comes after the default rule at [\(d)] and can never apply (the rule without \"if\" must be last)")
            }
            if o["if"] == nil { defaultAt = defaultAt ?? i }
            guard let g = o["goto"] else {
                missing(o, "goto", "a later step id, \"review\" or \"complete\"")
                continue
            }
            guard let s = reader.string(g, p / "goto", "the target step") else { continue }
            references.nextRefs.append(.init(step: step, path: p / "goto", target: s))
            rules.append(NextRule(condition: condition, target: target(s)))
        }
        if defaultAt == nil {
            problem(path, "the next list has no default: its last rule must have no \"if\" (add {\"goto\": …})")
        }
        return rules
    }

    private func target(_ s: String) -> StepTarget {
        switch s {
        case "review": return .review
        case "complete": return .complete
        default: return .step(s)
        }
    }
}
