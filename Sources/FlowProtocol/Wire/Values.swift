import DBus
import FlowKit

/// Values as the contract sends them: answers (docs/dbus-api.md, "Answer
/// values") and plugin JSON such as a receipt. What callers send in is
/// parsed and bounded by the daemon; a client reads an answer back with
/// ``answer(from:)``.
package enum WireValue {
    /// An answer as the D-Bus type the contract gives its field type:
    /// `s`, `as`, `b`, `x` (every integer) or `d`.
    package static func answer(_ value: AnswerValue) -> DBusValue {
        switch value {
        case .text(let s): return .string(s)
        case .list(let l): return .strings(l)
        case .bool(let b): return .bool(b)
        case .integer(let i): return .int64(i)
        case .number(let d): return .double(d)
        }
    }

    /// The decoder of an answer as ``answer(_:)`` sends it: nil for a value
    /// of another type. The other integer types a caller may send are read
    /// too (flowd widens them).
    package static func answer(from value: DBusValue) -> AnswerValue? {
        switch value {
        case .string(let s): return .text(s)
        case .bool(let b): return .bool(b)
        case .int64(let i): return .integer(i)
        case .int32(let i): return .integer(Int64(i))
        case .uint32(let u): return .integer(Int64(u))
        case .double(let d): return .number(d)
        default: return value.strings.map(AnswerValue.list)
        }
    }

    /// True when `value` has a type an answer is sent with.
    package static func isAnswer(_ value: DBusValue) -> Bool {
        switch value {
        case .string, .bool, .int64, .double: return true
        case .array(let element, _): return element == .string
        default: return false
        }
    }

    /// Answers by field id, as the values of an `a{sv}`.
    package static func answers(_ answers: [String: AnswerValue]) -> [String: DBusValue] {
        answers.mapValues(answer)
    }

    /// A plugin's JSON value: strings, doubles, booleans, `av` and nested
    /// `a{sv}`; nil for `null` (left out of the enclosing container).
    package static func json(_ json: JSONValue) -> DBusValue? {
        switch json {
        case .null: return nil
        case .bool(let b): return .bool(b)
        case .number(let d): return .double(d)
        case .string(let s): return .string(s)
        case .array(let items): return .array(elementType: .variant, items.compactMap { self.json($0).map(DBusValue.variant) })
        case .object(let members): return .vardict(members.compactMapValues(self.json))
        }
    }

    /// A JSON object (a receipt) as the values of an `a{sv}`.
    package static func json(_ object: [String: JSONValue]) -> [String: DBusValue] {
        object.compactMapValues(json)
    }
}
