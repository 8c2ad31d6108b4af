import FlowKit

/// The type of a field, which fixes its answer value and the rules it accepts.
package enum FieldType: String, Sendable, Hashable, CaseIterable, Codable {
    case text, multiline, secure, email, number, date, time, toggle, choice, multichoice
    /// Format 2: a read-only value worked out from other answers by an
    /// expression (``FieldDefinition/expression``); nothing can set it.
    case computed

    /// Types whose answer is a string the person types.
    package var isTextual: Bool {
        switch self {
        case .text, .multiline, .secure, .email: return true
        default: return false
        }
    }

    /// Types that have options.
    package var isChoice: Bool { self == .choice || self == .multichoice }

    /// What the answer value looks like, for error messages.
    var valueDescription: String {
        switch self {
        case .text, .multiline, .secure, .email: return "a string"
        case .choice: return "an option id (a string)"
        case .multichoice: return "an array of option ids"
        case .number: return "a number"
        case .date: return "a date string (YYYY-MM-DD)"
        case .time: return "a time string (HH:MM)"
        case .toggle: return "a boolean"
        case .computed: return "no value (it is computed from other answers)"
        }
    }
}

/// The built-in field rules. Their names are also the keys of a field's
/// `messages` map, which replaces a rule's default message.
package enum FieldRule: String, Sendable, Hashable, CaseIterable {
    case required, mustBeOn, format, minLength, maxLength, pattern, email, minimum, maximum, integer
    case after, before, minSelected, maxSelected, option, other

    /// Whether this rule can apply to a field of `type`.
    func applies(to type: FieldType) -> Bool {
        switch self {
        case .required: return type != .toggle && type != .computed
        case .mustBeOn: return type == .toggle
        case .format: return type == .date || type == .time
        case .minLength, .maxLength, .pattern: return type.isTextual
        case .email: return type == .email
        case .minimum, .maximum, .integer: return type == .number
        case .after, .before: return type == .date
        case .minSelected, .maxSelected: return type == .multichoice
        case .option, .other: return type.isChoice
        }
    }
}

/// One option of a `choice` or `multichoice` field as the flow file gives it.
package struct OptionDefinition: Sendable, Hashable {
    /// The answer value when this option is chosen; never `other`.
    package let id: String
    /// The label shown to the person.
    package let label: LocalizedText
    /// An optional freedesktop icon name.
    package let icon: String?
}

/// A plugin named in a flow file, with the options passed to it
/// (`optionsFrom`, `prefill`).
package struct ProviderReference: Sendable, Hashable {
    /// The capability's dotted name, for example `flowd.weekdays`.
    package let name: String
    /// The `options` object, handed to the plugin in `PluginContext.options`.
    package let options: [String: JSONValue]
}

/// A named plugin validator at field or step level.
package struct PluginRule: Sendable, Hashable {
    /// The capability's dotted name, for example `flowd.username-available`.
    package let name: String
    /// The `options` object, handed to the plugin in `PluginContext.options`.
    package let options: [String: JSONValue]
    /// Replaces the plugin's own message when the plugin reports a problem.
    package let message: LocalizedText?
    /// Says what the validator wants before the person fails it; replaces
    /// the plugin's own description (`describeRule`).
    package let hint: LocalizedText?
    /// Format 2: `warning` makes what the plugin reports a warning, which
    /// is shown but never stops Continue.
    package let level: IssueLevel
}

/// A bound of a date rule: a fixed date or the day the check runs.
package enum DateBound: Sendable, Hashable {
    case today
    case date(CivilDate)

    /// The date this bound means on `today`.
    package func resolve(today: CivilDate) -> CivilDate {
        switch self {
        case .today: return today
        case .date(let d): return d
        }
    }
}

