import FlowKit

/// A value a condition compares an answer with.
package enum ConditionValue: Sendable, Hashable {
    case text(String)
    case bool(Bool)
    case number(Double)

    /// True when `answer` equals this value; for a multiple choice, when the
    /// option is among those selected.
    func matches(_ answer: AnswerValue?) -> Bool {
        switch (self, answer) {
        case (.text(let t), .text(let a)?): return t == a
        case (.text(let t), .list(let l)?): return l.contains(t)
        case (.bool(let b), .bool(let a)?): return b == a
        case (.number(let n), let a?): return a.doubleValue == n
        default: return false
        }
    }
}

/// Answers as conditions and expressions read them: what a session's
/// answers add up to at one moment (its path, the fields shown, the
/// computed values).
struct AnswerReader {
    /// The day `today` means, from the engine's clock.
    let today: CivilDate
    /// A field's answer as it counts: nil when not given, on a step off the
    /// path, or hidden by its `visibleIf`. An unset toggle is `false`.
    let answer: (String) -> AnswerValue?
    /// A field's value as an expression reads it (typed by the field).
    let value: (String) -> ExprValue
}

/// A condition on answers, as in a `next` rule's `if`, `requiredIf` or a
/// field's `visibleIf`.
///
/// A field whose step is not on the current path, or which is hidden,
/// counts as unanswered, so an abandoned branch never steers the flow.
package indirect enum Condition: Sendable, Hashable {
    /// `{"field": F, "equals": v}`.
    case equals(field: String, value: ConditionValue)
    /// `{"field": F, "in": [v, …]}`.
    case oneOf(field: String, values: [ConditionValue])
    /// `{"field": F, "notEmpty": true}`; with `false`, the field is empty.
    case notEmpty(field: String, expected: Bool)
    /// `{"all": [c, …]}`: every condition holds (true when empty).
    case all([Condition])
    /// `{"any": [c, …]}`: at least one holds (false when empty).
    case any([Condition])
    /// `{"not": c}`.
    case not(Condition)
    /// Format 2: `{"expr": "pageCount > 50"}`, a yes/no expression.
    case expr(Expression)

    /// Evaluates the condition on the answers `reader` gives.
    func holds(_ reader: AnswerReader) -> Bool {
        switch self {
        case .equals(let f, let v): return v.matches(reader.answer(f))
        case .oneOf(let f, let vs):
            let a = reader.answer(f)
            return vs.contains { $0.matches(a) }
        case .notEmpty(let f, let expected):
            let present = reader.answer(f).map { !isBlank($0) } ?? false
            return present == expected
        case .all(let cs): return cs.allSatisfy { $0.holds(reader) }
        case .any(let cs): return cs.contains { $0.holds(reader) }
        case .not(let c): return !c.holds(reader)
        case .expr(let e):
            var evaluator = ExpressionEvaluator(today: reader.today, value: reader.value)
            return evaluator.holds(e)
        }
    }

    /// Whether an expression (which may read the date) is part of it.
    var readsExpression: Bool {
        switch self {
        case .equals, .oneOf, .notEmpty: return false
        case .all(let cs), .any(let cs): return cs.contains(where: \.readsExpression)
        case .not(let c): return c.readsExpression
        case .expr: return true
        }
    }

    /// Every field id the condition reads.
    var fieldIDs: [String] {
        switch self {
        case .equals(let f, _), .oneOf(let f, _), .notEmpty(let f, _): return [f]
        case .all(let cs), .any(let cs): return cs.flatMap(\.fieldIDs)
        case .not(let c): return c.fieldIDs
        case .expr(let e): return e.fieldIDs
        }
    }
}

/// True for an answer that counts as not given: blank text or an empty list.
func isBlank(_ value: AnswerValue) -> Bool {
    switch value {
    case .text(let s):
        // Most answers start with a visible ASCII character: no scalar's
        // properties are looked up for them.
        if let first = s.utf8.first, first > 0x20, first < 0x80 { return false }
        return s.unicodeScalars.allSatisfy { $0.properties.isWhitespace }
    case .list(let l): return l.isEmpty
    case .bool, .integer, .number: return false
    }
}

/// Where a `next` rule leads.
package enum StepTarget: Sendable, Hashable, CustomStringConvertible {
    /// A later step, by id.
    case step(String)
    /// Review (only in a flow that has one).
    case review
    /// The end of the steps: Review when the flow has one, otherwise the
    /// Continue that reaches it finishes the flow.
    case complete

    /// The target as written in a flow file.
    package var description: String {
        switch self {
        case .step(let id): return id
        case .review: return "review"
        case .complete: return "complete"
        }
    }
}

