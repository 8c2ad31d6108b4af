import FlowKit

/// What a session's answers add up to at one moment: the path they predict,
/// the fields hidden on it (format 2 `visibleIf`), and the values of its
/// computed fields.
///
/// Everything that reads answers reads them through one of these, so an
/// answer on an abandoned branch and an answer to a hidden field count alike:
/// not given. Worked out by ``FlowSession/resolve(including:)`` and handed
/// down, so one page evaluates each condition and expression once.
struct Resolution: Sendable {
    /// The step indices of the path, in order.
    let route: [Int]
    /// Per step index: on the path (or the step the resolution was made for).
    let onPath: [Bool]
    /// Fields on the path whose `visibleIf` does not hold.
    let hidden: Set<String>
    /// The values of the computed fields on the path that are shown; a
    /// field whose expression has no value is absent.
    let computed: [String: ExprValue]

    /// Whether a field of a step on the path is shown.
    func shows(_ field: FieldDefinition) -> Bool { !hidden.contains(field.id) }
}

// Working out the resolution, and reading answers through it.
extension FlowSession {
    /// The path, hidden fields and computed values of the current answers.
    ///
    /// - Parameter extra: a step to resolve as if it were on the path too
    ///   (its rules are checked on it even when it is not).
    func resolve(including extra: Int? = nil) -> Resolution {
        // Without field logic or `next` rules the path is every step in
        // order, and nothing is hidden or computed: no answer is read, and
        // the flow keeps the one resolution all its sessions have.
        if let fixed = flow.fixedResolution { return fixed }
        let steps = flow.steps
        let state = ResolvingState(steps: steps.count)
        // The reader is made when a condition or expression first needs it:
        // making it copies the flow into its closures, and a flow without
        // field logic or conditional `next` rules never reads an answer here.
        var made: AnswerReader?
        func reader() -> AnswerReader {
            if let made { return made }
            let new = self.reader(state, secure: false)
            made = new
            return new
        }
        let hasFieldLogic = flow.hasFieldLogic
        var i = 0
        while i < steps.count {
            state.route.append(i)
            state.onPath[i] = true
            if hasFieldLogic { resolveFields(of: steps[i], state, reader()) }
            // Without `next` rules a step leads to the one after it.
            let next: Int?
            if steps[i].next.isEmpty {
                next = i + 1 < steps.count ? i + 1 : nil
            } else if case .step(let id)? = steps[i].next.first(where: { rule in
                rule.condition.map { $0.holds(reader()) } ?? true
            })?.target {
                next = flow.stepIndex[id]
            } else {
                next = nil
            }
            guard let next, next > i else { break }
            i = next
        }
        if let extra, extra < steps.count, !state.onPath[extra] {
            state.onPath[extra] = true
            if hasFieldLogic { resolveFields(of: steps[extra], state, reader()) }
        }
        return Resolution(route: state.route, onPath: state.onPath, hidden: state.hidden, computed: state.computed)
    }

    /// The step indices of the path the current answers predict.
    func route() -> [Int] { resolve().route }

    /// Which of a step's fields are shown, and what its computed fields
    /// give, in order: each reads only fields above it and earlier steps.
    private func resolveFields(of step: StepDefinition, _ state: ResolvingState, _ reader: AnswerReader) {
        for f in step.fields {
            if let c = f.visibleIf, !c.holds(reader) {
                state.hidden.insert(f.id)
                continue
            }
            guard let e = f.expression else { continue }
            var evaluator = ExpressionEvaluator(today: reader.today, value: reader.value)
            let value = evaluator.evaluate(e).rounded(decimals: f.decimals ?? 3)
            if value != .nothing { state.computed[f.id] = value }
        }
    }

    /// The mutable state of a resolution while it is worked out, which the
    /// reader of conditions and expressions sees as it grows.
    private final class ResolvingState {
        var route: [Int] = []
        var onPath: [Bool]
        var hidden: Set<String> = []
        var computed: [String: ExprValue] = [:]

        init(steps: Int) {
            onPath = Array(repeating: false, count: steps)
            route.reserveCapacity(steps)
        }
    }

    private func reader(_ state: ResolvingState, secure: Bool) -> AnswerReader {
        reader(today: clock.today, onPath: { state.onPath[$0] }, hidden: { state.hidden.contains($0) },
               computed: { state.computed[$0] }, secure: secure)
    }

    /// Answers as conditions and expressions read them on `r`.
    ///
    /// - Parameter secure: include secure values (step rules compare them:
    ///   "must match Password"); conditions and expressions never read them.
    func reader(_ r: Resolution, secure: Bool = false) -> AnswerReader {
        reader(today: clock.today, onPath: { r.onPath[$0] }, hidden: { r.hidden.contains($0) },
               computed: { r.computed[$0] }, secure: secure)
    }

    private func reader(
        today: CivilDate, onPath: @escaping (Int) -> Bool, hidden: @escaping (String) -> Bool,
        computed: @escaping (String) -> ExprValue?, secure: Bool
    ) -> AnswerReader {
        let flow = self.flow
        let answers = record.answers
        let secrets = secure ? scratch.secure : [:]
        let answer: (String) -> AnswerValue? = { id in
            guard let loc = flow.fieldLocation[id], onPath(loc.step), !hidden(id) else { return nil }
            let f = flow.steps[loc.step].fields[loc.field]
            switch f.type {
            case .computed: return computed(id)?.answer
            case .toggle: return answers[id] ?? .bool(false)
            case .secure: return secrets[id].map(AnswerValue.text)
            default: return answers[id]
            }
        }
        let value: (String) -> ExprValue = { id in
            guard let f = flow.field(id) else { return .nothing }
            guard f.type == .computed else { return ExprValue(answer(id), as: ExprType(reading: f.type) ?? .text) }
            let type = flow.computedTypes[id] ?? .text
            guard let loc = flow.fieldLocation[id], onPath(loc.step), !hidden(id), let v = computed(id) else {
                return type == .bool ? .bool(false) : .nothing
            }
            return v
        }
        return AnswerReader(today: today, answer: answer, value: value)
    }

    /// A field's answer as it counts on `r`: nil off the path, hidden, or
    /// not given; a computed field's value; an unset toggle `false`.
    func effectiveAnswer(_ field: FieldDefinition, in r: Resolution) -> AnswerValue? {
        guard let loc = flow.fieldLocation[field.id], r.onPath[loc.step], r.shows(field) else { return nil }
        switch field.type {
        case .computed: return r.computed[field.id]?.answer
        case .toggle: return record.answers[field.id] ?? .bool(false)
        case .secure: return scratch.secure[field.id].map(AnswerValue.text)
        default: return record.answers[field.id]
        }
    }
}
