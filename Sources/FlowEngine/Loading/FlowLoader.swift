import FlowKit

/// Loads and lints flow files (format 1, see docs/flow-format.md).
///
/// The engine does no I/O: the daemon reads the file and passes its bytes and
/// its name. Every problem is reported as `file: json.path: message`, all of
/// them (up to ``FlowLoadLimits/maxProblems``), not just the first.
public enum FlowLoader {
    /// The only flow format this engine reads.
    public static let formatVersion = 1

    /// Parses, decodes and lints one flow file.
    ///
    /// - Parameters:
    ///   - bytes: the file's content, UTF-8 JSON.
    ///   - fileName: used in every problem, for example `consultation.json`.
    ///   - capabilities: the plugin capabilities available; a flow naming one
    ///     that is missing is refused. Pass ``CapabilityCatalog/any`` to skip.
    ///   - limits: the bounds on what is accepted.
    public static func load(
        _ bytes: [UInt8], fileName: String, capabilities: CapabilityCatalog, limits: FlowLoadLimits = .default
    ) throws(FlowLoadError) -> FlowDefinition {
        var sink = LintSink(file: fileName, maxProblems: limits.maxProblems)
        if bytes.count > limits.maxFileBytes {
            sink.add(.root, "the file is \(bytes.count) bytes, over the limit of \(limits.maxFileBytes)")
            throw FlowLoadError(problems: sink.report)
        }
        let parserLimits = JSONParser.Limits(
            maxDepth: min(max(limits.maxDepth, 1), 256), maxStringBytes: limits.maxStringBytes)
        let parsed: JSONParser.Result
        do {
            parsed = try JSONParser.parse(bytes, limits: parserLimits)
        } catch {
            sink.add(error.path, "syntax error at line \(error.line), column \(error.column): \(error.message)")
            throw FlowLoadError(problems: sink.report)
        }
        for path in parsed.duplicateKeys {
            sink.add(path, "this key appears more than once in its object")
        }
        return try build(parsed.root, sink: sink, capabilities: capabilities, limits: limits)
    }

    /// Loads a flow from its text (a convenience for tests and tools).
    public static func load(
        _ text: String, fileName: String, capabilities: CapabilityCatalog, limits: FlowLoadLimits = .default
    ) throws(FlowLoadError) -> FlowDefinition {
        try load(Array(text.utf8), fileName: fileName, capabilities: capabilities, limits: limits)
    }

    static func build(
        _ root: JSONNode, fileName: String, capabilities: CapabilityCatalog, limits: FlowLoadLimits
    ) throws(FlowLoadError) -> FlowDefinition {
        try build(root, sink: LintSink(file: fileName, maxProblems: limits.maxProblems),
                  capabilities: capabilities, limits: limits)
    }

    private static func build(
        _ root: JSONNode, sink: LintSink, capabilities: CapabilityCatalog, limits: FlowLoadLimits
    ) throws(FlowLoadError) -> FlowDefinition {
        var builder = FlowBuilder(reader: DocumentReader(sink: sink, limits: limits), capabilities: capabilities)
        let flow = builder.flow(root)
        guard let flow, builder.reader.sink.isEmpty else {
            var s = builder.reader.sink
            if s.isEmpty { s.add(.root, "the flow could not be read") }
            throw FlowLoadError(problems: s.report)
        }
        return flow
    }
}

// MARK: - The builder

/// Decodes a flow document into the model in two passes: shapes first
/// (pass 1), then everything that needs the whole flow (pass 2): ids,
/// references, the step graph.
struct FlowBuilder {
    var reader: DocumentReader
    let capabilities: CapabilityCatalog

    var limits: FlowLoadLimits { reader.limits }

    // Things pass 2 checks, recorded with their paths by pass 1.
    struct ConditionLeaf {
        var step: Int
        var path: JSONPath
        var field: String
        /// The compared values and where they are; empty for `notEmpty`.
        var values: [(ConditionValue, JSONPath)]
    }

    struct NextRef {
        var step: Int
        var path: JSONPath
        var target: String
    }

    struct RuleRef {
        var step: Int
        var path: JSONPath
        var kind: String
        /// The fields the rule names: the target field first when there is one.
        var fields: [(String, JSONPath)]
        /// Whether every named field must be on the rule's own step.
        var target: String
    }

