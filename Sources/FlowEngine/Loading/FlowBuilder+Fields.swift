import FlowKit

// Fields: what every field has, then the rules of each type family (text,
// number, date, choice), then custom messages. A new field type or rule adds
// a family reader here and a row to `typedKeys`.
extension FlowBuilder {
    /// One field of a form step.
    ///
    /// - Parameters:
    ///   - isOnlyField: the field is its step's only one, so it may leave out
    ///     `label`, which is then `stepTitle`;
    ///   - stepTitle: the step's title (nil when it could not be read, which
    ///     is a problem of its own);
    ///   - step, index: where the field is, for what its `visibleIf` and
    ///     `expr` may read (earlier steps, and the fields above it).
    mutating func field(
        _ node: JSONNode, _ path: JSONPath, isOnlyField: Bool, stepTitle: LocalizedText?, step: Int, index: Int
    ) -> FieldDefinition? {
        guard let o = reader.object(node, path, "a field") else { return nil }
        reader.checkKeys(o, allowed: Self.fieldKeys, in: "a field")
        var id: String?
        if let n = o["id"] { id = reader.identifier(n, path / "id", "the field id") } else { missing(o, "id", "the field's id") }
        let type = fieldType(o, path)
        if let id, type == nil { references.untypedFields.insert(id) }
        var label: LocalizedText?
        if let n = o["label"] {
            label = piped(n, path / "label", "the label", step: step)
        } else if isOnlyField {
            label = stepTitle
        } else {
            missing(o, "label", "a string or translations; only the single field of a step may leave it out, and then takes the step's title")
        }
        // Each reader below fills in its keys; the field is returned only
        // when its id and label were read.
        var f = FieldDefinition(id: id ?? "", type: type ?? .text, label: label ?? "")
        f.help = o["help"].flatMap { piped($0, path / "help", "the help text", step: step) }
        f.placeholder = o["placeholder"].flatMap { piped($0, path / "placeholder", "the placeholder", step: step) }
        if let n = o["visibleIf"], requireFormat2(path / "visibleIf", "\"visibleIf\"") {
            f.visibleIf = condition(n, path / "visibleIf", step: step, above: index)
        }
        computedKeys(o, path, type: type, id: id, step: step, index: index, into: &f)

        if let type { checkApplicability(o, type: type) }
        f.required = o["required"].flatMap { reader.bool($0, path / "required") } ?? false
        f.mustBeOn = o["mustBeOn"].flatMap { reader.bool($0, path / "mustBeOn") } ?? false
        textRules(o, path, type: type, into: &f)
        numberRules(o, path, into: &f)
        dateRules(o, path, into: &f)
        choiceRules(o, path, type: type, into: &f)
        if type == .toggle && o.has("required") {
            problem(path / "required", "a toggle always has a value; use \"mustBeOn\": true to require it to be on")
        }
        if type == .computed {
            for key in ["required", "placeholder", "prefill", "validators", "messages"] where o.has(key) {
                problem(path / key, "a computed field is worked out from other answers, never typed in, so it takes no \(quoted(key))")
            }
        }
        f.prefill = o["prefill"].flatMap { provider($0, path / "prefill", kind: .prefillProvider, what: "prefill provider") }
        f.validators = o["validators"].map { self.validators($0, path / "validators") } ?? []
        let rules = f
        /// Whether the field sets `rule`: a message for a rule it does not set is a mistake.
        func isSet(_ rule: FieldRule) -> Bool {
            switch rule {
            case .required: return rules.required
            case .mustBeOn: return rules.mustBeOn
            case .integer: return rules.integer
            case .other: return rules.other
            case .format, .email, .option: return true
            case .minLength, .maxLength, .pattern, .minimum, .maximum, .after, .before, .minSelected, .maxSelected:
                return o.has(rule.rawValue)
            }
        }
        f.messages = o["messages"].map { self.messages($0, path / "messages", type: type, isSet: isSet) } ?? [:]

        guard id != nil, label != nil else { return nil }
        return f
    }

    /// `type`, with a suggestion for a typo; nil when missing or unknown.
    private mutating func fieldType(_ o: ObjectView, _ path: JSONPath) -> FieldType? {
        let typeList = FieldType.allCases.map(\.rawValue).joined(separator: ", ")
        guard let n = o["type"] else {
            missing(o, "type", "one of \(typeList)")
            return nil
        }
        guard let s = reader.string(n, path / "type", "the field type") else { return nil }
        if let type = FieldType(rawValue: s) {
            if type == .computed && !requireFormat2(path / "type", "the type \"computed\"") { return nil }
            return type
        }
        let guess = reader.didYouMean(s, in: FieldType.allCases.map(\.rawValue))
        problem(path / "type", "unknown type \(quoted(s)) (\(guess)expected one of \(typeList))")
        return nil
    }

