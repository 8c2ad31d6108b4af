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
        try encoder.write { (writer) throws(DBusError) in try encode(into: &writer) }
    }

    /// The same through a writer: each entry's head copied from the page's
    /// table of keys (``Keys``), no closure and no uniqueness check per
    /// entry (docs/performance.md, "The seventh round").
    package func encode(into w: inout WireWriter) throws(DBusError) { try Self.write(self, into: &w) }

    /// The bytes of a page, from a decoded ``StepPage`` or straight from the
    /// engine's ``StepView`` (`GetStep`'s reply: no page is made from the view).
    static func write<Page: StepPageContent>(_ p: Page, into w: inout WireWriter) throws(DBusError) {
        let k = keys
        let page = w.arrayStart(elementAlignment: 8)
        w.string(k.id, p.id)
        w.string(k.kind, p.kind.rawValue)
        w.string(k.title, p.title)
        w.string(k.description, p.description)
        w.string(k.body, p.body)
        w.string(k.icon, p.icon)
        w.entry(k.fields)
        let list = w.arrayStart(elementAlignment: 4)
        for field in p.fields { try StepField.write(field, into: &w) }
        w.arrayEnd(list)
        w.string(k.error, p.error)
        w.string(k.warning, p.warning)
        w.string(k.announcement, p.announcement)
        w.uint32(k.index, UInt32(clamping: p.index))
        w.uint32(k.count, UInt32(clamping: p.count))
        w.string(k.continueLabel, p.continueLabel)
        w.string(k.backLabel, p.backLabel)
        w.bool(k.canGoBack, p.canGoBack)
        w.bool(k.canContinue, p.canContinue)
        w.string(k.progressLabel, p.progressLabel)
        // The nine entries every page of a flow in a locale has alike:
        // copied from the bytes kept with the page texts when there are.
        // (No closure here: one that captured the page made the compiler
        // copy the whole view before each of its getters.)
        switch p.sharedBytes?.state {
        case .made(let bytes)?: w.preformatted(bytes)
        case .unmade?:
            // The first page of its flow and locale.
            let made = sharedEntries(p)
            p.sharedBytes?.keep(made)
            if let made { w.preformatted(made) } else { writeShared(p, into: &w) }
        case .refused?, nil: writeShared(p, into: &w)
        }
        w.entry(k.ruleHints)
        RuleHints.encode(p.ruleHints, into: &w)
        w.arrayEnd(page)
    }

    /// The entries `retryLabel` … `effectiveLocale`, in the reply's order.
    private static func writeShared<Page: StepPageContent>(_ p: Page, into w: inout WireWriter) {
        let k = keys
        w.string(k.retryLabel, p.retryLabel)
        w.string(k.cancelLabel, p.cancelLabel)
        w.string(k.submittingLabel, p.submittingLabel)
        w.string(k.notSentLabel, p.notSentLabel)
        w.string(k.optionalLabel, p.optionalLabel)
        w.string(k.flowTitle, p.flowTitle)
        w.string(k.flowDescription, p.flowDescription)
        w.string(k.locale, p.locale)
        w.string(k.effectiveLocale, p.effectiveLocale)
    }

    /// The bytes of ``writeShared(_:into:)``'s entries written from an
    /// 8-aligned start, to be kept (``KeptPageBytes``); nil when a text
    /// cannot be sent (a NUL), which each page then refuses as it would.
    static func sharedEntries<Page: StepPageContent>(_ p: Page) -> [UInt8]? {
        var encoder = WireEncoder()
        guard (try? encoder.write({ (w) throws(DBusError) in writeShared(p, into: &w) })) != nil,
            encoder.invalidity == nil
        else { return nil }
        return encoder.bytes
    }

    /// The heads of the reply's entries, in the order they are sent.
    private struct Keys {
        let id = VardictKey("id", "s")
        let kind = VardictKey("kind", "s")
        let title = VardictKey("title", "s")
        let description = VardictKey("description", "s")
        let body = VardictKey("body", "s")
        let icon = VardictKey("icon", "s")
        let fields = VardictKey("fields", "aa{sv}")
        let error = VardictKey("error", "s")
        let warning = VardictKey("warning", "s")
        let announcement = VardictKey("announcement", "s")
        let index = VardictKey("index", "u")
        let count = VardictKey("count", "u")
        let continueLabel = VardictKey("continueLabel", "s")
        let backLabel = VardictKey("backLabel", "s")
        let canGoBack = VardictKey("canGoBack", "b")
        let canContinue = VardictKey("canContinue", "b")
        let progressLabel = VardictKey("progressLabel", "s")
        let retryLabel = VardictKey("retryLabel", "s")
        let cancelLabel = VardictKey("cancelLabel", "s")
        let submittingLabel = VardictKey("submittingLabel", "s")
        let notSentLabel = VardictKey("notSentLabel", "s")
        let optionalLabel = VardictKey("optionalLabel", "s")
        let flowTitle = VardictKey("flowTitle", "s")
        let flowDescription = VardictKey("flowDescription", "s")
        let locale = VardictKey("locale", "s")
        let effectiveLocale = VardictKey("effectiveLocale", "s")
        let ruleHints = VardictKey("ruleHints", "a(sss)")
    }

    private static let keys = Keys()

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
        try encoder.write { (writer) throws(DBusError) in try encode(into: &writer) }
    }

    /// The same through a writer, as a page writes its fields.
    package func encode(into w: inout WireWriter) throws(DBusError) { try Self.write(self, into: &w) }

    /// The bytes of a field, from a decoded ``StepField`` or from the
    /// engine's ``FieldView``.
    static func write<Field: StepFieldContent>(_ f: Field, into w: inout WireWriter) throws(DBusError) {
        let k = keys
        let entries = w.arrayStart(elementAlignment: 8)
        w.string(k.id, f.id)
        w.string(k.type, f.type.rawValue)
        w.string(k.label, f.label)
        w.string(k.help, f.help)
        w.string(k.placeholder, f.placeholder)
        w.bool(k.required, f.required)
        w.entry(k.options)
        let list = w.arrayStart(elementAlignment: 8)
        var icons = false
        for option in f.options {
            w.align(8)
            w.string(option.id)
            w.string(option.label)
            icons = icons || option.icon != nil
        }
        w.arrayEnd(list)
        w.bool(k.other, f.other)
        w.string(k.otherLabel, f.otherLabel)
        w.bool(k.isSet, f.isSet)
        w.string(k.error, f.error)
        w.string(k.warning, f.warning)
        w.string(k.display, f.display)
        w.string(k.hint, f.hint)
        w.bool(k.conditionallyRequired, f.conditionallyRequired)
        w.entry(k.ruleHints)
        RuleHints.encode(f.ruleHints, into: &w)
        // Toggles only, and a pattern's hint only when the field has a pattern.
        if !f.yesLabel.isEmpty { w.string(k.yesLabel, f.yesLabel) }
        if !f.noLabel.isEmpty { w.string(k.noLabel, f.noLabel) }
        if !f.patternHint.isEmpty { w.string(k.patternHint, f.patternHint) }
        if icons {
            // In the options' order (their ids are unique), without a
            // dictionary made and hashed for it.
            w.entry(k.optionIcons)
            let dictionary = w.arrayStart(elementAlignment: 8)
            for option in f.options {
                guard let icon = option.icon else { continue }
                w.align(8)
                w.string(option.id)
                w.string(icon)
            }
            w.arrayEnd(dictionary)
        }
        try f.writeValue(into: &w)
        if let otherValue = f.otherValue { w.string(k.otherValue, otherValue) }
        // The constraint rules in ``constraints``' order.
        if let v = f.minLength { w.uint32(k.minLength, UInt32(clamping: v)) }
        if let v = f.maxLength { w.uint32(k.maxLength, UInt32(clamping: v)) }
        if let v = f.minimum { w.double(k.minimum, v) }
        if let v = f.maximum { w.double(k.maximum, v) }
        w.bool(k.integer, f.integer)
        if let v = f.minSelected { w.uint32(k.minSelected, UInt32(clamping: v)) }
        if let v = f.maxSelected { w.uint32(k.maxSelected, UInt32(clamping: v)) }
        if let v = f.after { w.string(k.after, v) }
        if let v = f.before { w.string(k.before, v) }
        w.bool(k.mustBeOn, f.mustBeOn)
        w.arrayEnd(entries)
    }

    /// The heads of a field's entries.
    fileprivate struct Keys {
        let id = VardictKey("id", "s")
        let type = VardictKey("type", "s")
        let label = VardictKey("label", "s")
        let help = VardictKey("help", "s")
        let placeholder = VardictKey("placeholder", "s")
        let required = VardictKey("required", "b")
        let options = VardictKey("options", "a(ss)")
        let other = VardictKey("other", "b")
        let otherLabel = VardictKey("otherLabel", "s")
        let isSet = VardictKey("isSet", "b")
        let error = VardictKey("error", "s")
        let warning = VardictKey("warning", "s")
        let display = VardictKey("display", "s")
        let hint = VardictKey("hint", "s")
        let conditionallyRequired = VardictKey("conditionallyRequired", "b")
        let ruleHints = VardictKey("ruleHints", "a(sss)")
        let yesLabel = VardictKey("yesLabel", "s")
        let noLabel = VardictKey("noLabel", "s")
        let patternHint = VardictKey("patternHint", "s")
        let optionIcons = VardictKey("optionIcons", "a{ss}")
        /// A value of its own type: the variant's signature is the value's.
        let value = VardictKey("value")
        /// An answer's value, by the answer's type (``WireValue/answer(_:)``).
        let textValue = VardictKey("value", "s")
        let listValue = VardictKey("value", "as")
        let boolValue = VardictKey("value", "b")
        let integerValue = VardictKey("value", "x")
        let numberValue = VardictKey("value", "d")
        let otherValue = VardictKey("otherValue", "s")
        let minLength = VardictKey("minLength", "u")
        let maxLength = VardictKey("maxLength", "u")
        let minimum = VardictKey("minimum", "d")
        let maximum = VardictKey("maximum", "d")
        let integer = VardictKey("integer", "b")
        let minSelected = VardictKey("minSelected", "u")
        let maxSelected = VardictKey("maxSelected", "u")
        let after = VardictKey("after", "s")
        let before = VardictKey("before", "s")
        let mustBeOn = VardictKey("mustBeOn", "b")
    }

    fileprivate static let keys = Keys()

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

    /// The hints as the value of an `a{sv}` entry being written (its head
    /// written before).
    static func encode(_ hints: [RuleHint], into w: inout WireWriter) {
        let list = w.arrayStart(elementAlignment: 8)
        for hint in hints {
            w.align(8)
            w.string(hint.kind.rawValue)
            w.string(hint.subject)
            w.string(hint.text)
        }
        w.arrayEnd(list)
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

// MARK: - What a page's bytes are written from

/// A step page's content as its bytes need it: ``StepPage`` (what a client
/// decoded, or a test made) and the engine's ``StepView``, which `GetStep`
/// writes straight into its reply (no ``StepPage`` is made and destroyed
/// per call; docs/performance.md, "The eighth round"). One writer
/// (``StepPage/write(_:into:)``) serves both, so their bytes cannot differ.
protocol StepPageContent {
    associatedtype Field: StepFieldContent
    var id: String { get }
    var kind: StepView.Kind { get }
    var title: String { get }
    var description: String { get }
    var body: String { get }
    var icon: String { get }
    var fields: [Field] { get }
    var error: String { get }
    var warning: String { get }
    var announcement: String { get }
    var index: Int { get }
    var count: Int { get }
    var continueLabel: String { get }
    var backLabel: String { get }
    var canGoBack: Bool { get }
    var canContinue: Bool { get }
    var progressLabel: String { get }
    var retryLabel: String { get }
    var cancelLabel: String { get }
    var submittingLabel: String { get }
    var notSentLabel: String { get }
    var optionalLabel: String { get }
    var flowTitle: String { get }
    var flowDescription: String { get }
    var locale: String { get }
    var effectiveLocale: String { get }
    var ruleHints: [RuleHint] { get }
    /// Where the bytes of `retryLabel` … `effectiveLocale` are kept, if
    /// anywhere (``KeptPageBytes``).
    var sharedBytes: KeptPageBytes? { get }
}

/// A field's content as its bytes need it (``StepField``, ``FieldView``).
protocol StepFieldContent {
    var id: String { get }
    var type: FieldType { get }
    var label: String { get }
    var help: String { get }
    var placeholder: String { get }
    var required: Bool { get }
    var options: [ChoiceOption] { get }
    var other: Bool { get }
    var otherLabel: String { get }
    var otherValue: String? { get }
    var isSet: Bool { get }
    var error: String { get }
    var warning: String { get }
    var display: String { get }
    var hint: String { get }
    var minLength: Int? { get }
    var maxLength: Int? { get }
    var minimum: Double? { get }
    var maximum: Double? { get }
    var integer: Bool { get }
    var minSelected: Int? { get }
    var maxSelected: Int? { get }
    var after: String? { get }
    var before: String? { get }
    var mustBeOn: Bool { get }
    var yesLabel: String { get }
    var noLabel: String { get }
    var patternHint: String { get }
    var conditionallyRequired: Bool { get }
    var ruleHints: [RuleHint] { get }
    /// The `value` entry, when the field has a value to send.
    func writeValue(into w: inout WireWriter) throws(DBusError)
}

extension StepPage: StepPageContent {
    /// A decoded page keeps no bytes: each is written from its strings.
    var sharedBytes: KeptPageBytes? { nil }
}

extension StepField: StepFieldContent {
    func writeValue(into w: inout WireWriter) throws(DBusError) {
        guard let value else { return }
        w.entry(Self.keys.value)
        try w.variant(value)
    }
}

extension StepView: StepPageContent {
    var sharedBytes: KeptPageBytes? { shared.kept }

    /// `GetStep`'s reply written straight from the engine's view: the bytes
    /// of ``StepPage/init(_:)``'s page for it, without making that page.
    package func encode(into encoder: inout WireEncoder) throws(DBusError) {
        try encoder.write { (writer) throws(DBusError) in try StepPage.write(self, into: &writer) }
    }
}

extension FieldView: StepFieldContent {
    var otherValue: String? { otherText }

    /// The answer as ``WireValue/answer(_:)`` sends it, written without
    /// making the ``DBusValue``.
    func writeValue(into w: inout WireWriter) throws(DBusError) {
        guard let value else { return }
        let k = StepField.keys
        switch value {
        case .text(let text): w.string(k.textValue, text)
        case .list(let items):
            w.entry(k.listValue)
            w.strings(items)
        case .bool(let flag): w.bool(k.boolValue, flag)
        case .integer(let number):
            w.entry(k.integerValue)
            w.int64(number)
        case .number(let number): w.double(k.numberValue, number)
        }
    }
}
