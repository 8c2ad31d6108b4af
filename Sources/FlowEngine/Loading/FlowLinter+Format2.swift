import FlowKit

// Pass 2 for what format 2 adds: expressions are type-checked (computed
// fields first, in document order, so a later expression knows what an
// earlier computed field gives), and piped placeholders name fields a
// person has answered by then.
extension FlowLinter {
    /// Type-checks every expression: a computed field's gives its type, a
    /// condition's must be yes/no. Fills ``computedTypes``.
    mutating func checkExpressions(_ steps: [StepDefinition], fields: FieldTable) {
        let refs = references.exprRefs.filter { $0.computedField != nil } + references.exprRefs.filter { $0.computedField == nil }
        var failed: Set<String> = references.untypedFields
        for ref in refs {
            // A field whose own type is unknown has been reported already.
            if ref.expression.fieldIDs.contains(where: failed.contains) {
                if let id = ref.computedField { failed.insert(id) }
                continue
            }
            let types = computedTypes
            let linter = self
            let checker = ExpressionChecker { id in
                guard let f = fields[id] else {
                    return .unknown(suggestion: linter.reader.suggest(id, in: Array(fields.keys).sorted()))
                }
                if let why = linter.unreadable(id, fromStep: ref.step, above: ref.fieldLimit, steps: steps, fields: fields) {
                    return .refused(why)
                }
                if f.field.type == .computed {
                    guard let t = types[id] else { return .refused("\(quoted(id)) comes later (a computed field can read only the fields above it)") }
                    return .type(t)
                }
                return ExprType(reading: f.field.type).map(ExpressionChecker.FieldRead.type) ?? .refused("\(quoted(id)) cannot be read")
            }
            do {
                let type = try checker.type(of: ref.expression)
                if let id = ref.computedField {
                    computedTypes[id] = type
                } else if type != .bool {
                    problem(ref.path, "the expression \(quoted(ref.expression.source)) gives \(type.described); a condition must give a yes/no value (compare it, as in \"pageCount > 50\")")
                }
            } catch {
                problem(ref.path, "invalid expression \(quoted(ref.expression.source)) \(error.description)")
                if let id = ref.computedField { failed.insert(id) }
            }
        }
    }

    /// Each `{field}` placeholder names a field that is not secure and is
    /// on a step that can come earlier on a path to the text's step (any
    /// step, for Review and the success message).
    ///
    /// - Parameter stepIndex: nil when the step graph is broken (already
    ///   reported): then only "earlier in the file" is checked.
    mutating func checkPlaceholders(_ steps: [StepDefinition], fields: FieldTable, stepIndex: [String: Int]?) {
        guard !references.pipeRefs.isEmpty else { return }
        let before = stepIndex.map { predecessors(steps, stepIndex: $0) }
        for ref in references.pipeRefs {
            let at = "the placeholder {\(ref.field)} at position \(ref.position)"
            guard let f = fields[ref.field] else {
                problem(ref.path, "\(at) names the unknown field \(quoted(ref.field))\(fieldGuess(ref.field, fields))")
                continue
            }
            if f.field.type == .secure {
                problem(ref.path, "\(at) names the secure field \(quoted(ref.field)); a secure value is never shown")
                continue
            }
            guard let step = ref.step else { continue }
            if f.step >= step {
                problem(ref.path, "\(at) names \(quoted(ref.field)) on \(f.step == step ? "this step" : "the later step \(quoted(steps[f.step].id))"); a text can show answers of earlier steps only")
            } else if let before, !before[step].contains(f.step) {
                problem(ref.path, "\(at) names \(quoted(ref.field)) on step \(quoted(steps[f.step].id)), which no path to this step passes through")
            }
        }
    }

    /// For each step, the steps some path passes through before it.
    private func predecessors(_ steps: [StepDefinition], stepIndex: [String: Int]) -> [Set<Int>] {
        var before = Array(repeating: Set<Int>(), count: steps.count)
        // Targets only point forward, so one pass in document order suffices.
        for i in steps.indices {
            for j in successors(of: i, steps, stepIndex: stepIndex) where j > i { before[j].formUnion(before[i].union([i])) }
        }
        return before
    }
}