    var leaves: [ConditionLeaf] = []
    var nextRefs: [NextRef] = []
    var ruleRefs: [RuleRef] = []
    /// Fields whose type could not be read: later checks skip them.
    var untypedFields: Set<String> = []
    /// Steps and fields in document order as decoded, with their paths.
    var stepPaths: [JSONPath] = []
    var fieldPaths: [String: JSONPath] = [:]
    var hasReview = false
    var fieldCount = 0

    static let flowKeys = ["$schema", "format", "id", "title", "description", "locales", "steps", "review",
                           "submit", "finishTitle"]
    static let stepKeys = ["id", "kind", "title", "description", "body", "icon", "fields", "rules", "next"]
    static let fieldKeys = ["id", "type", "label", "help", "placeholder", "required", "mustBeOn", "minLength",
                            "maxLength", "pattern", "minimum", "maximum", "integer", "after", "before",
                            "minSelected", "maxSelected", "options", "optionsFrom", "other", "otherLabel",
                            "prefill", "validators", "messages"]
    static let optionKeys = ["id", "label", "icon"]
    static let nextKeys = ["if", "goto"]
    static let ruleKeys = ["equals", "notEquals", "before", "after", "requiredIf", "if", "plugin", "options",
                           "message"]
    static let conditionKeys = ["field", "equals", "in", "notEmpty", "all", "any", "not"]
    static let validatorKeys = ["plugin", "options", "message"]
    static let providerKeys = ["provider", "options"]
    static let reviewKeys = ["title", "note", "submitTitle"]
    static let submitKeys = ["action", "options", "timeoutSeconds", "successMessage"]

    init(reader: DocumentReader, capabilities: CapabilityCatalog) {
        self.reader = reader
        self.capabilities = capabilities
    }

    private mutating func problem(_ path: JSONPath, _ message: String) {
        reader.sink.add(path, message)
    }

    private mutating func missing(_ object: ObjectView, _ key: String, _ expected: String) {
        problem(object.path, "missing required key \(quoted(key)) (expected \(expected))")
    }

    // MARK: Flow

    mutating func flow(_ root: JSONNode) -> FlowDefinition? {
        let path = JSONPath.root
        guard let o = reader.object(root, path, "a flow definition") else { return nil }
        reader.checkKeys(o, allowed: Self.flowKeys, in: "the flow")

        if let f = o["format"] {
            if let v = reader.integer(f, path / "format", Int.min...Int.max), v != FlowLoader.formatVersion {
                problem(path / "format", "unsupported format \(v) (this flowd reads format \(FlowLoader.formatVersion))")
            }
        } else {
            missing(o, "format", "1")
        }
        if let s = o["$schema"] { _ = reader.string(s, path / "$schema", "a schema reference") }

        var id: String?
        if let n = o["id"] { id = reader.identifier(n, path / "id", "the flow id") } else { missing(o, "id", "the flow's id") }
        var title: LocalizedText?
        if let n = o["title"] { title = reader.localized(n, path / "title", "the title") } else { missing(o, "title", "a string or translations") }
        let description = o["description"].flatMap { reader.localized($0, path / "description", "the description") }
        let finishTitle = o["finishTitle"].flatMap { reader.localized($0, path / "finishTitle", "the finish title") }

        var declaredLocales: [String]?
        if let n = o["locales"], let items = reader.array(n, path / "locales", "a list of locales", max: limits.maxTranslations) {
            var list: [String] = []
            for (i, item) in items.enumerated() {
                guard let s = reader.string(item, path / "locales" / i, "a locale") else { continue }
                if !LocaleFallback.isWellFormed(s) {
                    problem(path / "locales" / i, "\(quoted(s)) is not a locale tag (expected one like \"en\" or \"pt-BR\")")
                } else if list.contains(where: { $0.lowercased() == s.lowercased() }) {
                    problem(path / "locales" / i, "the locale \(quoted(s)) is listed twice")
                } else {
                    list.append(s)
                }
            }
            if items.isEmpty { problem(path / "locales", "the list of locales is empty") }
            declaredLocales = list
        }

        var review: ReviewDefinition?
        if let n = o["review"], let r = reader.object(n, path / "review", "the review page") {
            reader.checkKeys(r, allowed: Self.reviewKeys, in: "review")
            review = ReviewDefinition(
                title: r["title"].flatMap { reader.localized($0, path / "review" / "title", "the review title") },
                note: r["note"].flatMap { reader.localized($0, path / "review" / "note", "the review note") },
                submitTitle: r["submitTitle"].flatMap {
                    reader.localized($0, path / "review" / "submitTitle", "the submit button's label")
                })
            hasReview = true
        }
        let submit = o["submit"].flatMap { self.submit($0, path / "submit") }

        var steps: [StepDefinition] = []
        if let n = o["steps"], let items = reader.array(n, path / "steps", "the list of steps", max: limits.maxSteps) {
            if items.isEmpty { problem(path / "steps", "a flow needs at least one step") }
            for (i, item) in items.enumerated() {
                if let s = step(item, path / "steps" / i, index: steps.count) {
                    steps.append(s)
                    stepPaths.append(path / "steps" / i)
                }
            }
        } else if o["steps"] == nil {
            missing(o, "steps", "a list of steps")
        }
        if fieldCount > limits.maxFields {
            problem(path / "steps", "\(fieldCount) fields in all are over the limit of \(limits.maxFields)")
        }

        // Pass 2 needs every step; it only makes sense when their shapes were read.
        if reader.sink.isEmpty { crossCheck(steps) }
        guard reader.sink.isEmpty, let id, let title else { return nil }

        let locales = declaredLocales ?? collectLocales(title: title, description: description, steps: steps,
                                                         review: review, submit: submit, finishTitle: finishTitle)
        return FlowDefinition(
            id: id, title: title, description: description, steps: steps, review: review, submit: submit,
            finishTitle: finishTitle, locales: locales, source: root)
    }

