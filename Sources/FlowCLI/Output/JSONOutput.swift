import DBus

/// A JSON value for `--json` output. Objects keep their keys in the order
/// given, so the output is stable and reads in a sensible order.
package indirect enum JSONOutput: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A signed integer.
    case integer(Int64)
    /// An unsigned integer (a D-Bus `t` above `Int64.max` stays exact).
    case unsigned(UInt64)
    /// A number; without a fraction it prints as an integer, not finite as `null`.
    case double(Double)
    /// A string, escaped as JSON requires.
    case string(String)
    /// An array.
    case array([JSONOutput])
    /// An object whose keys keep this order.
    case object([(String, JSONOutput)])

    package static func == (lhs: JSONOutput, rhs: JSONOutput) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.unsigned(let a), .unsigned(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(serialized())
    }

    /// An object from `pairs`, in that order.
    package static func object(_ pairs: KeyValuePairs<String, JSONOutput>) -> JSONOutput {
        .object(pairs.map { ($0.key, $0.value) })
    }

    /// An object from a dictionary, keys sorted.
    package static func sortedObject(_ dictionary: [String: JSONOutput]) -> JSONOutput {
        .object(dictionary.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    /// A string array.
    package static func strings(_ items: [String]) -> JSONOutput { .array(items.map { .string($0) }) }

    /// The value for `key` of an object.
    package subscript(key: String) -> JSONOutput? {
        guard case .object(let pairs) = self else { return nil }
        return pairs.first { $0.0 == key }?.1
    }

    /// The JSON text on one line, no spaces.
    package func serialized() -> String {
        var out = ""
        write(to: &out, indent: nil, level: 0)
        return out
    }

    /// The JSON text indented by two spaces, for a person reading it.
    package func pretty() -> String {
        var out = ""
        write(to: &out, indent: "  ", level: 0)
        return out
    }

    private func write(to out: inout String, indent: String?, level: Int) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .integer(let i): out += String(i)
        case .unsigned(let u): out += String(u)
        case .double(let d): out += d.isFinite ? Render.number(d) : "null"
        case .string(let s): Self.writeString(s, to: &out)
        case .array(let items):
            Self.writeContainer("[", items, "]", to: &out, indent: indent, level: level) { item, out in
                item.write(to: &out, indent: indent, level: level + 1)
            }
        case .object(let pairs):
            Self.writeContainer("{", pairs, "}", to: &out, indent: indent, level: level) { pair, out in
                Self.writeString(pair.0, to: &out)
                out += indent == nil ? ":" : ": "
                pair.1.write(to: &out, indent: indent, level: level + 1)
            }
        }
    }

    /// `open`, the elements separated by commas (one per line when
    /// indenting), `close`; an empty container stays on its line (`[]`, `{}`).
    private static func writeContainer<Element>(
        _ open: String, _ elements: [Element], _ close: String, to out: inout String, indent: String?, level: Int,
        _ writeElement: (Element, inout String) -> Void
    ) {
        out += open
        for (i, element) in elements.enumerated() {
            if i > 0 { out += "," }
            newline(&out, indent, level + 1)
            writeElement(element, &out)
        }
        if !elements.isEmpty { newline(&out, indent, level) }
        out += close
    }

    private static func newline(_ out: inout String, _ indent: String?, _ level: Int) {
        guard let indent else { return }
        out += "\n"
        for _ in 0..<level { out += indent }
    }

    private static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            default:
                // C1 too: a terminal showing the JSON could take one for a control.
                if scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value) || scalar.value == 0x2028
                    || scalar.value == 0x2029 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}

extension JSONOutput {
    /// A D-Bus value as JSON: strings, booleans and numbers as themselves,
    /// arrays as arrays, `a{sv}` and other dictionaries as objects (keys
    /// sorted), structs as arrays, variants as their content.
    package init(_ value: DBusValue) {
        switch value {
        case .byte(let v): self = .integer(Int64(v))
        case .bool(let v): self = .bool(v)
        case .int16(let v): self = .integer(Int64(v))
        case .uint16(let v): self = .integer(Int64(v))
        case .int32(let v): self = .integer(Int64(v))
        case .uint32(let v): self = .integer(Int64(v))
        case .int64(let v): self = .integer(v)
        case .uint64(let v): self = .unsigned(v)
        case .double(let v): self = .double(v)
        case .string(let v): self = .string(v)
        case .objectPath(let v): self = .string(v.rawValue)
        case .signature(let v): self = .string(v.rawValue)
        case .unixFD: self = .null
        case .array(_, let items): self = .array(items.map(JSONOutput.init))
        case .dictionary(_, _, let entries):
            var pairs: [(String, JSONOutput)] = entries.map { entry in
                (JSONOutput.keyText(entry.key), JSONOutput(entry.value))
            }
            pairs.sort { $0.0 < $1.0 }
            self = .object(pairs)
        case .structure(let fields): self = .array(fields.map(JSONOutput.init))
        case .variant(let inner): self = JSONOutput(inner)
        }
    }

    /// An `a{sv}` as a JSON object, keys sorted.
    package init(_ dict: [String: DBusValue]) {
        self = .object(dict.sorted { $0.key < $1.key }.map { ($0.key, JSONOutput($0.value)) })
    }

    private static func keyText(_ key: DBusValue) -> String {
        switch JSONOutput(key) {
        case .string(let s): return s
        case .integer(let i): return String(i)
        case .unsigned(let u): return String(u)
        case .bool(let b): return b ? "true" : "false"
        case .double(let d): return "\(d)"
        default: return ""
        }
    }
}
