import DBus
import FlowEngine
import FlowKit

/// The current step of a session: the `GetStep` reply (docs/dbus-api.md,
/// "GetStep keys"). Built by the daemon from the engine's ``StepView``,
/// sent with ``dbusValue``, decoded by clients with ``init(dbusValue:)``.
package struct StepPage: Sendable, Hashable {
    /// The step id; `review` on Review, `complete` once submitted.
    package var id: String
    /// What the client draws.
    package var kind: StepView.Kind
    /// The title in the session's locale.
    package var title: String
    /// A line under the title, or empty.
    package var description = ""
    /// Content steps: the text; complete: the success message.
    package var body = ""
    /// A freedesktop icon name, or empty.
    package var icon = ""
    /// The fields of a form step, in order.
    package var fields: [StepField] = []
    /// A step-level message, or empty.
    package var error = ""
    /// Since 1.1: a step-level warning (never stops Continue), or empty.
    package var warning = ""
    /// What a screen reader says on arrival.
    package var announcement = ""
    /// N of "Step N of M", from 1.
    package var index = 0
    /// M of "Step N of M".
    package var count = 0
    /// The Continue button's label.
    package var continueLabel = ""
    /// The Back button's label.
    package var backLabel = ""
    /// Back is possible.
    package var canGoBack = false
    /// Continue is possible.
    package var canContinue = false

    // Since 1.1. A 1.0 daemon sends none of these; they decode as empty.

    /// "Step 2 of 4" on its own (``announcement`` adds the title).
    package var progressLabel = ""
    /// "Try again": the main button after a failed submit.
    package var retryLabel = ""
    /// "Cancel": stops a running submit.
    package var cancelLabel = ""
    /// "Sending…": shown while a submit runs.
    package var submittingLabel = ""
    /// "Not sent": shown after a cancelled submit.
    package var notSentLabel = ""
    /// "(optional)": after the label of a field that is not required.
    package var optionalLabel = ""
    /// The flow's title in the session's locale.
    package var flowTitle = ""
    /// The flow's description in the session's locale, or empty.
    package var flowDescription = ""
    /// The locale the session asked for, normalized.
    package var locale = ""
    /// The flow locale the texts resolved to.
    package var effectiveLocale = ""
    /// Rules of the whole step (plugin step validators), said up front.
    package var ruleHints: [RuleHint] = []

    /// A step with an id, a kind and a title; the rest is set afterwards.
    package init(id: String, kind: StepView.Kind, title: String) {
        self.id = id
        self.kind = kind
        self.title = title
    }

    /// The field with `id`.
    package func field(_ id: String) -> StepField? { fields.first { $0.id == id } }

    /// The daemon's side: the page for the engine's view of the step.
    package init(_ view: consuming StepView) {
        // Each property set once, without a delegating init (that made a
        // whole page first and copied it).
        id = view.id
        kind = view.kind
        title = view.title
        description = view.description
        body = view.body
        icon = view.icon
        fields = view.fields.map(StepField.init)
        error = view.error
        warning = view.warning
        announcement = view.announcement
        index = view.index
        count = view.count
        continueLabel = view.continueLabel
        backLabel = view.backLabel
        canGoBack = view.canGoBack
        canContinue = view.canContinue
        progressLabel = view.progressLabel
        retryLabel = view.retryLabel
        cancelLabel = view.cancelLabel
        submittingLabel = view.submittingLabel
        notSentLabel = view.notSentLabel
        optionalLabel = view.optionalLabel
        flowTitle = view.flowTitle
        flowDescription = view.flowDescription
        locale = view.locale
        effectiveLocale = view.effectiveLocale
        ruleHints = view.ruleHints
    }

    /// The encoder: the `a{sv}` of the reply, written straight into the
    /// message (``WireEncoder``): `GetStep` is the call clients make most.
    package func encode(into encoder: inout WireEncoder) throws(DBusError) {
        try encoder.vardict { (d) throws(DBusError) in
            d.string("id", id)
            d.string("kind", kind.rawValue)
            d.string("title", title)
            d.string("description", description)
            d.string("body", body)
            d.string("icon", icon)
            try d.entry("fields", signature: "aa{sv}") { (list) throws(DBusError) in
                try list.array(elementAlignment: 4) { (list) throws(DBusError) in
                    for field in fields { try field.encode(into: &list) }
                }
            }
            d.string("error", error)
            d.string("warning", warning)
            d.string("announcement", announcement)
            d.uint32("index", UInt32(clamping: index))
            d.uint32("count", UInt32(clamping: count))
            d.string("continueLabel", continueLabel)
            d.string("backLabel", backLabel)
            d.bool("canGoBack", canGoBack)
            d.bool("canContinue", canContinue)
            d.string("progressLabel", progressLabel)
            d.string("retryLabel", retryLabel)
            d.string("cancelLabel", cancelLabel)
            d.string("submittingLabel", submittingLabel)
            d.string("notSentLabel", notSentLabel)
            d.string("optionalLabel", optionalLabel)
            d.string("flowTitle", flowTitle)
            d.string("flowDescription", flowDescription)
            d.string("locale", locale)
            d.string("effectiveLocale", effectiveLocale)
            try RuleHints.encode(ruleHints, as: "ruleHints", into: &d)
        }
    }

    /// The reply's `a{sv}` as a value (what ``encode(into:)`` writes, read back).
    package var dbusValue: DBusValue { readBack(encode) }

    /// The decoder: every key the contract always sends must be there with
    /// its type; keys it does not name are ignored.
    package init(dbusValue: DBusValue) throws(WireError) {
        try self.init(WireDictionary(dbusValue, "the GetStep reply"))
    }

    /// The decoder, from the reply's `a{sv}` already read into a dictionary.
    package init(dbus entries: [String: DBusValue]) throws(WireError) {
        try self.init(WireDictionary(entries, "the GetStep reply"))
    }

    private init(_ d: WireDictionary) throws(WireError) {
        self.init(id: try d.required("id"), kind: try d.name("kind", StepView.Kind.self), title: try d.required("title"))
        description = try d.required("description")
        body = try d.required("body")
        icon = try d.required("icon")
        error = try d.required("error")
        // Since 1.1: a flowd 1.0 does not send it.
        warning = try d.optional("warning") ?? ""
        announcement = try d.required("announcement")
        index = try d.count("index")
        count = try d.count("count")
        continueLabel = try d.required("continueLabel")
        backLabel = try d.required("backLabel")
        canGoBack = try d.required("canGoBack")
        canContinue = try d.required("canContinue")
        progressLabel = try d.optional("progressLabel") ?? ""
        retryLabel = try d.optional("retryLabel") ?? ""
        cancelLabel = try d.optional("cancelLabel") ?? ""
        submittingLabel = try d.optional("submittingLabel") ?? ""
        notSentLabel = try d.optional("notSentLabel") ?? ""
        optionalLabel = try d.optional("optionalLabel") ?? ""
        flowTitle = try d.optional("flowTitle") ?? ""
        flowDescription = try d.optional("flowDescription") ?? ""
        locale = try d.optional("locale") ?? ""
        effectiveLocale = try d.optional("effectiveLocale") ?? ""
        ruleHints = try RuleHints.decode(d, "ruleHints")
        fields = []
        for (index, field) in try d.list("fields", of: "a{sv}").enumerated() {
            fields.append(try StepField(dbusValue: field, place: "field \(index + 1) of the GetStep reply"))
        }
    }
}

