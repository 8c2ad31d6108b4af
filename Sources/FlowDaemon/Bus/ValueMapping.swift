import DBus
import FlowEngine
import FlowKit

/// What callers send in, typed and with every bound a caller controls
/// checked. (What goes out is encoded by FlowProtocol's wire structs.)
enum ValueMapping {
    /// The answers of a `SetAnswers` call (or the `prefill` option), typed and
    /// bounded. Values arrive already unwrapped from their variants.
    ///
    /// - Parameter maxCount: the most entries; `MaxAnswersPerCall` unless
    ///   the call answers a whole flow (``maxAnswerFileEntries``).
    static func answers(
        _ dict: [String: DBusValue], limits: SessionLimits, maxCount: Int? = nil
    ) throws(FlowdError) -> [String: AnswerValue] {
        let maxCount = maxCount ?? limits.maxAnswersPerCall
        guard dict.count <= maxCount else {
            throw .limitExceeded("\(dict.count) answers in one call are over the limit of \(maxCount)")
        }
        var result: [String: AnswerValue] = [:]
        result.reserveCapacity(dict.count)
        for (key, value) in dict {
            try checkLength(key, what: "a field id", limits: limits)
            result[key] = try answer(value, field: key, limits: limits)
        }
        return result
    }

    /// One answer: `s`, `as`, `b`, an integer type or `d`.
    static func answer(_ value: DBusValue, field: String, limits: SessionLimits) throws(FlowdError) -> AnswerValue {
        switch value {
        case .string(let s):
            try checkLength(s, what: "the answer to \(field)", limits: limits)
            return .text(s)
        case .array(_, let items):
            guard items.count <= limits.maxListLength else {
                throw .limitExceeded("\(items.count) items for \(field) are over the limit of \(limits.maxListLength)")
            }
            var strings: [String] = []
            strings.reserveCapacity(items.count)
            for item in items {
                guard case .string(let s) = item else {
                    throw .invalidArgs("the answer to \(field) has D-Bus type '\(value.signature)'; a list must be 'as'")
                }
                try checkLength(s, what: "an item of \(field)", limits: limits)
                strings.append(s)
            }
            return .list(strings)
        case .bool(let b): return .bool(b)
        case .byte(let v): return .integer(Int64(v))
        case .int16(let v): return .integer(Int64(v))
        case .uint16(let v): return .integer(Int64(v))
        case .int32(let v): return .integer(Int64(v))
        case .uint32(let v): return .integer(Int64(v))
        case .int64(let v): return .integer(v)
        case .uint64(let v):
            guard let i = Int64(exactly: v) else { throw .invalidArgs("the answer to \(field) is too large") }
            return .integer(i)
        case .double(let d):
            guard d.isFinite else { throw .invalidArgs("the answer to \(field) is not a finite number") }
            return .number(d)
        case .variant(let inner):
            return try answer(inner, field: field, limits: limits)
        default:
            throw .invalidArgs(
                "the answer to \(field) has D-Bus type '\(value.signature)'; expected s, as, b, an integer type or d")
        }
    }

    /// The most entries of an answer file (the `answers` option of
    /// `StartSession`): every field a flow may have, each with its Other text.
    static func maxAnswerFileEntries(_ limits: SessionLimits) -> Int {
        max(limits.maxAnswersPerCall, 2 * FlowLoadLimits.default.maxFields)
    }

    /// Refuses a string longer than the configured bound (in UTF-8 bytes).
    static func checkLength(_ s: String, what: String, limits: SessionLimits) throws(FlowdError) {
        let length = s.utf8.count
        guard length <= limits.maxStringLength else {
            throw .limitExceeded("\(what) is \(length) bytes, over the limit of \(limits.maxStringLength)")
        }
    }
}
