import FlowKit

/// What the built-in rules need besides the value: the day, and the field's
/// current options. Rules say what is wrong as a ``SessionMessage``; the
/// presentation puts it into words.
struct ValidationContext {
    let today: CivilDate
    /// The options providers gave, by field id; they replace a field's own.
    let dynamicOptions: [String: [ChoiceOption]]

    /// The options a choice field offers now (the provider's, else the
    /// flow's), read where they are: nothing is copied per check.
    func options(_ field: FieldDefinition) -> OfferedOptions {
        if !dynamicOptions.isEmpty, let provided = dynamicOptions[field.id] { return .provided(provided) }
        return .flow(field.options)
    }

    /// The field's custom message for `rule`, else the built-in `key`.
    func message(_ field: FieldDefinition, _ rule: FieldRule, _ key: BuiltinString, _ args: [String: String] = [:])
        -> SessionMessage
    {
        message(field, rule, key, arguments: args.mapValues(SessionMessage.verbatim))
    }

    /// The same, with one argument put into words by the locale (a date or
    /// a number).
    func message(
        _ field: FieldDefinition, _ rule: FieldRule, _ key: BuiltinString, argument name: String, _ value: SessionMessage
    ) -> SessionMessage {
        message(field, rule, key, arguments: [name: value])
    }

    private func message(
        _ field: FieldDefinition, _ rule: FieldRule, _ key: BuiltinString, arguments: [String: SessionMessage]
    ) -> SessionMessage {
        if let custom = field.messages[rule] { return .flow(custom, arguments) }
        return .builtin(key, arguments)
    }
}

/// A choice field's options as the rules read them: their ids only.
enum OfferedOptions {
    case provided([ChoiceOption])
    case flow([OptionDefinition])

    var isEmpty: Bool {
        switch self {
        case .provided(let options): return options.isEmpty
        case .flow(let options): return options.isEmpty
        }
    }

    func contains(_ id: String) -> Bool {
        switch self {
        case .provided(let options): return options.contains { $0.id == id }
        case .flow(let options): return options.contains { $0.id == id }
        }
    }

    /// The ids, for many look-ups.
    var ids: Set<String> {
        switch self {
        case .provided(let options): return Set(options.map(\.id))
        case .flow(let options): return Set(options.map(\.id))
        }
    }
}