/// One ordered branching rule. The first whose condition holds wins; a rule
/// without a condition is the default and must come last.
package struct NextRule: Sendable, Hashable {
    /// The rule's `if`; nil for the default rule.
    package let condition: Condition?
    /// The rule's `goto`.
    package let target: StepTarget
}

/// A rule that checks a step's fields together.
package struct StepRule: Sendable, Hashable {
    /// What the rule checks.
    package enum Kind: Sendable, Hashable {
        /// The two fields must be equal (confirm password); the error goes to the second.
        case equals(String, String)
        /// The two fields must differ; the error goes to the second.
        case notEquals(String, String)
        /// The first must be before (less than) the second; the error goes to the first.
        case before(String, String)
        /// The first must be after (greater than) the second; the error goes to the first.
        case after(String, String)
        /// The field is required when the condition holds.
        case requiredIf(field: String, condition: Condition)
        /// A plugin step validator.
        case plugin(PluginRule)
    }

    /// What the rule checks.
    package let kind: Kind
    /// Replaces the default message.
    package let message: LocalizedText?
    /// Says what the rule wants before the person breaks it ("Required for
    /// loans"); replaces the built-in description (and a plugin's own).
    package let hint: LocalizedText?
    /// Format 2: a `warning` is shown with its field (or the step) and
    /// never stops Continue.
    package let level: IssueLevel

    /// The field an error of this rule is attached to (`nil` for a plugin).
    package var targetField: String? {
        switch kind {
        case .equals(_, let b), .notEquals(_, let b): return b
        case .before(let a, _), .after(let a, _): return a
        case .requiredIf(let f, _): return f
        case .plugin: return nil
        }
    }
}

/// `form` steps have fields; `content` steps show a title, a body and an icon.
package enum StepKind: String, Sendable, Hashable, Codable {
    case form, content
}

/// One step of a flow.
///
/// Its values live in one final class, as a field's do
/// (``FieldDefinition``): the moves, the checks and the pages take a step
/// out of the flow's array for each call, and a copy of nine values (some
/// twenty references with the texts) cost some 400 instructions to make
/// and release, about 2,000 times in flowd-bench's mixed rounds.
package struct StepDefinition: Sendable, Hashable {
    /// The step's values, behind one reference (``SharedValues``).
    fileprivate struct Values: Sendable, Hashable {
        var id: String
        var kind: StepKind
        var title: LocalizedText
        var description: LocalizedText?
        var body: LocalizedText?
        var icon: String?
        var fields: [FieldDefinition] = []
        var rules: [StepRule] = []
        var next: [NextRule] = []
    }

    private var stored: SharedValues<Values>

    /// A step with an id, a kind and a title; the loader sets the rest.
    init(id: String, kind: StepKind, title: LocalizedText) {
        stored = SharedValues(Values(id: id, kind: kind, title: title))
    }

    /// Unique among the flow's steps; never `review` or `complete`.
    package internal(set) var id: String {
        get { stored.values.id }
        set { stored.edit { $0.id = newValue } }
    }
    /// `form` or `content`.
    package internal(set) var kind: StepKind {
        get { stored.values.kind }
        set { stored.edit { $0.kind = newValue } }
    }
    /// The step's heading.
    package internal(set) var title: LocalizedText {
        get { stored.values.title }
        set { stored.edit { $0.title = newValue } }
    }
    /// A line under the title.
    package internal(set) var description: LocalizedText? {
        get { stored.values.description }
        set { stored.edit { $0.description = newValue } }
    }
    /// Content steps: the text.
    package internal(set) var body: LocalizedText? {
        get { stored.values.body }
        set { stored.edit { $0.body = newValue } }
    }
    /// Content steps: an optional freedesktop icon name.
    package internal(set) var icon: String? {
        get { stored.values.icon }
        set { stored.edit { $0.icon = newValue } }
    }
    /// Form steps: the fields in order (empty for content steps).
    package internal(set) var fields: [FieldDefinition] {
        get { stored.values.fields }
        set { stored.edit { $0.fields = newValue } }
    }
    /// Form steps: rules over several fields.
    package internal(set) var rules: [StepRule] {
        get { stored.values.rules }
        set { stored.edit { $0.rules = newValue } }
    }
    /// The branching rules; empty means "the next step in the file" (or the end).
    package internal(set) var next: [NextRule] {
        get { stored.values.next }
        set { stored.edit { $0.next = newValue } }
    }

    /// The step as a plugin sees it, in `locale`.
    package func info(locale: String) -> StepInfo {
        StepInfo(id: id, title: title.resolve(locale), fields: fields.map { $0.info(locale: locale) })
    }
}
