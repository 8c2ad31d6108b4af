import FlowKit

/// What pass 1 (``FlowBuilder``) records for pass 2: everything that names
/// another part of the flow, with where it is written.
struct FlowReferences {
    /// A field test in a condition.
    struct ConditionLeaf {
        var step: Int
        /// In a field's `visibleIf`: the field's index, above which the
        /// condition may read fields of its own step.
        var fieldLimit: Int?
        var path: JSONPath
        var field: String
        /// The compared values and where they are; empty for `notEmpty`.
        var values: [(ConditionValue, JSONPath)]
    }

    /// A `next` target.
    struct NextRef {
        var step: Int
        var path: JSONPath
        var target: String
    }

    /// A step rule's fields.
    struct RuleRef {
        var step: Int
        var path: JSONPath
        var kind: String
        /// The fields the rule names: the target field first when there is one.
        var fields: [(String, JSONPath)]
        /// The field the rule's message goes to, which must be on the rule's step.
        var target: String
    }

    /// An expression: a computed field's `expr`, or an `{"expr": …}` condition.
    struct ExprRef {
        var step: Int
        /// As ``ConditionLeaf/fieldLimit``.
        var fieldLimit: Int?
        var path: JSONPath
        var expression: Expression
        /// The computed field whose value this is; nil for a condition, which
        /// must be yes/no.
        var computedField: String?
    }

    /// A `{field}` placeholder in a piped text.
    struct PipeRef {
        /// The step whose text it is (it may read earlier steps); nil for
        /// Review and the success message.
        var step: Int?
        var path: JSONPath
        var field: String
        var position: Int
    }

    var conditionLeaves: [ConditionLeaf] = []
    var exprRefs: [ExprRef] = []
    /// Some piped text has a placeholder or an escaped brace.
    var pipes = false
    var pipeRefs: [PipeRef] = []
    var nextRefs: [NextRef] = []
    var ruleRefs: [RuleRef] = []
    /// Fields whose type could not be read: later checks skip them.
    var untypedFields: Set<String> = []
    /// Where each decoded step is, in document order.
    var stepPaths: [JSONPath] = []
    var hasReview = false
}

/// Pass 2 of loading: the checks that need the whole flow. Unique step and
/// field ids; `next` targets that exist and only go forward (so the step
/// graph has no cycles), and steps that can be reached; conditions and step
/// rules that read fields which exist, come no later than their step, and
/// have comparable types and values.
///
/// Runs only when pass 1 found no problem, so it can trust the shapes.
struct FlowLinter {
    var reader: DocumentReader
    let references: FlowReferences
    /// The type of each computed field's value, once ``check(_:)`` ran.
    var computedTypes: [String: ExprType] = [:]

    init(reader: DocumentReader, references: FlowReferences) {
        self.reader = reader
        self.references = references
    }

    mutating func problem(_ path: JSONPath, _ message: String) {
        reader.sink.add(path, message)
    }

    /// Where each field of the flow is: its step, its index there, its
    /// definition, its path.
    typealias FieldTable = [String: (step: Int, index: Int, field: FieldDefinition, path: JSONPath)]

    /// Checks `steps` as a whole; problems go to the reader's sink.
    mutating func check(_ steps: [StepDefinition]) {
        let (stepIndex, fields) = uniqueIDs(steps)
        guard reader.sink.isEmpty else { return }
        let graphOK = checkNextTargets(steps, stepIndex: stepIndex)
        if graphOK { checkReachability(steps, stepIndex: stepIndex) }
        checkExpressions(steps, fields: fields)
        checkConditions(steps, fields: fields)
        checkStepRules(steps, fields: fields)
        checkPlaceholders(steps, fields: fields, stepIndex: graphOK ? stepIndex : nil)
    }

