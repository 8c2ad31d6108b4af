/// The name of a structured log field, valid for the journal: 1 to 64
/// characters from `A–Z`, `0–9` and `_`, not starting with a digit or `_`
/// (those are journald's trusted fields).
///
/// The fields a backend writes from the record itself (`MESSAGE`,
/// `PRIORITY`, `MESSAGE_ID`, `SYSLOG_IDENTIFIER`, `CODE_FILE`, `CODE_LINE`,
/// `CODE_FUNC`) are reserved, so metadata can never overwrite them. An
/// application declares its own fields as constants:
///
///     extension LogField { static let session = LogField(constant: "MYAPP_SESSION") }
package struct LogField: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The journal field name.
    package let name: String

    /// The fields backends set from the record itself.
    package static let reservedNames: Set<String> = [
        "MESSAGE", "MESSAGE_ID", "PRIORITY", "SYSLOG_IDENTIFIER", "CODE_FILE", "CODE_LINE", "CODE_FUNC",
    ]

    /// `name` exactly, or nil when it breaks the journal's rules or is reserved.
    package init?(validating name: String) {
        guard Self.isValid(name), !Self.reservedNames.contains(name) else { return nil }
        self.name = name
    }

    /// A field name written in the source, checked once: a name that breaks
    /// the rules is a programming error and stops the process.
    package init(constant name: StaticString) {
        let text = name.description
        precondition(Self.isValid(text) && !Self.reservedNames.contains(text), "invalid log field name \(text)")
        self.name = text
    }

    /// `name` made valid: letters uppercased, any other character that is
    /// not `A–Z`, `0–9` or `_` replaced by one `_`, leading underscores
    /// dropped, `prefix` put in front of a name that would start with a digit
    /// or is reserved, and the result cut to 64 characters. `"session-id"`
    /// becomes `SESSION_ID`; `"message"` with prefix `APP_` becomes `APP_MESSAGE`.
    package init(normalizing name: String, prefix: String) {
        var bytes: [UInt8] = name.unicodeScalars.map { scalar in
            switch scalar {
            case "a"..."z": return UInt8(scalar.value) - 0x20
            case "A"..."Z", "0"..."9", "_": return UInt8(scalar.value)
            default: return UInt8(ascii: "_")
            }
        }
        while bytes.first == UInt8(ascii: "_") { bytes.removeFirst() }
        var result = String(decoding: bytes, as: UTF8.self)
        if result.isEmpty { result = "FIELD" }
        if let first = result.utf8.first, first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9") {
            result = prefix + result
        }
        if Self.reservedNames.contains(result) { result = prefix + result }
        self.name = String(result.prefix(64))
    }

    static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count), let first = bytes.first else { return false }
        if first == UInt8(ascii: "_") || (first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9")) { return false }
        return bytes.allSatisfy { byte in
            (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
        }
    }

    package var description: String { name }

    package static func < (lhs: LogField, rhs: LogField) -> Bool { lhs.name < rhs.name }

    /// `ERRNO`: the journal's standard field for an `errno` value.
    package static let errno = LogField(constant: "ERRNO")
}
