import DBus
import FlowEngine
import FlowKit

/// Conversions between the engine's values and D-Bus values, with every bound
/// a caller controls checked on the way in.
enum ValueMapping {
    // MARK: in

    /// The answers of a `SetAnswers` call (or the `prefill` option), typed and
    /// bounded. Values arrive already unwrapped from their variants.
    static func answers(_ dict: [String: DBusValue], limits: SessionLimits) throws(FlowdError) -> [String: AnswerValue] {
        guard dict.count <= limits.maxAnswersPerCall else {
            throw .limitExceeded("\(dict.count) answers in one call are over the limit of \(limits.maxAnswersPerCall)")
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

    /// Refuses a string longer than the configured bound (in UTF-8 bytes).
    static func checkLength(_ s: String, what: String, limits: SessionLimits) throws(FlowdError) {
        let length = s.utf8.count
        guard length <= limits.maxStringLength else {
            throw .limitExceeded("\(what) is \(length) bytes, over the limit of \(limits.maxStringLength)")
        }
    }

    // MARK: out

    /// An answer as the D-Bus type the contract gives its field type.
    static func dbus(_ value: AnswerValue) -> DBusValue {
        switch value {
        case .text(let s): return .string(s)
        case .list(let l): return .strings(l)
        case .bool(let b): return .bool(b)
        case .integer(let i): return .int64(i)
        case .number(let d): return .double(d)
        }
    }

    /// Answers as `a{sv}`.
    static func vardict(_ answers: [String: AnswerValue]) -> DBusValue {
        .vardict(answers.mapValues(dbus))
    }

    /// A plugin's JSON (a receipt) as `a{sv}` values: strings, doubles,
    /// booleans, `av` and nested `a{sv}`; `null` members are left out.
    static func dbus(_ json: JSONValue) -> DBusValue? {
        switch json {
        case .null: return nil
        case .bool(let b): return .bool(b)
        case .number(let d): return .double(d)
        case .string(let s): return .string(s)
        case .array(let items): return .array(elementType: .variant, items.compactMap { dbus($0).map(DBusValue.variant) })
        case .object(let members): return .vardict(members.compactMapValues(dbus))
        }
    }

    /// A receipt as `a{sv}`.
    static func vardict(_ receipt: [String: JSONValue]) -> DBusValue {
        .vardict(receipt.compactMapValues(dbus))
    }

    /// The `GetStep` reply (docs/dbus-api.md, "GetStep keys").
    static func step(_ view: StepView) -> [String: DBusValue] {
        var d: [String: DBusValue] = [
            "id": .string(view.id), "kind": .string(view.kind.rawValue), "title": .string(view.title),
            "description": .string(view.description), "body": .string(view.body), "icon": .string(view.icon),
            "fields": .vardicts(view.fields.map(field)), "error": .string(view.error),
            "announcement": .string(view.announcement), "index": .uint32(UInt32(clamping: view.index)),
            "count": .uint32(UInt32(clamping: view.count)), "continueLabel": .string(view.continueLabel),
            "backLabel": .string(view.backLabel), "canGoBack": .bool(view.canGoBack),
            "canContinue": .bool(view.canContinue),
        ]
        d.reserveCapacity(d.count)
        return d
    }

    /// One field of `GetStep`.
    static func field(_ f: FieldView) -> [String: DBusValue] {
        var d: [String: DBusValue] = [
            "id": .string(f.id), "type": .string(f.type.rawValue), "label": .string(f.label), "help": .string(f.help),
            "placeholder": .string(f.placeholder), "required": .bool(f.required),
            "options": .array(
                elementType: "(ss)", f.options.map { .structure([.string($0.id), .string($0.label)]) }),
            "other": .bool(f.other), "otherLabel": .string(f.otherLabel), "isSet": .bool(f.isSet),
            "error": .string(f.error), "hint": .string(f.hint), "integer": .bool(f.integer),
            "mustBeOn": .bool(f.mustBeOn),
        ]
        if f.options.contains(where: { $0.icon != nil }) {
            var icons: [String: String] = [:]
            for o in f.options { if let icon = o.icon { icons[o.id] = icon } }
            d["optionIcons"] = .stringDictionary(icons)
        }
        if let value = f.value { d["value"] = dbus(value) }
        if let other = f.otherText { d["otherValue"] = .string(other) }
        if let v = f.minLength { d["minLength"] = .uint32(UInt32(clamping: v)) }
        if let v = f.maxLength { d["maxLength"] = .uint32(UInt32(clamping: v)) }
        if let v = f.minimum { d["minimum"] = .double(v) }
        if let v = f.maximum { d["maximum"] = .double(v) }
        if let v = f.minSelected { d["minSelected"] = .uint32(UInt32(clamping: v)) }
        if let v = f.maxSelected { d["maxSelected"] = .uint32(UInt32(clamping: v)) }
        if let v = f.after { d["after"] = .string(v) }
        if let v = f.before { d["before"] = .string(v) }
        return d
    }

    /// The `GetReview` groups.
    static func reviewGroups(_ review: ReviewView) -> DBusValue {
        .vardicts(review.groups.map { g in
            [
                "step": .string(g.step), "title": .string(g.title), "finished": .bool(g.finished),
                "status": .string(g.status), "editLabel": .string(g.editLabel),
                "answers": .array(
                    elementType: "(sss)",
                    g.answers.map { .structure([.string($0.field), .string($0.label), .string($0.display)]) }),
            ]
        })
    }

    /// The `Path` property, `a(sss)`.
    static func path(_ entries: [PathEntry]) -> DBusValue {
        .array(
            elementType: "(sss)",
            entries.map { .structure([.string($0.id), .string($0.title), .string($0.status.rawValue)]) })
    }
}
