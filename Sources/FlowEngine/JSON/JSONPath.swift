/// A location inside a JSON document, written the way a person reads it:
/// `steps[2].fields[0].type`, or `title["pt-BR"]` for a key that is not a
/// plain identifier.
struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    enum Component: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    private(set) var components: [Component] = []

    static let root = JSONPath()

    /// The path to member `key` of the value at `lhs`.
    static func / (lhs: JSONPath, key: String) -> JSONPath { JSONPath(components: lhs.components + [.key(key)]) }
    /// The path to element `index` of the array at `lhs`.
    static func / (lhs: JSONPath, index: Int) -> JSONPath { JSONPath(components: lhs.components + [.index(index)]) }

    /// The path as text; the document root is `$`.
    var description: String {
        if components.isEmpty { return "$" }
        var out = ""
        for c in components {
            switch c {
            case .index(let i):
                out += "[\(i)]"
            case .key(let k):
                if Self.isIdentifier(k) {
                    if !out.isEmpty { out += "." }
                    out += k
                } else {
                    out += "[" + quoted(k) + "]"
                }
            }
        }
        return out
    }

    private static func isIdentifier(_ s: String) -> Bool {
        guard let first = s.unicodeScalars.first, first == "_" || first == "$" || isASCIILetter(first) else {
            return false
        }
        return s.unicodeScalars.allSatisfy { $0 == "_" || $0 == "$" || isASCIILetter($0) || isASCIIDigit($0) }
    }
}

func isASCIILetter(_ s: Unicode.Scalar) -> Bool {
    (s.value >= 0x41 && s.value <= 0x5A) || (s.value >= 0x61 && s.value <= 0x7A)
}

func isASCIIDigit(_ s: Unicode.Scalar) -> Bool {
    s.value >= 0x30 && s.value <= 0x39
}

/// `s` in double quotes, with quotes, backslashes and control characters
/// escaped, and cut to 80 scalars: a hostile file must not be able to put a
/// megabyte or a terminal escape sequence into an error message.
func quoted(_ s: String, limit: Int = 80) -> String {
    var out = "\""
    var n = 0
    for scalar in s.unicodeScalars {
        if n == limit {
            out += "…"
            break
        }
        n += 1
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\t": out += "\\t"
        case "\r": out += "\\r"
        default:
            if scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value < 0xA0) {
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out + "\""
}
