import FlowKit

extension SubmitReceipt {
    /// The receipt with every number that is not finite (NaN, ±infinity)
    /// replaced by the string `"NaN"`, `"Infinity"` or `"-Infinity"`, and
    /// where those numbers were (`ratio`, `limits[0]`, `nested.score`).
    ///
    /// `JSONValue.number` takes any `Double`, but JSON, the session store
    /// and clients have no such numbers. The action has already done its
    /// work when it returns, so refusing the receipt would make the person
    /// run it again: the values are kept, as text.
    package func replacingNonFiniteNumbers() -> (receipt: SubmitReceipt, replaced: [String]) {
        var replaced: [String] = []
        var values: [String: JSONValue] = [:]
        for key in self.values.keys.sorted() {
            if let value = self.values[key] {
                values[key] = Self.finite(value, path: key, replaced: &replaced)
            }
        }
        return (SubmitReceipt(values), replaced)
    }

    private static func finite(_ value: JSONValue, path: String, replaced: inout [String]) -> JSONValue {
        switch value {
        case .number(let d) where !d.isFinite:
            replaced.append(path)
            return .string(d.isNaN ? "NaN" : d < 0 ? "-Infinity" : "Infinity")
        case .array(let elements):
            return .array(elements.enumerated().map { finite($1, path: "\(path)[\($0)]", replaced: &replaced) })
        case .object(let members):
            var result: [String: JSONValue] = [:]
            for key in members.keys.sorted() {
                if let member = members[key] { result[key] = finite(member, path: path + "." + key, replaced: &replaced) }
            }
            return .object(result)
        case .null, .bool, .number, .string:
            return value
        }
    }
}
