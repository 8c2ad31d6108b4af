import FlowKit

// Answers as a person reads them: what Review shows and what `{field}`
// placeholders pipe into texts.
extension FlowSession {
    /// A field's answer in words, in `words`' locale: option labels,
    /// "Yes"/"No", Other's text, a multiple choice's labels joined by the
    /// locale's separator, a date and a computed value written the locale's
    /// way (a computed one with its `display`), a number as written but with
    /// the locale's decimal separator. Nil when the field has no answer
    /// on `r`: off the path, hidden, or not given. Not for secure fields,
    /// which are never shown.
    func displayValue(_ f: FieldDefinition, in r: Resolution, words: SessionText) -> String? {
        guard f.type != .secure, let v = effectiveAnswer(f, in: r), !isBlank(v) else { return nil }
        if f.type == .computed, let value = r.computed[f.id] {
            let formatted: String
            switch value {
            case .number(let d): formatted = LocalizedNumber(words).format(d, decimals: f.decimals)
            case .bool(let b): formatted = words(.builtin(b ? .yes : .no))
            case .text(let s): formatted = s
            case .date(let d): formatted = words.format(d)
            case .list(let l): formatted = l.joined(separator: words(.builtin(.listSeparator)))
            case .nothing: return nil
            }
            guard let display = f.display else { return formatted }
            return Strings.fill(display.resolve(words.locale), ["value": formatted])
        }
        func label(_ id: String) -> String {
            if id == "other" && f.other {
                if let t = record.answers[f.otherKey]?.textValue, !isBlank(.text(t)) { return t }
                return f.otherLabel?.resolve(words.locale) ?? words(.builtin(.other))
            }
            if let dynamic = record.dynamicOptions[f.id] { return dynamic.first { $0.id == id }?.label ?? id }
            return f.options.first { $0.id == id }?.label.resolve(words.locale) ?? id
        }
        switch v {
        case .text(let s):
            if f.type == .choice { return label(s) }
            if f.type == .date, let d = CivilDate(iso: s) { return words.format(d) }
            return s
        case .list(let l): return l.map(label).joined(separator: words(.builtin(.listSeparator)))
        case .bool(let b): return words(.builtin(b ? .yes : .no))
        case .integer(let i): return String(i)
        case .number(let d): return words.format(d)
        }
    }

    /// The words of the session's texts in `locale`: with the answers piped
    /// into the flow's texts when the flow pipes (format 2).
    func words(in locale: String, strings: Strings = .builtin) -> SessionText {
        guard flow.pipes else { return SessionText(locale: locale, strings: strings) }
        let session = self
        let r = resolve()
        return SessionText(
            locale: locale, strings: strings,
            piping: PipedAnswers { id, words in
                session.flow.field(id).flatMap { session.displayValue($0, in: r, words: words) }
            })
    }
}

/// Numbers written for people in one locale: grouped thousands and the
/// locale's decimal separator ("1,440.5" in English, "1.440,5" in German,
/// "1 440,5" in French, "1440" but "14.400" in Spanish). The separators
/// come from flowd's string catalog, so a locale without one writes English.
struct LocalizedNumber {
    let group: String
    let decimal: String
    let minimumGrouping: Int

    init(_ words: SessionText) {
        group = words(.builtin(.numberGroupSeparator))
        decimal = words(.builtin(.numberDecimalSeparator))
        minimumGrouping = Int(words(.builtin(.numberMinimumGrouping))) ?? 1
    }

    /// `d` with `decimals` places (0 to 3), or with up to 3 places and no
    /// trailing zeros when nil. The whole part and the fraction are taken
    /// apart before scaling, so every whole number below 10^15 (where
    /// computed values stay) is written exactly.
    func format(_ d: Double, decimals: Int?) -> String {
        let places = min(max(decimals ?? 3, 0), 3)
        let scale = powerOfTen(places)
        guard d.isFinite, abs(d) < 1e15 else { return formatNumber(d) }
        var wholeUnits = Int64(abs(d).rounded(.down))
        var fractionUnits = Int64(((abs(d) - Double(wholeUnits)) * scale).rounded())
        if fractionUnits >= Int64(scale) {
            wholeUnits += 1
            fractionUnits -= Int64(scale)
        }
        let whole = String(wholeUnits)
        var fraction = places == 0 ? "" : String(fractionUnits)
        fraction = String(repeating: "0", count: places - fraction.count) + fraction
        if decimals == nil {
            while fraction.hasSuffix("0") { fraction.removeLast() }
        }
        var grouped = ""
        let digits = Array(whole)
        if digits.count >= 3 + minimumGrouping {
            for (i, c) in digits.enumerated() {
                if i > 0 && (digits.count - i) % 3 == 0 { grouped += group }
                grouped.append(c)
            }
        } else {
            grouped = whole
        }
        let sign = d < 0 && (wholeUnits > 0 || fractionUnits > 0) ? "-" : ""
        return sign + grouped + (fraction.isEmpty ? "" : decimal + fraction)
    }
}
