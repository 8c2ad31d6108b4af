/// One answer to one field, as it crosses between the daemon, the engine and
/// plugins.
///
/// | field type | case |
/// |---|---|
/// | `text`, `multiline`, `secure`, `email`, `choice` (option id), `date` (YYYY-MM-DD), `time` (HH:MM) | ``text(_:)`` |
/// | `multichoice` | ``list(_:)`` |
/// | `toggle` | ``bool(_:)`` |
/// | `number` | ``integer(_:)`` or ``number(_:)`` |
///
/// Deliberately not `CustomStringConvertible`: a value may be a secret, and must
/// never end up in a log line by accident.
public enum AnswerValue: Sendable, Hashable {
    case text(String)
    case list([String])
    case bool(Bool)
    case integer(Int64)
    case number(Double)

    /// True for an empty string or an empty list: setting such a value clears
    /// the answer.
    public var isEmpty: Bool {
        switch self {
        case .text(let s): return s.isEmpty
        case .list(let l): return l.isEmpty
        case .bool, .integer, .number: return false
        }
    }

    /// The string of a ``text(_:)`` value, otherwise nil.
    public var textValue: String? {
        if case .text(let s) = self { return s }
        return nil
    }

    /// The items of a ``list(_:)`` value, otherwise nil.
    public var listValue: [String]? {
        if case .list(let l) = self { return l }
        return nil
    }

    /// The flag of a ``bool(_:)`` value, otherwise nil.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The numeric value of ``integer(_:)`` or ``number(_:)``, otherwise nil.
    public var doubleValue: Double? {
        switch self {
        case .integer(let i): return Double(i)
        case .number(let d): return d
        default: return nil
        }
    }
}

/// Answers encode as plain JSON: a string, an array of strings, a boolean or a
/// number. That is the shape plugins write into spool files and webhooks.
extension AnswerValue: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? c.decode(Int64.self) {
            self = .integer(i)
        } else if let d = try? c.decode(Double.self) {
            self = .number(d)
        } else if let s = try? c.decode(String.self) {
            self = .text(s)
        } else if let l = try? c.decode([String].self) {
            self = .list(l)
        } else {
            throw DecodingError.dataCorruptedError(
                in: c, debugDescription: "expected a string, an array of strings, a boolean or a number")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .text(let s): try c.encode(s)
        case .list(let l): try c.encode(l)
        case .bool(let b): try c.encode(b)
        case .integer(let i): try c.encode(i)
        case .number(let d): try c.encode(d)
        }
    }
}