    /// Step ids are unique, and field ids are unique across the whole flow.
    private mutating func uniqueIDs(_ steps: [StepDefinition]) -> (stepIndex: [String: Int], fields: FieldTable) {
        var stepIndex: [String: Int] = [:]
        for (i, s) in steps.enumerated() {
            if let first = stepIndex[s.id] {
                problem(references.stepPaths[i] / "id", "duplicate step id \(quoted(s.id)) (first used at \(references.stepPaths[first] / "id"))")
            } else {
                stepIndex[s.id] = i
            }
        }
        var fields: FieldTable = [:]
        for (i, s) in steps.enumerated() {
            for (j, f) in s.fields.enumerated() {
                let p = references.stepPaths[i] / "fields" / j
                if let first = fields[f.id] {
                    problem(p / "id", "duplicate field id \(quoted(f.id)) (first used at \(first.path / "id")); field ids are unique in the whole flow")
                } else {
                    fields[f.id] = (i, j, f, p)
                }
            }
        }
        return (stepIndex, fields)
    }

    /// `next` targets exist and come later in the file (so there are no
    /// cycles). Returns whether the graph is sound enough to walk.
    private mutating func checkNextTargets(_ steps: [StepDefinition], stepIndex: [String: Int]) -> Bool {
        var graphOK = true
        for ref in references.nextRefs {
            switch ref.target {
            case "complete":
                continue
            case "review":
                if !references.hasReview {
                    problem(ref.path, "the flow has no review page, so \"review\" is not a target (use \"complete\", or add \"review\")")
                    graphOK = false
                }
            default:
                guard let t = stepIndex[ref.target] else {
                    let guess = reader.didYouMean(ref.target, in: steps.map(\.id))
                    problem(ref.path, "unknown step \(quoted(ref.target)) (\(guess)expected a later step id, \"review\" or \"complete\")")
                    graphOK = false
                    continue
                }
                if t == ref.step {
                    problem(ref.path, "the step goes to itself, which is a cycle (a target must come later in the file)")
                    graphOK = false
                } else if t < ref.step {
                    problem(ref.path, "\(quoted(ref.target)) comes earlier in the file, so this would go backwards (targets must come later: next rules cannot form cycles)")
                    graphOK = false
                }
            }
        }
        return graphOK
    }

    /// Each field test of a condition reads a readable field and compares it
    /// with a value of its type.
    private mutating func checkConditions(_ steps: [StepDefinition], fields: FieldTable) {
        for leaf in references.conditionLeaves {
            if let why = unreadable(leaf.field, fromStep: leaf.step, above: leaf.fieldLimit, steps: steps, fields: fields) {
                problem(leaf.path / "field", why)
                continue
            }
            guard let f = fields[leaf.field], !references.untypedFields.contains(leaf.field) else { continue }
            for (value, path) in leaf.values { checkConditionValue(value, at: path, field: f.field) }
        }
    }

    /// Step rules name fields that exist, on their step or earlier, of types
    /// the rule can compare.
    private mutating func checkStepRules(_ steps: [StepDefinition], fields: FieldTable) {
        for ref in references.ruleRefs {
            var types: [FieldType] = []
            for (name, path) in ref.fields {
                guard let f = fields[name] else {
                    problem(path, "the rule names the unknown field \(quoted(name))\(fieldGuess(name, fields))")
                    continue
                }
                if name == ref.target && f.step != ref.step {
                    problem(path, "\(quoted(name)) is on step \(quoted(steps[f.step].id)); the rule's message goes to this field, so it must be on this step")
                } else if f.step > ref.step {
                    problem(path, "\(quoted(name)) is on the later step \(quoted(steps[f.step].id)); rules can use this step's fields and earlier ones")
                }
                if f.field.type == .computed {
                    problem(path, "\(quoted(name)) is computed; step rules compare fields a person fills in (use an expression in a condition)")
                    continue
                }
                if !references.untypedFields.contains(name) { types.append(f.field.type) }
            }
            guard types.count == ref.fields.count else { continue }
            switch ref.kind {
            case "equals", "notEquals":
                if !(types[0] == types[1] || (types[0].isTextual && types[1].isTextual)) {
                    problem(ref.path / ref.kind, "cannot compare a \(types[0].rawValue) field with a \(types[1].rawValue) field")
                }
            case "before", "after":
                let comparable: Set<FieldType> = [.date, .time, .number]
                if types[0] != types[1] || !comparable.contains(types[0]) {
                    problem(ref.path / ref.kind, "\(quoted(ref.kind)) compares two date, two time or two number fields, not a \(types[0].rawValue) and a \(types[1].rawValue)")
                }
            case "requiredIf":
                if types[0] == .toggle {
                    problem(ref.path / ref.kind, "a toggle always has a value, so requiredIf cannot apply to it")
                }
            default:
                break
            }
        }
    }