    /// Keys that only some field types take.
    private static let typedKeys: [(keys: [String], types: [FieldType], what: String)] = [
        (["minLength", "maxLength", "pattern", "patternHint"], [.text, .multiline, .secure, .email],
         "text, multiline, secure and email"),
        (["minimum", "maximum", "integer"], [.number], "number"),
        (["after", "before"], [.date], "date"),
        (["minSelected", "maxSelected"], [.multichoice], "multichoice"),
        (["options", "optionsFrom", "other", "otherLabel"], [.choice, .multichoice], "choice and multichoice"),
        (["mustBeOn"], [.toggle], "toggle"),
        (["expr", "display", "decimals"], [.computed], "computed"),
    ]

    private mutating func checkApplicability(_ o: ObjectView, type: FieldType) {
        for entry in Self.typedKeys where !entry.types.contains(type) {
            for key in entry.keys where o.has(key) {
                problem(o.path / key, "\(quoted(key)) applies only to \(entry.what) fields, not to a \(type.rawValue) field")
            }
        }
    }

    // MARK: Type families

    /// The rules of text, multiline, secure and email fields.
    private mutating func textRules(_ o: ObjectView, _ path: JSONPath, type: FieldType?, into f: inout FieldDefinition) {
        let lengthRange = 0...1_000_000
        f.minLength = o["minLength"].flatMap { reader.integer($0, path / "minLength", lengthRange) }
        f.maxLength = o["maxLength"].flatMap { reader.integer($0, path / "maxLength", lengthRange) }
        if let a = f.minLength, let b = f.maxLength, a > b {
            problem(path / "minLength", "minLength \(a) is more than maxLength \(b), so no value can pass")
        }
        if let n = o["pattern"], let s = reader.string(n, path / "pattern", "the pattern") {
            do {
                f.pattern = try PatternRegex(s, limits: limits.pattern)
            } catch {
                problem(path / "pattern", "invalid pattern \(quoted(s)) \(error.description)")
            }
        }
        if let pattern = f.pattern, let max = f.maxLength, max > pattern.maxInputLength {
            problem(path / "maxLength", "maxLength \(max) is more than the \(pattern.maxInputLength) characters this pattern can check (it compiles to \(pattern.programSize) instructions); lower maxLength or simplify the pattern")
        }
        f.patternHint = o["patternHint"].flatMap { reader.localized($0, path / "patternHint", "the pattern hint") }
        if o.has("patternHint") && !o.has("pattern") && type?.isTextual != false {
            problem(path / "patternHint", "patternHint describes a \"pattern\", and the field has none")
        }
    }

    /// The rules of number fields.
    private mutating func numberRules(_ o: ObjectView, _ path: JSONPath, into f: inout FieldDefinition) {
        f.minimum = o["minimum"].flatMap { reader.number($0, path / "minimum") }
        f.maximum = o["maximum"].flatMap { reader.number($0, path / "maximum") }
        if let a = f.minimum, let b = f.maximum, a > b {
            problem(path / "minimum", "minimum \(formatNumber(a)) is more than maximum \(formatNumber(b)), so no value can pass")
        }
        f.integer = o["integer"].flatMap { reader.bool($0, path / "integer") } ?? false
    }

    /// The bounds of date fields.
    private mutating func dateRules(_ o: ObjectView, _ path: JSONPath, into f: inout FieldDefinition) {
        f.after = o["after"].flatMap { dateBound($0, path / "after") }
        f.before = o["before"].flatMap { dateBound($0, path / "before") }
        if case .date(let a)? = f.after, case .date(let b)? = f.before, a >= b {
            problem(path / "after", "no date is after \(a) and before \(b)")
        }
    }

    /// `"today"` or a date as `YYYY-MM-DD`.
    private mutating func dateBound(_ node: JSONNode, _ path: JSONPath) -> DateBound? {
        guard let s = reader.string(node, path, "a date") else { return nil }
        if s == "today" { return .today }
        guard let d = CivilDate(iso: s) else {
            problem(path, "\(quoted(s)) is not a date (expected \"today\" or a date as YYYY-MM-DD)")
            return nil
        }
        return .date(d)
    }

