import FlowKit

/// Pass 1 of loading: decodes a flow document into the model, one object's
/// shape at a time, and records what pass 2 (``FlowLinter``) must check
/// across the whole flow: ids, references, the step graph.
///
/// Each kind of object has its reader, in the file named after it:
/// the flow, submit and review here; steps and `next` in `+Steps`; fields,
/// options and date bounds in `+Fields`; providers and validators in
/// `+Plugins`; step rules and conditions in `+Rules`. A reader reports every
/// problem it sees and goes on, so one load lists them all.
struct FlowBuilder {
    var reader: DocumentReader
    let capabilities: CapabilityCatalog
    /// What pass 2 checks, recorded with their paths.
    var references = FlowReferences()
    /// Fields read so far, for the flow-wide limit.
    var fieldCount = 0
    /// The file's `format` (1 until read; a file without it is refused).
    var format = 1
    /// Nodes of every expression read so far, for the flow-wide limit.
    var expressionNodes = 0

    var limits: FlowLoadLimits { reader.limits }

    // The keys each object may have (the JSON schema in docs/ lists the same).
    static let flowKeys = ["$schema", "format", "id", "title", "description", "locales", "steps", "review",
                           "submit", "finishTitle", "authorization"]
    static let stepKeys = ["id", "kind", "title", "description", "body", "icon", "fields", "rules", "next"]
    static let fieldKeys = ["id", "type", "label", "help", "placeholder", "required", "mustBeOn", "minLength",
                            "maxLength", "pattern", "minimum", "maximum", "integer", "after", "before",
                            "minSelected", "maxSelected", "options", "optionsFrom", "other", "otherLabel",
                            "prefill", "validators", "messages", "patternHint", "visibleIf", "expr", "display",
                            "decimals"]
    static let optionKeys = ["id", "label", "icon"]
    static let nextKeys = ["if", "goto"]
    static let ruleKeys = ["equals", "notEquals", "before", "after", "requiredIf", "if", "plugin", "options",
                           "message", "hint", "level"]
    static let conditionKeys = ["field", "equals", "in", "notEmpty", "all", "any", "not", "expr"]
    static let validatorKeys = ["plugin", "options", "message", "hint", "level"]
    static let providerKeys = ["provider", "options"]
    static let reviewKeys = ["title", "note", "submitTitle"]
    static let submitKeys = ["action", "options", "timeoutSeconds", "successMessage"]

    init(reader: DocumentReader, capabilities: CapabilityCatalog) {
        self.reader = reader
        self.capabilities = capabilities
    }

    mutating func problem(_ path: JSONPath, _ message: String) {
        reader.sink.add(path, message)
    }

    mutating func missing(_ object: ObjectView, _ key: String, _ expected: String) {
        problem(object.path, "missing required key \(quoted(key)) (expected \(expected))")
    }

    // MARK: Flow

    /// The whole flow, or nil when any problem was found.
    mutating func flow(_ root: JSONNode) -> FlowDefinition? {
        let path = JSONPath.root
        guard let o = reader.object(root, path, "a flow definition") else { return nil }
        reader.checkKeys(o, allowed: Self.flowKeys, in: "the flow")

        if let f = o["format"] {
            if let v = reader.integer(f, path / "format", Int.min...Int.max) {
                if (1...FlowLoader.formatVersion).contains(v) {
                    format = v
                } else {
                    problem(path / "format", "unsupported format \(v) (this flowd reads formats 1 to \(FlowLoader.formatVersion))")
                }
            }
        } else {
            missing(o, "format", "1 or 2")
        }
        if let s = o["$schema"] { _ = reader.string(s, path / "$schema", "a schema reference") }

        var id: String?
        if let n = o["id"] { id = reader.identifier(n, path / "id", "the flow id") } else { missing(o, "id", "the flow's id") }
        var title: LocalizedText?
        if let n = o["title"] { title = reader.localized(n, path / "title", "the title") } else { missing(o, "title", "a string or translations") }
        let description = o["description"].flatMap { reader.localized($0, path / "description", "the description") }
        let finishTitle = o["finishTitle"].flatMap { reader.localized($0, path / "finishTitle", "the finish title") }
        let declaredLocales = o["locales"].flatMap { self.declaredLocales($0, path / "locales") }
        let authorization = o["authorization"].flatMap { self.authorization($0, path / "authorization") }
        let review = o["review"].flatMap { self.review($0, path / "review") }
        let submit = o["submit"].flatMap { self.submit($0, path / "submit") }

        var steps: [StepDefinition] = []
        if let n = o["steps"], let items = reader.array(n, path / "steps", "the list of steps", max: limits.maxSteps) {
            if items.isEmpty { problem(path / "steps", "a flow needs at least one step") }
            for (i, item) in items.enumerated() {
                if let s = step(item, path / "steps" / i, index: steps.count) {
                    steps.append(s)
                    references.stepPaths.append(path / "steps" / i)
                }
            }
        } else if o["steps"] == nil {
            missing(o, "steps", "a list of steps")
        }
        if fieldCount > limits.maxFields {
            problem(path / "steps", "\(fieldCount) fields in all are over the limit of \(limits.maxFields)")
        }

        if expressionNodes > limits.expression.maxNodesPerFlow {
            problem(path, "the flow's expressions have \(expressionNodes) parts in all, over the limit of \(limits.expression.maxNodesPerFlow)")
        }

        // Pass 2 needs every step; it only makes sense when their shapes were read.
        var computedTypes: [String: ExprType] = [:]
        if reader.sink.isEmpty {
            var linter = FlowLinter(reader: reader, references: references)
            linter.check(steps)
            reader = linter.reader
            computedTypes = linter.computedTypes
        }
        guard reader.sink.isEmpty, let id, let title else { return nil }

        let locales = declaredLocales ?? collectLocales(title: title, description: description, steps: steps,
                                                         review: review, submit: submit, finishTitle: finishTitle)
        return FlowDefinition(
            id: id, title: title, description: description, steps: steps, review: review, submit: submit,
            finishTitle: finishTitle, locales: locales, source: root, format: format, computedTypes: computedTypes,
            pipes: references.pipes, authorization: authorization)
    }

