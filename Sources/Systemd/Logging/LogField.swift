/// The name of a structured log field, valid for the journal: 1 to 64
/// characters from `A–Z`, `0–9` and `_`, not starting with a digit or `_`
/// (those are journald's trusted fields).
///
/// The fields the backend writes itself (`MESSAGE`, `PRIORITY`,
/// `MESSAGE_ID`, `SYSLOG_IDENTIFIER`, `CODE_FILE`, `CODE_LINE`,
/// `CODE_FUNC`) are reserved, so metadata can never overwrite them.
public struct LogField: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The journal field name.
    public let name: String

    /// The fields the journal backend sets from the record itself.
    public static let reservedNames: Set<String> = [
        "MESSAGE", "MESSAGE_ID", "PRIORITY", "SYSLOG_IDENTIFIER", "CODE_FILE", "CODE_LINE", "CODE_FUNC",
    ]

    /// `name` exactly, or nil when it breaks the journal's rules or is reserved.
    public init?(validating name: String) {
        guard Self.isValid(name), !Self.reservedNames.contains(name) else { return nil }
        self.name = name
    }

    /// `name` made valid: letters uppercased, any other character that is
    /// not `A–Z`, `0–9` or `_` replaced by one `_`, leading underscores dropped,
    /// `FLOWD_` put in front of a name that would start with a digit or is
    /// reserved, and the result cut to 64 characters. `"session-id"`
    /// becomes `SESSION_ID`; `"message"` becomes `FLOWD_MESSAGE`.
    public init(normalizing name: String) {
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
            result = "FLOWD_" + result
        }
        if Self.reservedNames.contains(result) { result = "FLOWD_" + result }
        self.name = String(result.prefix(64))
    }

    private init(known name: String) {
        self.name = name
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

    public var description: String { name }

    public static func < (lhs: LogField, rhs: LogField) -> Bool { lhs.name < rhs.name }

    /// `FLOWD_SESSION`: a session id.
    public static let session = LogField(known: "FLOWD_SESSION")
    /// `FLOWD_FLOW`: a flow id.
    public static let flow = LogField(known: "FLOWD_FLOW")
    /// `FLOWD_PLUGIN`: a plugin name.
    public static let plugin = LogField(known: "FLOWD_PLUGIN")
    /// `FLOWD_STEP`: a step id (never an answer).
    public static let step = LogField(known: "FLOWD_STEP")
    /// `FLOWD_FIELD`: a field id (never its value).
    public static let field = LogField(known: "FLOWD_FIELD")
    /// `FLOWD_STATE`: a session state name.
    public static let state = LogField(known: "FLOWD_STATE")
    /// `FLOWD_UID`: the uid of a caller or session owner.
    public static let uid = LogField(known: "FLOWD_UID")
    /// `FLOWD_SENDER`: a D-Bus unique name.
    public static let sender = LogField(known: "FLOWD_SENDER")
    /// `FLOWD_PATH`: a file path (a flow file, a plugin, the database).
    public static let path = LogField(known: "FLOWD_PATH")
    /// `FLOWD_ERROR`: an error name such as `org.flowd.Flow1.Error.Timeout`.
    public static let error = LogField(known: "FLOWD_ERROR")
    /// `FLOWD_DURATION_USEC`: how long something took, in microseconds.
    public static let durationMicroseconds = LogField(known: "FLOWD_DURATION_USEC")
    /// `ERRNO`: the journal's standard field for an `errno` value.
    public static let errno = LogField(known: "ERRNO")
}
