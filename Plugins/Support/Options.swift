import FlowKit

/// A flow file gave a shipped plugin options it cannot use. The person sees the
/// daemon's generic message; this text goes to the journal for the
/// administrator.
package struct PluginConfigurationError: Error, CustomStringConvertible {
    package var description: String

    package init(_ capability: String, _ problem: String) {
        description = "\(capability): \(problem)"
    }
}

/// Typed access to the `options` a flow file passes to a capability, with
/// errors that name the capability and the key.
package struct PluginOptions {
    package let capability: String
    package let values: [String: JSONValue]
    /// The options of `capability`, checked against its declaration (its
    /// ``DeclaresOptions/declaredOptions``, the one list of what it takes):
    /// flowd refuses a flow that does not fit at load, and this check keeps
    /// a call from another host (the probe, a test) just as strict.
    package init(
        _ values: [String: JSONValue], capability: String, declared: [PluginOption]
    ) throws(PluginConfigurationError) {
        self.capability = capability
        self.values = values
        if let problem = PluginOption.problems(in: values, declared: declared).first {
            throw PluginConfigurationError(capability, problem.description)
        }
    }

    package func string(_ key: String) throws(PluginConfigurationError) -> String? {
        try value(key, .string) { $0.stringValue }
    }

    package func bool(_ key: String) throws(PluginConfigurationError) -> Bool? {
        try value(key, .bool) { $0.boolValue }
    }

    /// A whole number within `range`.
    package func integer(_ key: String, in range: ClosedRange<Int>) throws(PluginConfigurationError) -> Int? {
        try value(key, .integer, in: range) { $0.intValue }
    }

    /// A number within `range`.
    package func number(_ key: String, in range: ClosedRange<Double>) throws(PluginConfigurationError) -> Double? {
        try value(key, .number, in: range) { $0.numberValue }
    }

    package func strings(_ key: String) throws(PluginConfigurationError) -> [String]? {
        try value(key, .strings) { $0.arrayValue?.compactMap(\.stringValue) }
    }

    package func stringMap(_ key: String) throws(PluginConfigurationError) -> [String: String]? {
        try value(key, .stringMap) { $0.objectValue?.compactMapValues(\.stringValue) }
    }

    /// The option `key` as `extract` reads it; nil when absent or `null`, and
    /// an error naming the key when it is not of `type` (FlowKit's check).
    private func value<T>(
        _ key: String, _ type: PluginOptionType, _ extract: (JSONValue) -> T?
    ) throws(PluginConfigurationError) -> T? {
        guard let v = values[key], v != .null else { return nil }
        guard type.accepts(v), let typed = extract(v) else {
            throw PluginConfigurationError(capability, "option \"\(key)\" must be \(type.summary)")
        }
        return typed
    }

    /// ``value(_:_:_:)`` for a number that must also lie within `range`.
    private func value<T: Comparable>(
        _ key: String, _ type: PluginOptionType, in range: ClosedRange<T>, _ extract: (JSONValue) -> T?
    ) throws(PluginConfigurationError) -> T? {
        guard let v = values[key], v != .null else { return nil }
        guard let n = extract(v), range.contains(n) else {
            throw PluginConfigurationError(
                capability, "option \"\(key)\" must be \(type.summary) from \(range.lowerBound) to \(range.upperBound)")
        }
        return n
    }
}
