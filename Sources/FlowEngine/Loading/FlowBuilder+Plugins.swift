import FlowKit

// Where a flow names a plugin capability: providers (`optionsFrom`,
// `prefill`), field validators, and the check that someone provides it.
extension FlowBuilder {
    /// A provider: a capability name, or `{"provider": name, "options": {…}}`.
    mutating func provider(_ node: JSONNode, _ path: JSONPath, kind: CapabilityKind, what: String) -> ProviderReference? {
        var name: String?
        var options: [String: JSONValue] = [:]
        var optionsNode: JSONNode?
        var namePath = path
        if case .string = node {
            name = reader.capabilityName(node, path)
        } else if let o = reader.object(node, path, "a plugin name or {\"provider\": …, \"options\": …}") {
            reader.checkKeys(o, allowed: Self.providerKeys, in: "a provider")
            namePath = path / "provider"
            if let n = o["provider"] { name = reader.capabilityName(n, namePath) } else { missing(o, "provider", "the plugin's name") }
            optionsNode = o["options"]
            if let n = optionsNode { options = reader.pluginOptions(n, path / "options") ?? [:] }
        }
        guard let name else { return nil }
        requireCapability(kind, name, namePath, what)
        checkOptions(kind, name, optionsNode, at: path / "options", reference: path)
        return ProviderReference(name: name, options: options)
    }

    /// A field's `validators`.
    mutating func validators(_ node: JSONNode, _ path: JSONPath) -> [PluginRule] {
        guard let items = reader.array(node, path, "the list of validators", max: limits.maxValidatorsPerField) else {
            return []
        }
        return items.enumerated().compactMap { i, item in validator(item, path / i) }
    }

    private mutating func validator(_ node: JSONNode, _ path: JSONPath) -> PluginRule? {
        guard let o = reader.object(node, path, "a validator") else { return nil }
        reader.checkKeys(o, allowed: Self.validatorKeys, in: "a validator")
        var name: String?
        if let n = o["plugin"] { name = reader.capabilityName(n, path / "plugin") } else { missing(o, "plugin", "the validator's plugin name") }
        let options = o["options"].flatMap { reader.pluginOptions($0, path / "options") } ?? [:]
        let message = o["message"].flatMap { reader.localized($0, path / "message", "the message") }
        let hint = o["hint"].flatMap { reader.localized($0, path / "hint", "the hint") }
        let level = self.level(o, path)
        guard let name else { return nil }
        requireCapability(.fieldValidator, name, path / "plugin", "field validator")
        checkOptions(.fieldValidator, name, o["options"], at: path / "options", reference: path)
        return PluginRule(name: name, options: options, message: message, hint: hint, level: level)
    }

    /// A problem when no loaded plugin provides `name` as a `kind`, with a
    /// suggestion or the names that exist.
    mutating func requireCapability(_ kind: CapabilityKind, _ name: String, _ path: JSONPath, _ what: String) {
        guard !capabilities.contains(kind, name) else { return }
        let known = capabilities.names(of: kind)
        var guess = reader.didYouMeanSuffix(name, in: known)
        if guess.isEmpty {
            guess = known.isEmpty
                ? " (no plugin provides any \(what))"
                : " (available: \(known.prefix(10).joined(separator: ", "))\(known.count > 10 ? ", …" : ""))"
        }
        problem(path, "no loaded plugin provides the \(what) \(quoted(name))\(guess)")
    }

    /// Problems where the `options` a flow gives the capability `name` (the
    /// member `node` at `path`, nil when absent) do not fit the options it
    /// declares: an unknown key (with a suggestion), a missing required
    /// option (placed at `reference`, the capability's reference, when there
    /// is no `options`), a value of the wrong type. A capability that
    /// declares nothing, or is not there, is not checked.
    mutating func checkOptions(_ kind: CapabilityKind, _ name: String, _ node: JSONNode?, at path: JSONPath, reference: JSONPath) {
        guard capabilities.contains(kind, name), let declared = capabilities.declaredOptions(of: name) else { return }
        var members: [JSONMember] = []
        if let node {
            guard case .object(let m) = node else { return }  // reported as not an object already
            members = m
        }
        let values = Dictionary(members.map { ($0.key, $0.value.jsonValue) }, uniquingKeysWith: { first, _ in first })
        for found in PluginOption.problems(in: values, declared: declared) {
            switch found {
            case .unknown(let key):
                let names = declared.map(\.name)
                var guess = reader.didYouMeanSuffix(key, in: names)
                if guess.isEmpty { guess = names.isEmpty ? " (it takes none)" : " (it takes \(names.joined(separator: ", ")))" }
                problem(path / key, "\(name) has no option \(quoted(key))\(guess)")
            case .wrongType(let option):
                let got = members.first { $0.key == option.name }?.value.kindName ?? "another type"
                problem(path / option.name, "\(name)'s option \(quoted(option.name)) must be \(option.type.summary), got \(got)")
            case .missing(let option):
                problem(node == nil ? reference : path, "\(name) needs the option \(quoted(option.name)) (\(option.type.summary))")
            }
        }
    }
}