/// One field of a form step.
///
/// Its values live in one final class, shared by every copy until one is
/// changed (only the loader changes them): a step, a page or a check that
/// takes a field copies one reference instead of some twenty
/// (docs/performance.md, "The eighth round").
package struct FieldDefinition: Sendable, Hashable {
    /// The field's values, behind one reference (``SharedValues``).
    fileprivate struct Values: Sendable, Hashable {
        var id: String
        var type: FieldType
        var label: LocalizedText
        var help: LocalizedText?
        var placeholder: LocalizedText?
        var required: Bool = false
        var mustBeOn: Bool = false
        var minLength: Int?
        var maxLength: Int?
        var pattern: PatternRegex?
        var patternHint: LocalizedText?
        var minimum: Double?
        var maximum: Double?
        var integer: Bool = false
        var after: DateBound?
        var before: DateBound?
        var minSelected: Int?
        var maxSelected: Int?
        var options: [OptionDefinition] = []
        var optionsFrom: ProviderReference?
        var other: Bool = false
        var otherLabel: LocalizedText?
        var prefill: ProviderReference?
        var validators: [PluginRule] = []
        var messages: [FieldRule: LocalizedText] = [:]
        var visibleIf: Condition?
        var expression: Expression?
        var display: LocalizedText?
        var decimals: Int?
    }

    private var stored: SharedValues<Values>

    /// A field with an id, a type and a label; the loader sets the rest.
    init(id: String, type: FieldType, label: LocalizedText) {
        stored = SharedValues(Values(id: id, type: type, label: label))
    }

    /// Unique across the whole flow: answers are keyed by field id.
    package internal(set) var id: String {
        get { stored.values.id }
        set { stored.edit { $0.id = newValue } }
    }
    /// The type, which fixes the answer value and the rules that apply.
    package internal(set) var type: FieldType {
        get { stored.values.type }
        set { stored.edit { $0.type = newValue } }
    }
    /// The label shown to the person.
    package internal(set) var label: LocalizedText {
        get { stored.values.label }
        set { stored.edit { $0.label = newValue } }
    }
    /// A hint under the field.
    package internal(set) var help: LocalizedText? {
        get { stored.values.help }
        set { stored.edit { $0.help = newValue } }
    }
    /// Shown in an empty input.
    package internal(set) var placeholder: LocalizedText? {
        get { stored.values.placeholder }
        set { stored.edit { $0.placeholder = newValue } }
    }
    /// Trimmed text non-empty, list non-empty, choice made.
    package internal(set) var required: Bool {
        get { stored.values.required }
        set { stored.edit { $0.required = newValue } }
    }
    /// A toggle must be on.
    package internal(set) var mustBeOn: Bool {
        get { stored.values.mustBeOn }
        set { stored.edit { $0.mustBeOn = newValue } }
    }
    /// Counted in Unicode scalars.
    package internal(set) var minLength: Int? {
        get { stored.values.minLength }
        set { stored.edit { $0.minLength = newValue } }
    }
    /// Counted in Unicode scalars.
    package internal(set) var maxLength: Int? {
        get { stored.values.maxLength }
        set { stored.edit { $0.maxLength = newValue } }
    }
    /// The whole value must match (see ``PatternRegex``).
    package internal(set) var pattern: PatternRegex? {
        get { stored.values.pattern }
        set { stored.edit { $0.pattern = newValue } }
    }
    /// What `pattern` wants, in words ("Digits, spaces and + only"); the
    /// localized "Must be in the required format" when nil.
    package internal(set) var patternHint: LocalizedText? {
        get { stored.values.patternHint }
        set { stored.edit { $0.patternHint = newValue } }
    }
    /// An inclusive lower bound for numbers.
    package internal(set) var minimum: Double? {
        get { stored.values.minimum }
        set { stored.edit { $0.minimum = newValue } }
    }
    /// An inclusive upper bound for numbers.
    package internal(set) var maximum: Double? {
        get { stored.values.maximum }
        set { stored.edit { $0.maximum = newValue } }
    }
    /// A number must be whole.
    package internal(set) var integer: Bool {
        get { stored.values.integer }
        set { stored.edit { $0.integer = newValue } }
    }
    /// A date must be strictly after this bound.
    package internal(set) var after: DateBound? {
        get { stored.values.after }
        set { stored.edit { $0.after = newValue } }
    }
    /// A date must be strictly before this bound.
    package internal(set) var before: DateBound? {
        get { stored.values.before }
        set { stored.edit { $0.before = newValue } }
    }
    /// The fewest options a multiple choice needs (applies to an empty selection too).
    package internal(set) var minSelected: Int? {
        get { stored.values.minSelected }
        set { stored.edit { $0.minSelected = newValue } }
    }
    /// The most options a multiple choice may have.
    package internal(set) var maxSelected: Int? {
        get { stored.values.maxSelected }
        set { stored.edit { $0.maxSelected = newValue } }
    }
    /// The flow's own options (empty when they come from `optionsFrom`).
    package internal(set) var options: [OptionDefinition] {
        get { stored.values.options }
        set { stored.edit { $0.options = newValue } }
    }
    /// The plugin that supplies the options when a session starts.
    package internal(set) var optionsFrom: ProviderReference? {
        get { stored.values.optionsFrom }
        set { stored.edit { $0.optionsFrom = newValue } }
    }
    /// The field offers Other, chosen with the option id `other`, whose free
    /// text is the answer `<field>.other`.
    package internal(set) var other: Bool {
        get { stored.values.other }
        set { stored.edit { $0.other = newValue } }
    }
    /// The Other option's label; the localized "Other" when nil.
    package internal(set) var otherLabel: LocalizedText? {
        get { stored.values.otherLabel }
        set { stored.edit { $0.otherLabel = newValue } }
    }
    /// The plugin that supplies the initial value when a session starts.
    package internal(set) var prefill: ProviderReference? {
        get { stored.values.prefill }
        set { stored.edit { $0.prefill = newValue } }
    }
    /// Plugin validators, run after the built-in rules pass, in order.
    package internal(set) var validators: [PluginRule] {
        get { stored.values.validators }
        set { stored.edit { $0.validators = newValue } }
    }
    /// Replacement messages keyed by rule.
    package internal(set) var messages: [FieldRule: LocalizedText] {
        get { stored.values.messages }
        set { stored.edit { $0.messages = newValue } }
    }
    /// Format 2: the field is asked only while this holds; a hidden field
    /// is not validated, and its answer is kept but left out everywhere, as
    /// an answer on an abandoned branch is. Nil: always shown.
    package internal(set) var visibleIf: Condition? {
        get { stored.values.visibleIf }
        set { stored.edit { $0.visibleIf = newValue } }
    }
    /// A `computed` field's expression.
    package internal(set) var expression: Expression? {
        get { stored.values.expression }
        set { stored.edit { $0.expression = newValue } }
    }
    /// A `computed` field's display, with `{value}` for the formatted value
    /// ("{value} €"); nil shows the value alone.
    package internal(set) var display: LocalizedText? {
        get { stored.values.display }
        set { stored.edit { $0.display = newValue } }
    }
    /// A `computed` number's decimal places (0 to 3): it is rounded to them
    /// and shown with exactly that many. Nil: rounded to 3, and shown
    /// without trailing zeros.
    package internal(set) var decimals: Int? {
        get { stored.values.decimals }
        set { stored.edit { $0.decimals = newValue } }
    }

    /// The longest value the field accepts: `maxLength`, lowered to what its
    /// `pattern` can check (``PatternRegex/maxInputLength``).
    package var effectiveMaxLength: Int? {
        pattern.map { min(maxLength ?? .max, $0.maxInputLength) } ?? maxLength
    }

    /// The answer key of the Other free text: `<id>.other`.
    package var otherKey: String { id + ".other" }

    /// The field as a plugin sees it, in `locale`.
    package func info(locale: String) -> FieldInfo {
        FieldInfo(id: id, type: type.rawValue, label: label.resolve(locale))
    }
}