    private mutating func submit(_ node: JSONNode, _ path: JSONPath) -> SubmitDefinition? {
        guard let o = reader.object(node, path, "the submit settings") else { return nil }
        reader.checkKeys(o, allowed: Self.submitKeys, in: "submit")
        var action: String?
        if let n = o["action"], let name = reader.capabilityName(n, path / "action") {
            requireCapability(.submitAction, name, path / "action", "submit action")
            action = name
        }
        var options: [String: JSONValue] = [:]
        if let n = o["options"] {
            options = reader.pluginOptions(n, path / "options") ?? [:]
            if action == nil && o["action"] == nil { problem(path / "options", "options need an \"action\" to go to") }
        }
        var timeout = SubmitDefinition.defaultTimeoutSeconds
        if let n = o["timeoutSeconds"], let t = reader.number(n, path / "timeoutSeconds") {
            if t > 0 && t <= limits.maxTimeoutSeconds {
                timeout = t
            } else {
                problem(path / "timeoutSeconds", "\(t) is out of range (expected more than 0 and at most \(Int(limits.maxTimeoutSeconds)) seconds)")
            }
        }
        let success = o["successMessage"].flatMap { reader.localized($0, path / "successMessage", "the success message") }
        return SubmitDefinition(action: action, options: options, timeoutSeconds: timeout, successMessage: success)
    }

    private mutating func requireCapability(_ kind: CapabilityKind, _ name: String, _ path: JSONPath, _ what: String) {
        guard !capabilities.contains(kind, name) else { return }
        let known = capabilities.names(of: kind)
        var message = "no loaded plugin provides the \(what) \(quoted(name))"
        if let s = reader.suggest(name, in: known) {
            message += " (did you mean \(quoted(s))?)"
        } else if known.isEmpty {
            message += " (no plugin provides any \(what))"
        } else {
            message += " (available: \(known.prefix(10).joined(separator: ", "))\(known.count > 10 ? ", …" : ""))"
        }
        problem(path, message)
    }

    // MARK: Steps

    private mutating func step(_ node: JSONNode, _ path: JSONPath, index: Int) -> StepDefinition? {
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
        if let n = o["title"] { title = reader.localized(n, path / "title", "the title") } else { missing(o, "title", "a string or translations") }
        let description = o["description"].flatMap { reader.localized($0, path / "description", "the description") }

        var body: LocalizedText?
        var icon: String?
        var fields: [FieldDefinition] = []
        var rules: [StepRule] = []
        switch kind {
        case .content:
            body = o["body"].flatMap { reader.localized($0, path / "body", "the body") }
            icon = o["icon"].flatMap { reader.iconName($0, path / "icon") }
            for key in ["fields", "rules"] where o.has(key) {
                problem(path / key, "a content step has no \(key) (use \"kind\": \"form\")")
            }
        case .form:
            for key in ["body", "icon"] where o.has(key) {
                problem(path / key, "\(quoted(key)) applies only to content steps (\"kind\": \"content\")")
            }
            if let n = o["fields"],
                let items = reader.array(n, path / "fields", "the list of fields", max: limits.maxFieldsPerStep)
            {
                if items.isEmpty { problem(path / "fields", "a form step needs at least one field (or use \"kind\": \"content\")") }
                fieldCount += items.count
                for (i, item) in items.enumerated() {
                    if let f = field(item, path / "fields" / i) { fields.append(f) }
                }
            } else if o["fields"] == nil {
                missing(o, "fields", "a list of fields, or \"kind\": \"content\"")
            }
            if let n = o["rules"], let items = reader.array(n, path / "rules", "the list of rules", max: limits.maxRulesPerStep) {
                for (i, item) in items.enumerated() {
                    if let r = stepRule(item, path / "rules" / i, step: index) { rules.append(r) }
                }
            }
        }
        let next = o["next"].map { self.next($0, path / "next", step: index) } ?? []
        guard let id, let title else { return nil }
        return StepDefinition(id: id, kind: kind, title: title, description: description, body: body, icon: icon,
                              fields: fields, rules: rules, next: next)
    }