enum FieldValidation {
    /// The first built-in rule `value` breaks, as a message, or nil.
    ///
    /// Order: required (and mustBeOn), format, length, pattern, email,
    /// number rules, date bounds, options, selection counts, Other's text.
    /// A length error hides the pattern check, so the pattern never runs on a
    /// value longer than the field allows.
    static func error(
        _ field: FieldDefinition, value: AnswerValue?, otherText: String?, context c: ValidationContext
    ) -> SessionMessage? {
        if field.type == .toggle {
            let on = value?.boolValue ?? false
            return field.mustBeOn && !on ? c.message(field, .mustBeOn, .mustBeOn) : nil
        }
        let options = field.type.isChoice ? c.options(field) : nil
        if let options, options.isEmpty, !field.other, field.required {
            return .builtin(.noOptions)
        }
        guard let value, !isBlank(value) else {
            if field.type == .multichoice, let min = field.minSelected, min > 0 {
                return c.message(field, .minSelected, .minSelected, ["min": String(min)])
            }
            guard field.required else { return nil }
            return c.message(field, .required, field.type.isChoice ? .requiredChoice : .required)
        }
        switch field.type {
        case .text, .multiline, .secure, .email:
            guard case .text(let s) = value else { return nil }
            let length = s.unicodeScalars.count
            if let min = field.minLength, length < min {
                return c.message(field, .minLength, .minLength, ["min": String(min)])
            }
            if let max = field.effectiveMaxLength, length > max {
                return c.message(field, .maxLength, .maxLength, ["max": String(max)])
            }
            if let p = field.pattern, !p.matches(s) { return c.message(field, .pattern, .pattern) }
            if field.type == .email, !isEmailAddress(s) { return c.message(field, .email, .email) }
        case .number:
            guard let d = value.doubleValue else { return nil }
            if field.integer, d.rounded() != d { return c.message(field, .integer, .integer) }
            if let min = field.minimum, d < min {
                return c.message(field, .minimum, .minimum, argument: "min", .number(min))
            }
            if let max = field.maximum, d > max {
                return c.message(field, .maximum, .maximum, argument: "max", .number(max))
            }
        case .date:
            guard case .text(let s) = value, let d = CivilDate(iso: s) else { return c.message(field, .format, .dateFormat) }
            if let bound = field.after, case let b = bound.resolve(today: c.today), !(d > b) {
                return c.message(field, .after, bound == .today ? .dateAfterToday : .dateAfter, argument: "date", .date(b))
            }
            if let bound = field.before, case let b = bound.resolve(today: c.today), !(d < b) {
                return c.message(field, .before, bound == .today ? .dateBeforeToday : .dateBefore, argument: "date", .date(b))
            }
        case .time:
            guard case .text(let s) = value, CivilTime(iso: s) != nil else { return c.message(field, .format, .timeFormat) }
        case .choice:
            guard case .text(let s) = value else { return nil }
            if s == "other" && field.other {
                if (otherText.map { isBlank(.text($0)) } ?? true) { return c.message(field, .other, .otherRequired) }
            } else if !(options?.contains(s) ?? false) {
                return c.message(field, .option, .invalidOption)
            }
        case .multichoice:
            guard case .list(let l) = value else { return nil }
            // A few choices are looked up one by one; many through a set.
            let offered: (String) -> Bool
            if l.count > 8, let ids = options?.ids { offered = ids.contains } else { offered = { options?.contains($0) ?? false } }
            if l.contains(where: { !offered($0) && !($0 == "other" && field.other) }) {
                return c.message(field, .option, .invalidOption)
            }
            if let min = field.minSelected, l.count < min {
                return c.message(field, .minSelected, .minSelected, ["min": String(min)])
            }
            if let max = field.maxSelected, l.count > max {
                return c.message(field, .maxSelected, .maxSelected, ["max": String(max)])
            }
            if l.contains("other") && field.other && (otherText.map { isBlank(.text($0)) } ?? true) {
                return c.message(field, .other, .otherRequired)
            }
        case .toggle, .computed:
            break
        }
        return nil
    }

    /// What a step's cross-field rules find, keyed by the field they attach
    /// to: errors, and the findings of rules of level `warning`. `reader`
    /// gives the effective value of any field (secure values included); a
    /// rule whose field is `hidden` does not apply.
    static func stepRuleIssues(
        _ step: StepDefinition, reader: AnswerReader, hidden: Set<String>, flow: FlowDefinition
    ) -> (errors: FieldIssues, warnings: FieldIssues) {
        var errors: FieldIssues = [:]
        var warnings: FieldIssues = [:]
        let answer = reader.answer
        for rule in step.rules {
            guard let target = rule.targetField, !hidden.contains(target) else { continue }
            let isWarning = rule.level == .warning
            if (isWarning ? warnings[target] : errors[target]) != nil { continue }
            let custom = rule.message.map { SessionMessage.flow($0) }
            func report(_ message: SessionMessage) {
                if isWarning { warnings[target] = message } else { errors[target] = message }
            }
            func fail(_ key: BuiltinString, other: String) {
                let label = flow.field(other).map { SessionMessage.piped($0.label) } ?? .verbatim(other)
                report(custom ?? .builtin(key, ["field": label]))
            }
            switch rule.kind {
            case .equals(let a, let b), .notEquals(let a, let b):
                guard let x = present(answer(a)), let y = present(answer(b)) else { continue }
                let mustEqual = if case .equals = rule.kind { true } else { false }
                if sameValue(x, y) != mustEqual { fail(mustEqual ? .mustEqual : .mustDiffer, other: a) }
            case .before(let a, let b), .after(let a, let b):
                guard let x = present(answer(a)), let y = present(answer(b)), let order = compare(x, y) else { continue }
                let isBefore = if case .before = rule.kind { true } else { false }
                let isNumber = x.doubleValue != nil
                if isBefore && order >= 0 { fail(isNumber ? .mustBeLess : .mustBeBefore, other: b) }
                if !isBefore && order <= 0 { fail(isNumber ? .mustBeGreater : .mustBeAfter, other: b) }
            case .requiredIf(let f, let condition):
                if condition.holds(reader), present(answer(f)) == nil {
                    report(custom ?? .builtin(.required))
                }
            case .plugin:
                continue
            }
        }
        return (errors, warnings)
    }