    /// `authorization`: the polkit action starting the flow needs, checked
    /// for form (``AuthorizationAction``); polkit knows whether it exists.
    private mutating func authorization(_ node: JSONNode, _ path: JSONPath) -> AuthorizationAction? {
        guard let id = reader.string(node, path, "a polkit action id") else { return nil }
        guard let action = AuthorizationAction(id) else {
            problem(path, "\"\(id.prefix(64))\" is not a polkit action id (letters, digits and '-' in two or more parts separated by dots, such as \"org.flowd.Flow1.start\")")
            return nil
        }
        return action
    }

    /// `locales`: the flow's declared translations, each once.
    private mutating func declaredLocales(_ node: JSONNode, _ path: JSONPath) -> [String]? {
        guard let items = reader.array(node, path, "a list of locales", max: limits.maxTranslations) else { return nil }
        var list: [String] = []
        for (i, item) in items.enumerated() {
            guard let s = reader.string(item, path / i, "a locale") else { continue }
            if !LocaleFallback.isWellFormed(s) {
                problem(path / i, "\(quoted(s)) is not a locale tag (expected one like \"en\" or \"pt-BR\")")
            } else if list.contains(where: { $0.lowercased() == s.lowercased() }) {
                problem(path / i, "the locale \(quoted(s)) is listed twice")
            } else {
                list.append(s)
            }
        }
        if items.isEmpty { problem(path, "the list of locales is empty") }
        return list
    }

    private mutating func review(_ node: JSONNode, _ path: JSONPath) -> ReviewDefinition? {
        guard let r = reader.object(node, path, "the review page") else { return nil }
        reader.checkKeys(r, allowed: Self.reviewKeys, in: "review")
        references.hasReview = true
        return ReviewDefinition(
            title: r["title"].flatMap { piped($0, path / "title", "the review title", step: nil) },
            note: r["note"].flatMap { piped($0, path / "note", "the review note", step: nil) },
            submitTitle: r["submitTitle"].flatMap { reader.localized($0, path / "submitTitle", "the submit button's label") })
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
        if let action { checkOptions(.submitAction, action, o["options"], at: path / "options", reference: path) }
        var timeout = SubmitDefinition.defaultTimeoutSeconds
        if let n = o["timeoutSeconds"], let t = reader.number(n, path / "timeoutSeconds") {
            if t > 0 && t <= limits.maxTimeoutSeconds {
                timeout = t
            } else {
                problem(path / "timeoutSeconds", "\(t) is out of range (expected more than 0 and at most \(Int(limits.maxTimeoutSeconds)) seconds)")
            }
        }
        let success = o["successMessage"].flatMap { piped($0, path / "successMessage", "the success message", step: nil) }
        return SubmitDefinition(action: action, options: options, timeoutSeconds: timeout, successMessage: success)
    }

    /// The locales the flow's texts are written in, in order of appearance
    /// (when the flow does not declare `locales`).
    private func collectLocales(
        title: LocalizedText, description: LocalizedText?, steps: [StepDefinition], review: ReviewDefinition?,
        submit: SubmitDefinition?, finishTitle: LocalizedText?
    ) -> [String] {
        var texts = [title, description, finishTitle]
        for s in steps {
            texts += [s.title, s.description, s.body]
            for f in s.fields {
                texts += [f.label, f.help, f.placeholder, f.otherLabel, f.patternHint, f.display] + f.options.map(\.label)
            }
        }
        texts += [review?.title, review?.note, review?.submitTitle, submit?.successMessage]
        var seen: [String] = []
        for locale in texts.compactMap({ $0?.locales }).joined() where !seen.contains(locale) { seen.append(locale) }
        return seen.isEmpty ? ["en"] : seen
    }
}