    private mutating func next(_ node: JSONNode, _ path: JSONPath, step: Int) -> [NextRule] {
        if case .string(let s) = node {
            nextRefs.append(NextRef(step: step, path: path, target: s))
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
            nextRefs.append(NextRef(step: step, path: p / "goto", target: s))
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

    // MARK: Fields

    private mutating func field(_ node: JSONNode, _ path: JSONPath) -> FieldDefinition? {
        guard let o = reader.object(node, path, "a field") else { return nil }
        reader.checkKeys(o, allowed: Self.fieldKeys, in: "a field")
        var id: String?
        if let n = o["id"] { id = reader.identifier(n, path / "id", "the field id") } else { missing(o, "id", "the field's id") }
        let typeList = FieldType.allCases.map(\.rawValue).joined(separator: ", ")
        var type: FieldType?
        if let n = o["type"], let s = reader.string(n, path / "type", "the field type") {
            type = FieldType(rawValue: s)
            if type == nil {
                var message = "unknown type \(quoted(s)) ("
                if let near = reader.suggest(s, in: FieldType.allCases.map(\.rawValue)) { message += "did you mean \(quoted(near))? " }
                problem(path / "type", message + "expected one of \(typeList))")
            }
        } else if o["type"] == nil {
            missing(o, "type", "one of \(typeList)")
        }
        if let id {
            fieldPaths[id] = fieldPaths[id] ?? path
            if type == nil { untypedFields.insert(id) }
        }
        var label: LocalizedText?
        if let n = o["label"] { label = reader.localized(n, path / "label", "the label") } else { missing(o, "label", "a string or translations") }
        let help = o["help"].flatMap { reader.localized($0, path / "help", "the help text") }
        let placeholder = o["placeholder"].flatMap { reader.localized($0, path / "placeholder", "the placeholder") }

        if let type { checkApplicability(o, type: type) }

        let required = o["required"].flatMap { reader.bool($0, path / "required") } ?? false
        let mustBeOn = o["mustBeOn"].flatMap { reader.bool($0, path / "mustBeOn") } ?? false
        let lengthRange = 0...1_000_000
        let minLength = o["minLength"].flatMap { reader.integer($0, path / "minLength", lengthRange) }
        let maxLength = o["maxLength"].flatMap { reader.integer($0, path / "maxLength", lengthRange) }
        if let a = minLength, let b = maxLength, a > b {
            problem(path / "minLength", "minLength \(a) is more than maxLength \(b), so no value can pass")
        }
        var pattern: PatternRegex?
        if let n = o["pattern"], let s = reader.string(n, path / "pattern", "the pattern") {
            do {
                pattern = try PatternRegex(s, limits: limits.pattern)
            } catch {
                problem(path / "pattern", "invalid pattern \(quoted(s)) \(error.description)")
            }
        }
        if let pattern, let max = maxLength, max > pattern.maxInputLength {
            problem(path / "maxLength", "maxLength \(max) is more than the \(pattern.maxInputLength) characters this pattern can check (it compiles to \(pattern.programSize) instructions); lower maxLength or simplify the pattern")
        }
        let minimum = o["minimum"].flatMap { reader.number($0, path / "minimum") }
        let maximum = o["maximum"].flatMap { reader.number($0, path / "maximum") }
        if let a = minimum, let b = maximum, a > b {
            problem(path / "minimum", "minimum \(formatNumber(a)) is more than maximum \(formatNumber(b)), so no value can pass")
        }
        let integer = o["integer"].flatMap { reader.bool($0, path / "integer") } ?? false
        let after = o["after"].flatMap { dateBound($0, path / "after") }
        let before = o["before"].flatMap { dateBound($0, path / "before") }
        if case .date(let a)? = after, case .date(let b)? = before, a >= b {
            problem(path / "after", "no date is after \(a) and before \(b)")
        }
        let selectionRange = 0...limits.maxOptionsPerField
        let minSelected = o["minSelected"].flatMap { reader.integer($0, path / "minSelected", selectionRange) }
        let maxSelected = o["maxSelected"].flatMap { reader.integer($0, path / "maxSelected", selectionRange) }
        if let a = minSelected, let b = maxSelected, a > b {
            problem(path / "minSelected", "minSelected \(a) is more than maxSelected \(b), so no selection can pass")
        }

        var options: [OptionDefinition] = []
        if let n = o["options"],
            let items = reader.array(n, path / "options", "the list of options", max: limits.maxOptionsPerField)
        {
            if items.isEmpty { problem(path / "options", "the option list is empty (expected at least one option)") }
            var seen: [String: Int] = [:]
            for (i, item) in items.enumerated() {
                guard let opt = option(item, path / "options" / i) else { continue }
                if let first = seen[opt.id] {
                    problem(path / "options" / i / "id", "duplicate option id \(quoted(opt.id)) (first used at options[\(first)])")
                    continue
                }
                seen[opt.id] = i
                options.append(opt)
            }
        }
        let optionsFrom = o["optionsFrom"].flatMap { provider($0, path / "optionsFrom", kind: .optionsProvider, what: "options provider") }
        if o.has("options") && o.has("optionsFrom") {
            problem(path / "optionsFrom", "a field takes either \"options\" or \"optionsFrom\", not both")
        }
        if let type, type.isChoice, !o.has("options"), !o.has("optionsFrom") {
            problem(path, "a \(type.rawValue) field needs \"options\" or \"optionsFrom\"")
        }
        let other = o["other"].flatMap { reader.bool($0, path / "other") } ?? false
        let otherLabel = o["otherLabel"].flatMap { reader.localized($0, path / "otherLabel", "the Other label") }
        if o.has("otherLabel") && !other {
            problem(path / "otherLabel", "otherLabel needs \"other\": true")
        }
        if type == .multichoice, !o.has("optionsFrom"), let a = minSelected, a > options.count + (other ? 1 : 0), !options.isEmpty {
            problem(path / "minSelected", "minSelected \(a) is more than the \(options.count + (other ? 1 : 0)) options there are")
        }
        if type == .toggle && o.has("required") {
            problem(path / "required", "a toggle always has a value; use \"mustBeOn\": true to require it to be on")
        }
        let prefill = o["prefill"].flatMap { provider($0, path / "prefill", kind: .prefillProvider, what: "prefill provider") }

        var validators: [PluginRule] = []
        if let n = o["validators"],
            let items = reader.array(n, path / "validators", "the list of validators", max: limits.maxValidatorsPerField)
        {
            for (i, item) in items.enumerated() {
                if let v = validator(item, path / "validators" / i) { validators.append(v) }
            }
        }

        var messages: [FieldRule: LocalizedText] = [:]
        if let n = o["messages"], let m = reader.object(n, path / "messages", "the messages") {
            let ruleNames = FieldRule.allCases.map(\.rawValue)
            for member in m.members {
                let p = path / "messages" / member.key
                guard let rule = FieldRule(rawValue: member.key) else {
                    var message = "unknown rule \(quoted(member.key)) ("
                    if let near = reader.suggest(member.key, in: ruleNames) { message += "did you mean \(quoted(near))? " }
                    problem(p, message + "expected one of \(ruleNames.joined(separator: ", ")))")
                    continue
                }
                if let type {
                    if !rule.applies(to: type) {
                        problem(p, "a \(type.rawValue) field has no \(quoted(rule.rawValue)) rule")
                        continue
                    }
                    let active: Bool
                    switch rule {
                    case .required: active = required
                    case .mustBeOn: active = mustBeOn
                    case .integer: active = integer
                    case .other: active = other
                    case .format, .email, .option: active = true
                    case .minLength, .maxLength, .pattern, .minimum, .maximum, .after, .before, .minSelected,
                        .maxSelected:
                        active = o.has(rule.rawValue)
                    }
                    if !active {
                        problem(p, "a message for \(quoted(rule.rawValue)), but the field does not set that rule")
                        continue
                    }
                }
                if let text = reader.localized(member.value, p, "the message") { messages[rule] = text }
            }
        }

        guard let id, let label else { return nil }
        return FieldDefinition(
            id: id, type: type ?? .text, label: label, help: help, placeholder: placeholder, required: required,
            mustBeOn: mustBeOn, minLength: minLength, maxLength: maxLength, pattern: pattern, minimum: minimum,
            maximum: maximum, integer: integer, after: after, before: before, minSelected: minSelected,
            maxSelected: maxSelected, options: options, optionsFrom: optionsFrom, other: other,
            otherLabel: otherLabel, prefill: prefill, validators: validators, messages: messages)
    }

    /// Keys that only some field types take.
    private static let typedKeys: [(keys: [String], types: [FieldType], what: String)] = [
        (["minLength", "maxLength", "pattern"], [.text, .multiline, .secure, .email], "text, multiline, secure and email"),
        (["minimum", "maximum", "integer"], [.number], "number"),
        (["after", "before"], [.date], "date"),
        (["minSelected", "maxSelected"], [.multichoice], "multichoice"),
        (["options", "optionsFrom", "other", "otherLabel"], [.choice, .multichoice], "choice and multichoice"),
        (["mustBeOn"], [.toggle], "toggle"),
    ]

    private mutating func checkApplicability(_ o: ObjectView, type: FieldType) {
        for entry in Self.typedKeys where !entry.types.contains(type) {
            for key in entry.keys where o.has(key) {
                problem(o.path / key, "\(quoted(key)) applies only to \(entry.what) fields, not to a \(type.rawValue) field")
            }
        }
    }

    private mutating func option(_ node: JSONNode, _ path: JSONPath) -> OptionDefinition? {
        guard let o = reader.object(node, path, "an option") else { return nil }
        reader.checkKeys(o, allowed: Self.optionKeys, in: "an option")
        var id: String?
        if let n = o["id"], let s = reader.identifier(n, path / "id", "the option id") {
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

    private mutating func dateBound(_ node: JSONNode, _ path: JSONPath) -> DateBound? {
        guard let s = reader.string(node, path, "a date") else { return nil }
        if s == "today" { return .today }
        guard let d = CivilDate(iso: s) else {
            problem(path, "\(quoted(s)) is not a date (expected \"today\" or a date as YYYY-MM-DD)")
            return nil
        }
        return .date(d)
    }

    private mutating func provider(_ node: JSONNode, _ path: JSONPath, kind: CapabilityKind, what: String) -> ProviderReference? {
        var name: String?
        var options: [String: JSONValue] = [:]
        var namePath = path
        if case .string = node {
            name = reader.capabilityName(node, path)
        } else if let o = reader.object(node, path, "a plugin name or {\"provider\": …, \"options\": …}") {
            reader.checkKeys(o, allowed: Self.providerKeys, in: "a provider")
            namePath = path / "provider"
            if let n = o["provider"] { name = reader.capabilityName(n, namePath) } else { missing(o, "provider", "the plugin's name") }
            if let n = o["options"] { options = reader.pluginOptions(n, path / "options") ?? [:] }
        }
        guard let name else { return nil }
        requireCapability(kind, name, namePath, what)
        return ProviderReference(name: name, options: options)
    }

    private mutating func validator(_ node: JSONNode, _ path: JSONPath) -> PluginRule? {
        guard let o = reader.object(node, path, "a validator") else { return nil }
        reader.checkKeys(o, allowed: Self.validatorKeys, in: "a validator")
        var name: String?
        if let n = o["plugin"] { name = reader.capabilityName(n, path / "plugin") } else { missing(o, "plugin", "the validator's plugin name") }
        let options = o["options"].flatMap { reader.pluginOptions($0, path / "options") } ?? [:]
        let message = o["message"].flatMap { reader.localized($0, path / "message", "the message") }
        guard let name else { return nil }
        requireCapability(.fieldValidator, name, path / "plugin", "field validator")
        return PluginRule(name: name, options: options, message: message)
    }

    // MARK: Step rules and conditions

    private mutating func stepRule(_ node: JSONNode, _ path: JSONPath, step: Int) -> StepRule? {
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
        let p = path / kindName
        guard let value = o[kindName] else { return nil }
        let kind: StepRule.Kind
        switch kindName {
        case "plugin":
            guard let name = reader.capabilityName(value, p) else { return nil }
            requireCapability(.stepValidator, name, p, "step validator")
            let options = o["options"].flatMap { reader.pluginOptions($0, path / "options") } ?? [:]
            kind = .plugin(PluginRule(name: name, options: options, message: message))
        case "requiredIf":
            guard let field = reader.string(value, p, "the field id") else { return nil }
            guard let c = o["if"] else {
                missing(o, "if", "the condition under which the field is required")
                return nil
            }
            guard let condition = condition(c, path / "if", step: step) else { return nil }
            ruleRefs.append(RuleRef(step: step, path: path, kind: kindName, fields: [(field, p)], target: field))
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
            ruleRefs.append(RuleRef(step: step, path: path, kind: kindName, fields: [(a, p / 0), (b, p / 1)],
                                    target: targetIsFirst ? a : b))
            switch kindName {
            case "equals": kind = .equals(a, b)
            case "notEquals": kind = .notEquals(a, b)
            case "before": kind = .before(a, b)
            default: kind = .after(a, b)
            }
        }
        return StepRule(kind: kind, message: message)
    }

    private mutating func condition(_ node: JSONNode, _ path: JSONPath, step: Int) -> Condition? {
        guard let o = reader.object(node, path, "a condition") else { return nil }
        reader.checkKeys(o, allowed: Self.conditionKeys, in: "a condition")
        let forms = ["field", "all", "any", "not"].filter { o.has($0) }
        guard forms.count == 1 else {
            problem(path, "a condition has exactly one of: field (with equals, in or notEmpty), all, any, not")
            return nil
        }
        switch forms[0] {
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
                if let c = condition(item, path / key / i, step: step) { list.append(c) }
            }
            guard list.count == items.count else { return nil }
            return key == "all" ? .all(list) : .any(list)
        case "not":
            return condition(o["not"] ?? .null, path / "not", step: step).map(Condition.not)
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
                leaves.append(ConditionLeaf(step: step, path: path, field: field, values: [(v, path / "equals")]))
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
                leaves.append(ConditionLeaf(step: step, path: path, field: field, values: values))
                return .oneOf(field: field, values: values.map(\.0))
            default:
                guard let b = reader.bool(o["notEmpty"] ?? .null, path / "notEmpty") else { return nil }
                leaves.append(ConditionLeaf(step: step, path: path, field: field, values: []))
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

    // MARK: Pass 2

    private mutating func crossCheck(_ steps: [StepDefinition]) {
        // Unique step ids.
        var stepIndex: [String: Int] = [:]
        for (i, s) in steps.enumerated() {
            if let first = stepIndex[s.id] {
                problem(stepPaths[i] / "id", "duplicate step id \(quoted(s.id)) (first used at \(stepPaths[first] / "id"))")
            } else {
                stepIndex[s.id] = i
            }
        }
        // Unique field ids across the flow.
        var fields: [String: (step: Int, field: FieldDefinition, path: JSONPath)] = [:]
        for (i, s) in steps.enumerated() {
            for (j, f) in s.fields.enumerated() {
                let p = stepPaths[i] / "fields" / j
                if let first = fields[f.id] {
                    problem(p / "id", "duplicate field id \(quoted(f.id)) (first used at \(first.path / "id")); field ids are unique in the whole flow")
                } else {
                    fields[f.id] = (i, f, p)
                }
            }
        }
        guard reader.sink.isEmpty else { return }

        // Next targets: later steps only.
        var graphOK = true
        for ref in nextRefs {
            switch ref.target {
            case "complete":
                continue
            case "review":
                if !hasReview {
                    problem(ref.path, "the flow has no review page, so \"review\" is not a target (use \"complete\", or add \"review\")")
                    graphOK = false
                }
            default:
                guard let t = stepIndex[ref.target] else {
                    var message = "unknown step \(quoted(ref.target)) ("
                    if let near = reader.suggest(ref.target, in: steps.map(\.id)) { message += "did you mean \(quoted(near))? " }
                    problem(ref.path, message + "expected a later step id, \"review\" or \"complete\")")
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
        if graphOK { checkReachability(steps, stepIndex: stepIndex) }

        // Conditions.
        for leaf in leaves {
            checkConditionField(leaf.field, at: leaf.path / "field", fromStep: leaf.step, steps: steps, fields: fields)
            guard let f = fields[leaf.field], !untypedFields.contains(leaf.field), f.field.type != .secure else { continue }
            for (value, path) in leaf.values { checkConditionValue(value, at: path, field: f.field) }
        }

        // Step rules.
        for ref in ruleRefs {
            var types: [FieldType] = []
            for (name, path) in ref.fields {
                guard let f = fields[name] else {
                    var message = "the rule names the unknown field \(quoted(name))"
                    if let near = reader.suggest(name, in: Array(fields.keys).sorted()) { message += " (did you mean \(quoted(near))?)" }
                    problem(path, message)
                    continue
                }
                if name == ref.target && f.step != ref.step {
                    problem(path, "\(quoted(name)) is on step \(quoted(steps[f.step].id)); the rule's message goes to this field, so it must be on this step")
                } else if f.step > ref.step {
                    problem(path, "\(quoted(name)) is on the later step \(quoted(steps[f.step].id)); rules can use this step's fields and earlier ones")
                }
                if !untypedFields.contains(name) { types.append(f.field.type) }
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
        for (i, s) in steps.enumerated() where reached[i] {
            if s.next.isEmpty {
                if i + 1 < steps.count { reached[i + 1] = true }
            } else {
                for rule in s.next {
                    if case .step(let t) = rule.target, let j = stepIndex[t] { reached[j] = true }
                }
            }
        }
        for (i, s) in steps.enumerated() where !reached[i] {
            problem(stepPaths[i], "the step \(quoted(s.id)) can never be reached: no next rule leads to it and the step before it does not go on to it")
        }
    }

    private mutating func checkConditionField(
        _ name: String, at path: JSONPath, fromStep step: Int, steps: [StepDefinition],
        fields: [String: (step: Int, field: FieldDefinition, path: JSONPath)]
    ) {
        guard let f = fields[name] else {
            var message = "the condition reads the unknown field \(quoted(name))"
            if let near = reader.suggest(name, in: Array(fields.keys).sorted()) { message += " (did you mean \(quoted(near))?)" }
            problem(path, message)
            return
        }
        if f.step > step {
            problem(path, "\(quoted(name)) is on the later step \(quoted(steps[f.step].id)); a condition can read this step's fields and earlier ones")
        }
        if f.field.type == .secure {
            problem(path, "a condition cannot read the secure field \(quoted(name)) (secure values are not kept across restarts)")
        }
    }

    private mutating func checkConditionValue(_ value: ConditionValue, at path: JSONPath, field: FieldDefinition) {
        switch (field.type, value) {
        case (.choice, .text(let s)), (.multichoice, .text(let s)):
            guard field.optionsFrom == nil else { return }  // options are only known when a session starts
            let ids = field.options.map(\.id) + (field.other ? ["other"] : [])
            if !ids.contains(s) {
                var message = "\(quoted(s)) is not an option of \(quoted(field.id)) ("
                if let near = reader.suggest(s, in: ids) { message += "did you mean \(quoted(near))? " }
                problem(path, message + "expected one of \(ids.joined(separator: ", ")))")
            }
        case (.toggle, .bool), (.number, .number):
            return
        case (.text, .text), (.multiline, .text), (.email, .text):
            return
        case (.date, .text(let s)):
            if CivilDate(iso: s) == nil { problem(path, "\(quoted(s)) is not a date (expected YYYY-MM-DD)") }
        case (.time, .text(let s)):
            if CivilTime(iso: s) == nil { problem(path, "\(quoted(s)) is not a time (expected HH:MM)") }
        default:
            problem(path, "\(quoted(field.id)) is a \(field.type.rawValue) field, so compare it with \(field.type.valueDescription)")
        }
    }

    private func collectLocales(
        title: LocalizedText, description: LocalizedText?, steps: [StepDefinition], review: ReviewDefinition?,
        submit: SubmitDefinition?, finishTitle: LocalizedText?
    ) -> [String] {
        var seen: [String] = []
        func add(_ t: LocalizedText?) {
            for l in t?.locales ?? [] where !seen.contains(l) { seen.append(l) }
        }
        add(title)
        add(description)
        add(finishTitle)
        for s in steps {
            add(s.title)
            add(s.description)
            add(s.body)
            for f in s.fields {
                add(f.label)
                add(f.help)
                add(f.placeholder)
                add(f.otherLabel)
                for o in f.options { add(o.label) }
            }
        }
        add(review?.title)
        add(review?.note)
        add(review?.submitTitle)
        add(submit?.successMessage)
        return seen.isEmpty ? ["en"] : seen
    }
}

/// A number as a person writes it: `3`, not `3.0`.
func formatNumber(_ d: Double) -> String {
    if d.rounded() == d && abs(d) < 1e15 { return String(Int64(d)) }
    return d.description
}
