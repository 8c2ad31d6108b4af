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
                strings.append(s)
            }
            return try list(strings, field: field, limits: limits)
        case .bool(let b): return .bool(b)
        case .byte(let v): return .integer(Int64(v))
        case .int16(let v): return .integer(Int64(v))
        case .uint16(let v): return .integer(Int64(v))
        case .int32(let v): return .integer(Int64(v))
        case .uint32(let v): return .integer(Int64(v))
        case .int64(let v): return .integer(v)
        case .uint64(let v): return try integer(v, field: field)
        case .double(let d): return try number(d, field: field)
        case .variant(let inner):
            return try answer(inner, field: field, limits: limits)
        default:
            throw .invalidArgs(
                "the answer to \(field) has D-Bus type '\(value.signature)'; expected s, as, b, an integer type or d")
        }
    }

    /// A list answer whose items are all strings, each bounded.
    private static func list(_ strings: [String], field: String, limits: SessionLimits) throws(FlowdError) -> AnswerValue {
        for s in strings { try checkLength(s, what: "an item of \(field)", limits: limits) }
        return .list(strings)
    }

    private static func integer(_ v: UInt64, field: String) throws(FlowdError) -> AnswerValue {
        guard let i = Int64(exactly: v) else { throw .invalidArgs("the answer to \(field) is too large") }
        return .integer(i)
    }

    private static func number(_ d: Double, field: String) throws(FlowdError) -> AnswerValue {
        guard d.isFinite else { throw .invalidArgs("the answer to \(field) is not a finite number") }
        return .number(d)
    }

    /// The answers of a `SetAnswers` or `CheckAnswers` call read straight
    /// from its `a{sv}` argument: the same answers, and the same errors, as
    /// ``answers(_:limits:maxCount:)`` of the `[String: DBusValue]` that
    /// `next` reads, without making that dictionary and its values (a third
    /// of the handler's own work). A message that cannot be read, or names
    /// a key twice, is refused as reading refuses it; then too many
    /// answers; then the first answer out of bounds or of a wrong type.
    static func answers(reading args: inout MessageReader, limits: SessionLimits) throws(DBusError) -> [String: AnswerValue] {
        let maxCount = limits.maxAnswersPerCall
        var result: [String: AnswerValue] = [:]
        var count = 0
        var refusal: FlowdError?
        try args.nextVardict { (key, value) throws(DBusError) in
            count += 1
            let answer: Result<AnswerValue, FlowdError>
            if refusal == nil, count <= maxCount {
                answer = try Self.answer(reading: &value, field: key, limits: limits)
            } else {
                // Read as before (a value that cannot be read still refuses
                // the message); only its key is kept, to tell a duplicate.
                _ = try value.nextValue()
                answer = .success(.bool(false))
            }
            let kept: AnswerValue
            switch answer {
            case .success(let value): kept = value
            case .failure(let error):
                if refusal == nil { refusal = error }
                kept = .bool(false)
            }
            if result.updateValue(kept, forKey: key) != nil {
                throw MessageReader.duplicateKeyError(key)
            }
        }
        guard count <= maxCount else {
            throw FlowdError.limitExceeded("\(count) answers in one call are over the limit of \(maxCount)").dbusError
        }
        if let refusal { throw refusal.dbusError }
        return result
    }

    /// One answer read from the reader of a variant's contents: `s`, `as`,
    /// `b`, the integer types and `d` directly, anything else as a
    /// ``DBusValue`` for ``answer(_:field:limits:)`` to take or refuse.
    private static func answer(
        reading value: inout MessageReader, field: String, limits: SessionLimits
    ) throws(DBusError) -> Result<AnswerValue, FlowdError> {
        // The key's bound first, as the dictionary's path checks it.
        do throws(FlowdError) {
            try checkLength(field, what: "a field id", limits: limits)
        } catch {
            _ = try value.nextValue()
            return .failure(error)
        }
        switch value.nextTypeCode {
        case UInt8(ascii: "s"):
            let s = try value.next(String.self)
            return Result { () throws(FlowdError) in
                try checkLength(s, what: "the answer to \(field)", limits: limits)
                return .text(s)
            }
        case UInt8(ascii: "a") where value.nextIs(stringList):
            let strings = try value.next([String].self)
            return Result { () throws(FlowdError) in
                guard strings.count <= limits.maxListLength else {
                    throw .limitExceeded("\(strings.count) items for \(field) are over the limit of \(limits.maxListLength)")
                }
                return try list(strings, field: field, limits: limits)
            }
        case UInt8(ascii: "b"): return .success(.bool(try value.next(Bool.self)))
        case UInt8(ascii: "y"): return .success(.integer(Int64(try value.next(UInt8.self))))
        case UInt8(ascii: "n"): return .success(.integer(Int64(try value.next(Int16.self))))
        case UInt8(ascii: "q"): return .success(.integer(Int64(try value.next(UInt16.self))))
        case UInt8(ascii: "i"): return .success(.integer(Int64(try value.next(Int32.self))))
        case UInt8(ascii: "u"): return .success(.integer(Int64(try value.next(UInt32.self))))
        case UInt8(ascii: "x"): return .success(.integer(try value.next(Int64.self)))
        case UInt8(ascii: "t"):
            let v = try value.next(UInt64.self)
            return Result { () throws(FlowdError) in try integer(v, field: field) }
        case UInt8(ascii: "d"):
            let d = try value.next(Double.self)
            return Result { () throws(FlowdError) in try number(d, field: field) }
        default:
            let other = try value.nextValue()
            return Result { () throws(FlowdError) in try answer(other, field: field, limits: limits) }
        }
    }

    /// `as`, made once (a literal is validated each time it is made).
    private static let stringList: Signature = "as"

    /// The most entries of an answer file (the `answers` option of
    /// `StartSession`): every field a flow may have, each with its Other text.
    static func maxAnswerFileEntries(_ limits: SessionLimits) -> Int {
        max(limits.maxAnswersPerCall, 2 * FlowLoadLimits.default.maxFields)
    }

    /// Refuses a string longer than the configured bound (in UTF-8 bytes).
    /// `what` is made only for the refusal.
    static func checkLength(_ s: String, what: @autoclosure () -> String, limits: SessionLimits) throws(FlowdError) {
        let length = s.utf8.count
        guard length <= limits.maxStringLength else {
            throw .limitExceeded("\(what()) is \(length) bytes, over the limit of \(limits.maxStringLength)")
        }
    }
}