    /// The options and selection rules of choice and multichoice fields.
    private mutating func choiceRules(_ o: ObjectView, _ path: JSONPath, type: FieldType?, into f: inout FieldDefinition) {
        let selectionRange = 0...limits.maxOptionsPerField
        f.minSelected = o["minSelected"].flatMap { reader.integer($0, path / "minSelected", selectionRange) }
        f.maxSelected = o["maxSelected"].flatMap { reader.integer($0, path / "maxSelected", selectionRange) }
        if let a = f.minSelected, let b = f.maxSelected, a > b {
            problem(path / "minSelected", "minSelected \(a) is more than maxSelected \(b), so no selection can pass")
        }
        f.options = o["options"].map { options($0, path / "options") } ?? []
        f.optionsFrom = o["optionsFrom"].flatMap {
            provider($0, path / "optionsFrom", kind: .optionsProvider, what: "options provider")
        }
        if o.has("options") && o.has("optionsFrom") {
            problem(path / "optionsFrom", "a field takes either \"options\" or \"optionsFrom\", not both")
        }
        if let type, type.isChoice, !o.has("options"), !o.has("optionsFrom") {
            problem(path, "a \(type.rawValue) field needs \"options\" or \"optionsFrom\"")
        }
        f.other = o["other"].flatMap { reader.bool($0, path / "other") } ?? false
        f.otherLabel = o["otherLabel"].flatMap { reader.localized($0, path / "otherLabel", "the Other label") }
        if o.has("otherLabel") && !f.other {
            problem(path / "otherLabel", "otherLabel needs \"other\": true")
        }
        let offered = f.options.count + (f.other ? 1 : 0)
        if type == .multichoice, !o.has("optionsFrom"), let a = f.minSelected, a > offered, !f.options.isEmpty {
            problem(path / "minSelected", "minSelected \(a) is more than the \(offered) options there are")
        }
    }

    /// `options`: a non-empty list with unique ids.
    private mutating func options(_ node: JSONNode, _ path: JSONPath) -> [OptionDefinition] {
        guard let items = reader.array(node, path, "the list of options", max: limits.maxOptionsPerField) else { return [] }
        if items.isEmpty { problem(path, "the option list is empty (expected at least one option)") }
        var options: [OptionDefinition] = []
        var seen: [String: Int] = [:]
        for (i, item) in items.enumerated() {
            guard let opt = option(item, path / i) else { continue }
            if let first = seen[opt.id] {
                problem(path / i / "id", "duplicate option id \(quoted(opt.id)) (first used at options[\(first)])")
                continue
            }
            seen[opt.id] = i
            options.append(opt)
        }
        return options
    }

    private mutating func option(_ node: JSONNode, _ path: JSONPath) -> OptionDefinition? {
        guard let o = reader.object(node, path, "an option") else { return nil }
        reader.checkKeys(o, allowed: Self.optionKeys, in: "an option")
        var id: String?
        if let n = o["id"], let s = reader.identifier(n, path / "id", "the option id", letterFirst: false) {
            if s == "other" {
                problem(path / "id", "the option id \"other\" is reserved; set \"other\": true on the field to offer Other")
            } else {
                id = s
            }
        } else if o["id"] == nil {
            missing(o, "id", "the option's id")
        }
        var label: LocalizedText?
        if let n = o["label"] { label = reader.localized(n, path / "label", "the label") } else { missing(o, "label", "a string or translations") }
        let icon = o["icon"].flatMap { reader.iconName($0, path / "icon") }
        guard let id, let label else { return nil }
        return OptionDefinition(id: id, label: label, icon: icon)
    }

    // MARK: Messages

    /// `messages`: a replacement message per rule. `isSet` tells whether the
    /// field sets a rule (a message for a rule it does not set is a mistake).
    private mutating func messages(
        _ node: JSONNode, _ path: JSONPath, type: FieldType?, isSet: (FieldRule) -> Bool
    ) -> [FieldRule: LocalizedText] {
        guard let m = reader.object(node, path, "the messages") else { return [:] }
        var messages: [FieldRule: LocalizedText] = [:]
        let ruleNames = FieldRule.allCases.map(\.rawValue)
        for member in m.members {
            let p = path / member.key
            guard let rule = FieldRule(rawValue: member.key) else {
                let guess = reader.didYouMean(member.key, in: ruleNames)
                problem(p, "unknown rule \(quoted(member.key)) (\(guess)expected one of \(ruleNames.joined(separator: ", ")))")
                continue
            }
            if let type {
                if !rule.applies(to: type) {
                    problem(p, "a \(type.rawValue) field has no \(quoted(rule.rawValue)) rule")
                    continue
                }
                if !isSet(rule) {
                    problem(p, "a message for \(quoted(rule.rawValue)), but the field does not set that rule")
                    continue
                }
            }
            if let text = reader.localized(member.value, p, "the message") { messages[rule] = text }
        }
        return messages
    }
}
