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
        guard let v = values[key], v != .null else { return nil }
        guard let s = v.stringValue else { throw PluginConfigurationError(capability, "option \"\(key)\" must be a string") }
        return s
    }

    package func bool(_ key: String) throws(PluginConfigurationError) -> Bool? {
        guard let v = values[key], v != .null else { return nil }
        guard let b = v.boolValue else { throw PluginConfigurationError(capability, "option \"\(key)\" must be true or false") }
        return b
    }

    /// A whole number within `range`.
    package func integer(_ key: String, in range: ClosedRange<Int>) throws(PluginConfigurationError) -> Int? {
        guard let v = values[key], v != .null else { return nil }
        guard let i = v.intValue, range.contains(i) else {
            throw PluginConfigurationError(
                capability, "option \"\(key)\" must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return i
    }

    /// A number within `range`.
    package func number(_ key: String, in range: ClosedRange<Double>) throws(PluginConfigurationError) -> Double? {
        guard let v = values[key], v != .null else { return nil }
        guard let d = v.numberValue, range.contains(d) else {
            throw PluginConfigurationError(
                capability, "option \"\(key)\" must be a number from \(range.lowerBound) to \(range.upperBound)")
        }
        return d
    }

    package func strings(_ key: String) throws(PluginConfigurationError) -> [String]? {
        guard let v = values[key], v != .null else { return nil }
        guard let array = v.arrayValue else {
            throw PluginConfigurationError(capability, "option \"\(key)\" must be an array of strings")
        }
        var result: [String] = []
        for item in array {
            guard let s = item.stringValue else {
                throw PluginConfigurationError(capability, "option \"\(key)\" must be an array of strings")
            }
            result.append(s)
        }
        return result
    }

    package func stringMap(_ key: String) throws(PluginConfigurationError) -> [String: String]? {
        guard let v = values[key], v != .null else { return nil }
        guard let object = v.objectValue else {
            throw PluginConfigurationError(capability, "option \"\(key)\" must be an object of strings")
        }
        var result: [String: String] = [:]
        for (k, item) in object {
            guard let s = item.stringValue else {
                throw PluginConfigurationError(capability, "option \"\(key)\".\(k) must be a string")
            }
            result[k] = s
        }
        return result
    }
}