    private static func present(_ v: AnswerValue?) -> AnswerValue? {
        guard let v, !isBlank(v) else { return nil }
        return v
    }

    private static func sameValue(_ a: AnswerValue, _ b: AnswerValue) -> Bool {
        if let x = a.doubleValue, let y = b.doubleValue { return x == y }
        if case .list(let x) = a, case .list(let y) = b { return Set(x) == Set(y) }
        return a == b
    }

    /// -1, 0 or 1 for two numbers, dates or times; nil when they do not parse.
    private static func compare(_ a: AnswerValue, _ b: AnswerValue) -> Int? {
        if let x = a.doubleValue, let y = b.doubleValue { return x < y ? -1 : (x > y ? 1 : 0) }
        guard case .text(let s) = a, case .text(let t) = b else { return nil }
        if let x = CivilDate(iso: s), let y = CivilDate(iso: t) { return x < y ? -1 : (x > y ? 1 : 0) }
        if let x = CivilTime(iso: s), let y = CivilTime(iso: t) { return x < y ? -1 : (x > y ? 1 : 0) }
        return nil
    }
}

/// A pragmatic check of an email address (`local@domain`), not RFC 5322:
///
/// - at most 254 characters, exactly one `@`;
/// - the local part is 1–64 characters of letters, digits and
///   ``!#$%&'*+/=?^_`{|}~.-``, or any non-ASCII character, without a leading,
///   trailing or doubled dot;
/// - the domain has at least two labels of letters, digits, hyphens or
///   non-ASCII characters, each 1–63 long, not starting or ending with a
///   hyphen; the last label is not all digits.
func isEmailAddress(_ s: String) -> Bool {
    let scalars = Array(s.unicodeScalars)
    guard scalars.count <= 254, let at = scalars.firstIndex(of: "@"), scalars.lastIndex(of: "@") == at else {
        return false
    }
    let local = scalars[..<at]
    let domain = scalars[(at + 1)...]
    guard (1...64).contains(local.count), local.first != ".", local.last != "." else { return false }
    var previousDot = false
    for c in local {
        let ok = isASCIILetter(c) || isASCIIDigit(c) || isInternational(c) || "!#$%&'*+/=?^_`{|}~.-".unicodeScalars.contains(c)
        guard ok, !(c == "." && previousDot) else { return false }
        previousDot = c == "."
    }
    let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
    guard labels.count >= 2 else { return false }
    for label in labels {
        guard (1...63).contains(label.count), label.first != "-", label.last != "-",
            label.allSatisfy({ isASCIILetter($0) || isASCIIDigit($0) || $0 == "-" || isInternational($0) })
        else { return false }
    }
    if let tld = labels.last, tld.allSatisfy(isASCIIDigit) { return false }
    return true
}

/// A non-ASCII character that may appear in an internationalized address:
/// not a space, a control or a format character.
private func isInternational(_ c: Unicode.Scalar) -> Bool {
    guard c.value > 0x7F, !c.properties.isWhitespace else { return false }
    switch c.properties.generalCategory {
    case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned: return false
    default: return true
    }
}