/// One field of the current step (the `fields` of `GetStep`).
package struct StepField: Sendable, Hashable {
    /// The field id, the key for `SetAnswers`.
    package var id: String
    /// The field's type.
    package var type: FieldType
    /// The label in the session's locale.
    package var label: String
    /// A hint under the field, or empty.
    package var help = ""
    /// An input placeholder, or empty.
    package var placeholder = ""
    /// The field must be answered.
    package var required = false
    /// The options of a choice (never `other`); an icon when the flow or plugin gives one.
    package var options: [ChoiceOption] = []
    /// The field offers Other.
    package var other = false
    /// The label of Other.
    package var otherLabel = ""
    /// The answer in its contract type; nil when there is none, and always for a secure field.
    package var value: DBusValue?
    /// Other's free text, when there is one.
    package var otherValue: String?
    /// An answer is held (the only way to see that a secure field is filled).
    package var isSet = false
    /// The error to show under the field, or empty.
    package var error = ""
    /// Since 1.1: a warning to show under the field (never stops Continue), or empty.
    package var warning = ""
    /// Since 1.1: a `computed` field's value in words, formatted for the
    /// locale ("1,440 €"); empty for other fields.
    package var display = ""
    /// "Select all that apply" for a multiple choice, or empty.
    package var hint = ""
    /// The `minLength` rule, in Unicode scalars.
    package var minLength: Int?
    /// The `maxLength` rule, in Unicode scalars.
    package var maxLength: Int?
    /// The `minimum` rule.
    package var minimum: Double?
    /// The `maximum` rule.
    package var maximum: Double?
    /// The `integer` rule.
    package var integer = false
    /// The `minSelected` rule.
    package var minSelected: Int?
    /// The `maxSelected` rule.
    package var maxSelected: Int?
    /// The earliest date, YYYY-MM-DD (`today` resolved).
    package var after: String?
    /// The latest date, YYYY-MM-DD (`today` resolved).
    package var before: String?
    /// The `mustBeOn` rule.
    package var mustBeOn = false

    // Since 1.1. A 1.0 daemon sends none of these; they decode as empty.

    /// A toggle's "Yes"; empty for other types.
    package var yesLabel = ""
    /// A toggle's "No"; empty for other types.
    package var noLabel = ""
    /// What the field's `pattern` wants, in words; empty without a pattern.
    package var patternHint = ""
    /// A `requiredIf` rule makes ``required`` depend on other answers.
    package var conditionallyRequired = false
    /// The rules beyond the field's own constraints, said up front.
    package var ruleHints: [RuleHint] = []

    /// A field with an id, a type and a label; the rest is set afterwards.
    package init(id: String, type: FieldType, label: String) {
        self.id = id
        self.type = type
        self.label = label
    }

    /// True for `secure` fields: write-only, never shown.
    package var isSecure: Bool { type == .secure }

    /// The person must answer it: required, or a toggle that must be on
    /// ("I accept the terms" is never optional).
    package var mustBeAnswered: Bool { required || mustBeOn }

    /// The person may leave it as it is: it must not be answered and no
    /// rule (`requiredIf`) can make it required. Clients mark only such a
    /// field "(optional)".
    package var isOptional: Bool { !mustBeAnswered && !conditionallyRequired }

    /// The label of option `id` (`other` included).
    package func label(ofOption id: String) -> String? {
        if id == "other", other { return otherLabel.isEmpty ? "Other" : otherLabel }
        return options.first { $0.id == id }?.label
    }

    /// The constraint rules as the contract sends them, in a fixed order:
    /// the bounds that are set, and `integer` and `mustBeOn` always.
    package var constraints: [(key: String, value: DBusValue)] {
        var rules: [(key: String, value: DBusValue)] = []
        if let v = minLength { rules.append(("minLength", .uint32(UInt32(clamping: v)))) }
        if let v = maxLength { rules.append(("maxLength", .uint32(UInt32(clamping: v)))) }
        if let v = minimum { rules.append(("minimum", .double(v))) }
        if let v = maximum { rules.append(("maximum", .double(v))) }
        rules.append(("integer", .bool(integer)))
        if let v = minSelected { rules.append(("minSelected", .uint32(UInt32(clamping: v)))) }
        if let v = maxSelected { rules.append(("maxSelected", .uint32(UInt32(clamping: v)))) }
        if let v = after { rules.append(("after", .string(v))) }
        if let v = before { rules.append(("before", .string(v))) }
        rules.append(("mustBeOn", .bool(mustBeOn)))
        return rules
    }

    /// The daemon's side: the field for the engine's view of it.
    package init(_ view: consuming FieldView) {
        id = view.id
        type = view.type
        label = view.label
        help = view.help
        placeholder = view.placeholder
        required = view.required
        options = view.options
        other = view.other
        otherLabel = view.otherLabel
        value = view.value.map(WireValue.answer)
        otherValue = view.otherText
        isSet = view.isSet
        error = view.error
        warning = view.warning
        display = view.display
        hint = view.hint
        minLength = view.minLength
        maxLength = view.maxLength
        minimum = view.minimum
        maximum = view.maximum
        integer = view.integer
        minSelected = view.minSelected
        maxSelected = view.maxSelected
        after = view.after
        before = view.before
        mustBeOn = view.mustBeOn
        yesLabel = view.yesLabel
        noLabel = view.noLabel
        patternHint = view.patternHint
        conditionallyRequired = view.conditionallyRequired
        ruleHints = view.ruleHints
    }

    /// The encoder: one `a{sv}` of `fields`.
    package func encode(into encoder: inout WireEncoder) throws(DBusError) {
        try encoder.vardict { (d) throws(DBusError) in
            d.string("id", id)
            d.string("type", type.rawValue)
            d.string("label", label)
            d.string("help", help)
            d.string("placeholder", placeholder)
            d.bool("required", required)
            try d.entry("options", signature: "a(ss)") { (list) throws(DBusError) in
                try list.array(elementAlignment: 8) { (list) throws(DBusError) in
                    for option in options {
                        list.align(8)
                        list.string(option.id)
                        list.string(option.label)
                    }
                }
            }
            d.bool("other", other)
            d.string("otherLabel", otherLabel)
            d.bool("isSet", isSet)
            d.string("error", error)
            d.string("warning", warning)
            d.string("display", display)
            d.string("hint", hint)
            d.bool("conditionallyRequired", conditionallyRequired)
            try RuleHints.encode(ruleHints, as: "ruleHints", into: &d)
            // Toggles only, and a pattern's hint only when the field has a pattern.
            if !yesLabel.isEmpty { d.string("yesLabel", yesLabel) }
            if !noLabel.isEmpty { d.string("noLabel", noLabel) }
            if !patternHint.isEmpty { d.string("patternHint", patternHint) }
            if options.contains(where: { $0.icon != nil }) {
                var icons: [String: String] = [:]
                for option in options { if let icon = option.icon { icons[option.id] = icon } }
                try d.stringDictionary("optionIcons", icons)
            }
            if let value { try d.value("value", value) }
            if let otherValue { d.string("otherValue", otherValue) }
            for (key, value) in constraints { try d.value(key, value) }
        }
    }

    /// One `a{sv}` of `fields` as a value (what ``encode(into:)`` writes, read back).
    package var dbusValue: DBusValue { readBack(encode) }

    /// The decoder of one `a{sv}` of `fields`.
    package init(dbusValue: DBusValue, place: String = "a GetStep field") throws(WireError) {
        let d = try WireDictionary(dbusValue, place)
        self.init(id: try d.required("id"), type: try d.name("type", FieldType.self), label: try d.required("label"))
        help = try d.required("help")
        placeholder = try d.required("placeholder")
        required = try d.required("required")
        let icons = try d.optional("optionIcons", [String: String].self) ?? [:]
        options = try d.required("options", [DBusStruct<String, String>].self).map { option in
            let (id, label) = option.fields
            return ChoiceOption(id: id, label: label, icon: icons[id])
        }
        other = try d.required("other")
        otherLabel = try d.required("otherLabel")
        value = try d.entries["value"].map { (value) throws(WireError) in
            guard WireValue.isAnswer(value) else {
                throw WireError("\"value\" of \(place) has type '\(value.signature)', which is not an answer type")
            }
            return value
        }
        otherValue = try d.optional("otherValue")
        isSet = try d.required("isSet")
        error = try d.required("error")
        // Since 1.1: a flowd 1.0 does not send them.
        warning = try d.optional("warning") ?? ""
        display = try d.optional("display") ?? ""
        hint = try d.required("hint")
        minLength = try d.optionalCount("minLength")
        maxLength = try d.optionalCount("maxLength")
        minimum = try d.optional("minimum")
        maximum = try d.optional("maximum")
        integer = try d.required("integer")
        minSelected = try d.optionalCount("minSelected")
        maxSelected = try d.optionalCount("maxSelected")
        after = try d.optional("after")
        before = try d.optional("before")
        mustBeOn = try d.required("mustBeOn")
        yesLabel = try d.optional("yesLabel") ?? ""
        noLabel = try d.optional("noLabel") ?? ""
        patternHint = try d.optional("patternHint") ?? ""
        conditionallyRequired = try d.optional("conditionallyRequired") ?? false
        ruleHints = try RuleHints.decode(d, "ruleHints")
    }

    /// Every sentence said about the field's rules before the person
    /// breaks one, in order: the multiple choice's hint, the pattern's,
    /// then the rule hints (step rules, `requiredIf`, plugin validators).
    package var hintTexts: [String] {
        ([hint, patternHint] + ruleHints.map(\.text)).filter { !$0.isEmpty }
    }
}

