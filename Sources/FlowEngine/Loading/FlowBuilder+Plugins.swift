import FlowKit

// Where a flow names a plugin capability: providers (`optionsFrom`,
// `prefill`), field validators, and the check that someone provides it.
extension FlowBuilder {
    /// A provider: a capability name, or `{"provider": name, "options": {…}}`.
    mutating func provider(_ node: JSONNode, _ path: JSONPath, kind: CapabilityKind, what: String) -> ProviderReference? {
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
        return PluginRule(name: name, options: options, message: message, hint: hint, level: level)
    }

    /// A problem when no loaded plugin provides `name` as a `kind`, with a
    /// suggestion or the names that exist.
    mutating func requireCapability(_ kind: CapabilityKind, _ name: String, _ path: JSONPath, _ what: String) {
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
}
