import DBus
import FlowEngine
import FlowProtocol

/// Turns what a person types into the D-Bus value a field's type takes
/// (docs/dbus-api.md, "Answer values"). Only the type is decided here; the
/// daemon stays the one authority on whether a value is valid.
package enum AnswerTyping {
    /// Splits `FIELD=VALUE` (the value may contain `=`).
    package static func assignment(_ argument: String) throws(CLIError) -> (key: String, value: String) {
        guard let eq = argument.firstIndex(of: "="), eq != argument.startIndex else {
            throw .usage("expected FIELD=VALUE, got \(quote(argument))")
        }
        return (String(argument[..<eq]), String(argument[argument.index(after: eq)...]))
    }

    /// The words accepted as "on" for a toggle, besides the localized "yes".
    package static let trueWords: Set<String> = ["y", "yes", "true", "1", "on"]
    /// The words accepted as "off" for a toggle, besides the localized "no".
    package static let falseWords: Set<String> = ["n", "no", "false", "0", "off"]

    /// Reads a toggle answer: y/yes/true/1/on, n/no/false/0/off, or the
    /// localized yes and no (and their first letters); nil otherwise.
    package static func toggle(_ text: String, locale: String) -> Bool? {
        let word = halfWidth(text).trimmed.lowercased()
        let yes = Strings.builtin.text(.yes, locale: locale).lowercased()
        let no = Strings.builtin.text(.no, locale: locale).lowercased()
        if trueWords.contains(word) || word == yes || (word.count == 1 && yes.hasPrefix(word) && !no.hasPrefix(word)) {
            return true
        }
        if falseWords.contains(word) || word == no || (word.count == 1 && no.hasPrefix(word) && !yes.hasPrefix(word)) {
            return false
        }
        return nil
    }

    /// Reads a number: an integer becomes `x`, anything else numeric `d`; nil
    /// when it is not a finite number.
    package static func number(_ text: String) -> DBusValue? {
        let trimmed = halfWidth(text).trimmed
        if let integer = Int64(trimmed) { return .int64(integer) }
        guard !trimmed.isEmpty, trimmed.unicodeScalars.allSatisfy({ "0123456789+-.eE".unicodeScalars.contains($0) }),
              let double = Double(trimmed), double.isFinite else { return nil }
        return .double(double)
    }

    /// The option id `text` names on `field`: an id, a label as it reads
    /// (case and white space aside: a label may hold a no-break space where
    /// the person types a space, "2:30 PM" and "2:30pm" alike), a time of
    /// day that an option's id or label says ("09:30", "9:30am"), or Other;
    /// nil when it names none.
    package static func option(_ text: String, of field: StepField) -> String? {
        let wanted = text.trimmed
        if field.options.contains(where: { $0.id == wanted }) { return wanted }
        if field.other, wanted == "other" { return "other" }
        let key = matchKey(wanted)
        if let match = field.options.first(where: { matchKey($0.label) == key }) { return match.id }
        if field.other, !field.otherLabel.isEmpty, matchKey(field.otherLabel) == key { return "other" }
        if let minutes = minutesOfDay(wanted),
           let match = field.options.first(where: { minutesOfDay($0.id) == minutes || minutesOfDay($0.label) == minutes }) {
            return match.id
        }
        return nil
    }

    /// `text` as labels are compared: lowercased, without any white space
    /// (U+202F and U+00A0 included).
    static func matchKey(_ text: String) -> String {
        String(String.UnicodeScalarView(halfWidth(text).lowercased().unicodeScalars.filter { !$0.properties.isWhitespace }))
    }

    /// `text` with full-width ASCII forms as plain ASCII ("１２" is "12",
    /// "，" is ",") and the ideographic space as a space: what a Japanese,
    /// Chinese or Korean input method types while it is on. Applied only
    /// where a number, an option or a key is expected, never to free text.
    package static func halfWidth(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.value >= 0x3000 }) else { return text }
        let scalars = text.unicodeScalars.map { scalar -> Unicode.Scalar in
            switch scalar.value {
            case 0xFF01...0xFF5E: return Unicode.Scalar(scalar.value - 0xFEE0) ?? scalar
            case 0x3000: return " "
            default: return scalar
            }
        }
        return String(String.UnicodeScalarView(scalars))
    }

    /// The items of a multiple-choice answer: separated by commas, the
    /// full-width and the ideographic one ("1、3") included.
    package static func listItems(_ text: String) -> [String] {
        halfWidth(text).split(whereSeparator: { $0 == "," || $0 == "、" }).map(\.trimmed).filter { !$0.isEmpty }
    }

    /// The minutes after midnight `text` names as a time of day: `H:MM` or
    /// `HH:MM` (24-hour), or `H[:MM]` with `am`/`pm` (`a.m.` too), white space
    /// and case aside; nil otherwise.
    static func minutesOfDay(_ text: String) -> Int? {
        // Without the dots of "a.m." and "p.m.".
        var rest = Substring(matchKey(text).filter { $0 != "." })
        var offset: Int?
        if rest.hasSuffix("am") || rest.hasSuffix("pm") {
            offset = rest.hasSuffix("pm") ? 12 * 60 : 0
            rest = rest.dropLast(2)
        } else if let h = rest.firstIndex(of: "h") {
            // As French writes it: "14h30", "14 h 30", "9h".
            let minutes = rest[rest.index(after: h)...]
            rest = Substring(rest[..<h] + ":" + (minutes.isEmpty ? "00" : minutes))
        }
        let parts = rest.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.count <= 2 && $0.allSatisfy(\.isASCII) }),
              let hour = Int(parts[0]), let minute = parts.count == 2 ? Int(parts[1]) : 0, (0..<60).contains(minute)
        else { return nil }
        if parts.count == 2 && parts[1].count != 2 { return nil }
        if let offset {
            guard (1...12).contains(hour) else { return nil }
            return (hour % 12) * 60 + offset + minute
        }
        // Without am/pm a time needs its minutes: "9" alone is not a time.
        guard parts.count == 2, (0..<24).contains(hour) else { return nil }
        return hour * 60 + minute
    }

    /// The value of `text` for `field`, typed by the field's type. An empty
    /// text clears the answer (an empty string, or an empty list for a
    /// multiple choice). `isOther` is for the `FIELD.other` free text.
    package static func value(_ text: String, for field: StepField, isOther: Bool = false, locale: String) throws(CLIError) -> DBusValue {
        if isOther { return .string(text) }
        if text.isEmpty {
            return field.type == .multichoice ? .strings([]) : .string("")
        }
        switch field.type {
        case .toggle:
            guard let flag = toggle(text, locale: locale) else {
                throw CLIError(.dataError, FlowctlText.typeNotYesNo.text(locale, ["value": quote(text), "field": quote(field.id)]))
            }
            return .bool(flag)
        case .number:
            guard let number = number(text) else {
                throw CLIError(.dataError, FlowctlText.typeNotNumber.text(locale, ["value": quote(text), "field": quote(field.id)]))
            }
            return number
        case .choice:
            return .string(try choiceID(text, of: field, locale: locale))
        case .multichoice:
            var ids: [String] = []
            for item in listItems(text) {
                let id = try choiceID(item, of: field, locale: locale)
                if !ids.contains(id) { ids.append(id) }
            }
            return .strings(ids)
        case .computed:
            throw CLIError(.dataError, FlowctlText.typeComputed.text(locale, ["field": quote(field.id)]))
        case .text, .multiline, .secure, .email, .date, .time:
            return .string(text)
        }
    }

    private static func choiceID(_ text: String, of field: StepField, locale: String) throws(CLIError) -> String {
        if let id = option(text, of: field) { return id }
        // Without a list to check against (a provider gave none) the daemon decides.
        if field.options.isEmpty && !field.other { return text.trimmed }
        var ids = field.options.map(\.id)
        if field.other { ids.append("other") }
        throw CLIError(.dataError, FlowctlText.typeNotOption.text(
            locale, ["value": quote(text.trimmed), "field": quote(field.id), "options": ids.joined(separator: ", ")]))
    }

    /// Types every `FIELD=VALUE` (and `FIELD.other=TEXT`) against `step`.
    /// Unknown fields and values of the wrong type are refused before any call.
    package static func answers(_ pairs: [(key: String, value: String)], step: StepPage, locale: String) throws(CLIError) -> [String: DBusValue] {
        var result: [String: DBusValue] = [:]
        for (key, text) in pairs {
            let (field, isOther) = try target(key, in: step, locale: locale)
            result[key] = try value(text, for: field, isOther: isOther, locale: locale)
        }
        return result
    }

    /// The field `key` names on `step`, and whether it is that field's Other
    /// text; the refusal in `locale`.
    package static func target(_ key: String, in step: StepPage, locale: String = "en") throws(CLIError) -> (field: StepField, isOther: Bool) {
        if let field = step.field(key) { return (field, false) }
        if key.hasSuffix(".other"), let field = step.field(String(key.dropLast(6))), field.other {
            return (field, true)
        }
        let names = step.fields.filter { $0.type != .computed }.map(\.id)
        if names.isEmpty {
            throw CLIError(.dataError, FlowctlText.typeNoFields.text(locale, ["step": quote(step.id)]))
        }
        throw CLIError(.dataError, FlowctlText.typeNotField.text(
            locale, ["key": quote(key), "step": quote(step.id), "fields": names.joined(separator: ", ")]))
    }
}

/// `"text"` in double quotes, for messages.
func quote(_ text: String) -> String { "\"\(text)\"" }

extension StringProtocol {
    /// Without leading and trailing white space.
    var trimmed: String {
        var scalars = Substring(self).unicodeScalars[...]
        while let first = scalars.first, first.properties.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        return String(String.UnicodeScalarView(scalars))
    }
}