/// The `a{sv}` an encoder writes, read back as a value: from valid strings
/// it always reads back; an empty dictionary otherwise.
private func readBack(_ encode: (inout WireEncoder) throws(DBusError) -> Void) -> DBusValue {
    (try? DBusValue.decoding(signature: "a{sv}", encode).first) ?? .vardict([:])
}

/// The `ruleHints` of a step or a field: `a(sss)`, (kind, subject, text).
enum RuleHints {
    static func dbusValue(_ hints: [RuleHint]) -> DBusValue {
        .array(
            elementType: "(sss)",
            hints.map { .structure([.string($0.kind.rawValue), .string($0.subject), .string($0.text)]) })
    }

    /// The hints as the entry `key` of an `a{sv}` being written.
    static func encode(_ hints: [RuleHint], as key: StaticString, into d: inout VardictWriter) throws(DBusError) {
        try d.entry(key, signature: "a(sss)") { (list) throws(DBusError) in
            try list.array(elementAlignment: 8) { (list) throws(DBusError) in
                for hint in hints {
                    list.align(8)
                    list.string(hint.kind.rawValue)
                    list.string(hint.subject)
                    list.string(hint.text)
                }
            }
        }
    }

    /// The hints at `key`; none when the key is absent (a 1.0 daemon).
    static func decode(_ d: WireDictionary, _ key: String) throws(WireError) -> [RuleHint] {
        var hints: [RuleHint] = []
        for entry in try d.optional(key, [DBusStruct<String, String, String>].self) ?? [] {
            let (kindName, subject, text) = entry.fields
            guard let kind = RuleHint.Kind(rawValue: kindName) else {
                throw WireError("a rule hint in \"\(key)\" of \(d.place) has the kind \"\(kindName.prefix(64))\", which the contract does not name")
            }
            hints.append(RuleHint(kind: kind, subject: subject, text: text))
        }
        return hints
    }
}