    private mutating func checkReachability(_ steps: [StepDefinition], stepIndex: [String: Int]) {
        guard !steps.isEmpty else { return }
        var reached = Array(repeating: false, count: steps.count)
        reached[0] = true
        // Targets only point forward, so one pass in document order suffices.
        for i in steps.indices where reached[i] {
            for j in successors(of: i, steps, stepIndex: stepIndex) { reached[j] = true }
        }
        for (i, s) in steps.enumerated() where !reached[i] {
            problem(references.stepPaths[i], "the step \(quoted(s.id)) can never be reached: no next rule leads to it and the step before it does not go on to it")
        }
    }

    /// ` (did you mean "x"?)` for an unknown field `name` that is a likely typo.
    func fieldGuess(_ name: String, _ fields: FieldTable) -> String {
        reader.didYouMeanSuffix(name, in: Array(fields.keys).sorted())
    }

    /// The steps Continue can go to from step `i`: its `next` targets, or the
    /// step after it.
    func successors(of i: Int, _ steps: [StepDefinition], stepIndex: [String: Int]) -> [Int] {
        guard !steps[i].next.isEmpty else { return i + 1 < steps.count ? [i + 1] : [] }
        return steps[i].next.compactMap { rule in
            if case .step(let t) = rule.target { stepIndex[t] } else { nil }
        }
    }

    /// Why a condition or expression on step `step` cannot read field
    /// `name`, or nil when it can: the field exists, is on this step or an
    /// earlier one (above the field, for a field's own `visibleIf` and
    /// `expr`), and is not secure.
    func unreadable(_ name: String, fromStep step: Int, above: Int?, steps: [StepDefinition], fields: FieldTable)
        -> String?
    {
        guard let f = fields[name] else {
            return "the condition reads the unknown field \(quoted(name))\(fieldGuess(name, fields))"
        }
        if f.step > step {
            return "\(quoted(name)) is on the later step \(quoted(steps[f.step].id)); a condition can read this step's fields and earlier ones"
        }
        if f.step == step, let above, f.index >= above {
            return f.index == above
                ? "a field cannot depend on itself"
                : "\(quoted(name)) comes after this field on its step; a field's visibleIf and expr can read the fields above it and earlier steps"
        }
        if f.field.type == .secure {
            return "a condition cannot read the secure field \(quoted(name)) (secure values are not kept across restarts)"
        }
        return nil
    }

    private mutating func checkConditionValue(_ value: ConditionValue, at path: JSONPath, field: FieldDefinition) {
        if field.type == .computed {
            let fits: Bool
            switch (computedTypes[field.id], value) {
            case (nil, _): return  // its expression did not check
            case (.number?, .number), (.bool?, .bool), (.text?, .text): fits = true
            case (.date?, .text(let s)): fits = CivilDate(iso: s) != nil
            default: fits = false
            }
            if !fits, let type = computedTypes[field.id] {
                problem(path, "\(quoted(field.id)) computes \(type.described), so compare it with one")
            }
            return
        }
        switch (field.type, value) {
        case (.choice, .text(let s)), (.multichoice, .text(let s)):
            guard field.optionsFrom == nil else { return }  // options are only known when a session starts
            let ids = field.options.map(\.id) + (field.other ? ["other"] : [])
            if !ids.contains(s) {
                let guess = reader.didYouMean(s, in: ids)
                problem(path, "\(quoted(s)) is not an option of \(quoted(field.id)) (\(guess)expected one of \(ids.joined(separator: ", ")))")
            }
        case (.toggle, .bool), (.number, .number), (.text, .text), (.multiline, .text), (.email, .text):
            return
        case (.date, .text(let s)):
            if CivilDate(iso: s) == nil { problem(path, "\(quoted(s)) is not a date (expected YYYY-MM-DD)") }
        case (.time, .text(let s)):
            if CivilTime(iso: s) == nil { problem(path, "\(quoted(s)) is not a time (expected HH:MM)") }
        default:
            problem(path, "\(quoted(field.id)) is a \(field.type.rawValue) field, so compare it with \(field.type.valueDescription)")
        }
    }
}
