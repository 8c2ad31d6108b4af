import DBus
import FlowClient
import FlowEngine
import FlowProtocol

/// The human renderings of flowctl's data: aligned, coloured only through
/// ``Style``, and always complete without colour.
package enum Render {
    // MARK: values

    /// A number without a useless `.0`.
    package static func number(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(.towardZero), Swift.abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// A D-Bus value as a person reads it: strings as they are, lists joined
    /// with ", ", booleans as yes/no, numbers plainly.
    package static func value(_ value: DBusValue, yes: String = "yes", no: String = "no") -> String {
        switch value {
        case .string(let s): return s
        case .bool(let b): return b ? yes : no
        case .double(let d): return number(d)
        case .objectPath(let p): return p.rawValue
        case .signature(let s): return s.rawValue
        case .array(_, let items): return items.map { Render.value($0, yes: yes, no: no) }.joined(separator: ", ")
        case .dictionary(_, _, let entries):
            return entries.map { Render.value($0.key) + "=" + Render.value($0.value, yes: yes, no: no) }
                .sorted().joined(separator: ", ")
        case .structure(let fields): return fields.map { Render.value($0, yes: yes, no: no) }.joined(separator: ":")
        case .variant(let inner): return Render.value(inner, yes: yes, no: no)
        case .unixFD: return "(fd)"
        default: return value.integer.map(String.init) ?? (value.uint64.map(String.init) ?? "")
        }
    }

    /// A field's answer as shown by `show`: option ids with their labels,
    /// "(set)" for a secure field, nil when there is none.
    package static func fieldValue(_ field: StepField, locale: String) -> String? {
        if field.isSecure { return field.isSet ? FlowctlText.secureSet.text(locale) : nil }
        guard let value = field.value else { return nil }
        let yes = Strings.builtin.text(.yes, locale: locale)
        let no = Strings.builtin.text(.no, locale: locale)
        switch field.type {
        case .choice:
            guard let id = value.string else { break }
            var text = labelled(id, field)
            if id == "other", let other = field.otherValue, !other.isEmpty { text += ": " + other }
            return text
        case .multichoice:
            guard let ids = value.strings else { break }
            return ids.map { labelled($0, field) }.joined(separator: ", ")
        default: break
        }
        return Render.value(value, yes: yes, no: no)
    }

    private static func labelled(_ id: String, _ field: StepField) -> String {
        guard let label = field.label(ofOption: id), label != id else { return id }
        return "\(id) (\(label))"
    }

    // MARK: lists

    /// `flowctl flows`, in the person's `locale`: each title in it when the flow has it.
    package static func flows(_ flows: [FlowSummary], locale: String, style: Style) -> String {
        func text(_ key: FlowctlText) -> String { key.text(locale) }
        var table = TextTable(headers: [
            text(.columnID), text(.columnSteps), text(.columnReview), text(.columnLocales), text(.columnTitle),
        ])
        let yes = Strings.builtin.text(.yes, locale: locale).lowercased()
        let no = Strings.builtin.text(.no, locale: locale).lowercased()
        for flow in flows.sorted(by: { $0.id < $1.id }) {
            table.add(cells: [
                TextTable.Cell(flow.id) { style.cyan($0) }, TextTable.Cell(String(flow.steps)),
                TextTable.Cell(flow.review ? yes : no), TextTable.Cell(flow.locales.joined(separator: ",")),
                TextTable.Cell(flow.title(in: locale)),
            ])
        }
        return table.render(style: style)
    }

    /// One row of `flowctl sessions`: the listing and, when flowd gave
    /// them, the session's properties and its flow.
    package struct SessionRow: Sendable {
        package var listing: SessionListing
        package var properties: SessionProperties?
        package var flow: FlowSummary?

        package init(listing: SessionListing, properties: SessionProperties?, flow: FlowSummary?) {
            self.listing = listing
            self.properties = properties
            self.flow = flow
        }
    }

    /// `flowctl sessions`: id, the flow's title, state, when it last changed
    /// ("5 minutes ago", against `now`, microseconds since the epoch) and
    /// where the session is ("Step 3 of 4 · Contact details"). flowctl's own
    /// words (headings, state, age) are in the person's `locale`; the flow's
    /// (title, step) in the session's language, as the session shows them. With
    /// `shortIDs` (on a terminal) each id is cut to the shortest beginning
    /// that names it among `rows`, at least 8 characters, as git abbreviates
    /// commits: every command takes that beginning. The step goes last, as
    /// the longest and most variable column.
    ///
    /// When the rows belong to more than one user (root, or an administrator
    /// polkit lets see others' sessions), an OWNER column after the id says
    /// whose each is: `ownerName` gives the login name, or nil for a bare uid.
    package static func sessions(
        _ rows: [SessionRow], now: UInt64, locale: String, style: Style, shortIDs: Bool = false,
        ownerName: (UInt32) -> String? = { _ in nil }
    ) -> String {
        func text(_ key: FlowctlText) -> String { key.text(locale) }
        let ids = rows.map(\.listing.id)
        let shown = shortIDs ? abbreviated(ids, minimum: 8) : ids
        let showsOwner = Set(rows.compactMap(\.properties?.owner)).count > 1
        var table = TextTable(headers: [text(.columnID)] + (showsOwner ? [text(.columnOwner)] : []) + [
            text(.columnFlow), text(.columnState), text(.columnChanged), text(.columnStep),
        ])
        for (row, id) in zip(rows, shown) {
            let session = row.properties?.locale ?? locale
            let title = row.flow?.title(in: session) ?? row.listing.flowID
            let owner = row.properties.map { ownerName($0.owner) ?? String($0.owner) } ?? ""
            table.add(cells: [TextTable.Cell(id) { style.cyan($0) }] + (showsOwner ? [TextTable.Cell(owner)] : []) + [
                TextTable.Cell(title),
                TextTable.Cell(stateName(row.listing.state, locale: locale)) { [state = row.listing.state] in
                    style.state($0, state.rawValue)
                },
                TextTable.Cell(row.properties.map { changed(updatedAt: $0.updatedAt, now: now, locale: locale) } ?? ""),
                TextTable.Cell(row.properties.map { whereIs($0) } ?? ""),
            ])
        }
        return table.render(style: style)
    }

    /// Each of `ids` cut to one length: the shortest, at least `minimum`,
    /// at which no two of them begin alike.
    package static func abbreviated(_ ids: [String], minimum: Int) -> [String] {
        let longest = ids.map(\.count).max() ?? 0
        var length = min(minimum, longest)
        while length < longest, Set(ids.map { $0.prefix(length) }).count < Set(ids).count { length += 1 }
        return ids.map { String($0.prefix(length)) }
    }

    /// A session state as `sessions` shows it, in `locale`.
    package static func stateName(_ state: SessionState, locale: String) -> String {
        switch state {
        case .editing: return FlowctlText.stateEditing.text(locale)
        case .review: return FlowctlText.stateReview.text(locale)
        case .submitting: return FlowctlText.stateSubmitting.text(locale)
        case .submitted: return FlowctlText.stateSubmitted.text(locale)
        case .failed: return FlowctlText.stateFailed.text(locale)
        }
    }

    /// "Step 3 of 4 · Contact details" while the session has steps to go; empty once submitted.
    package static func whereIs(_ properties: SessionProperties) -> String {
        guard properties.state != .submitted, properties.stepCount > 0 else { return "" }
        let counter = Strings.builtin.text(
            .stepCounter, locale: properties.locale,
            ["n": String(properties.stepIndex), "m": String(properties.stepCount)])
        let title = properties.path.first { $0.step == properties.currentStep }?.title ?? ""
        return title.isEmpty ? counter : counter + " · " + title
    }

    /// "just now", "5 minutes ago", "3 days ago": from `updatedAt` to `now`
    /// (microseconds since the epoch); a clock that went back reads "just now".
    package static func changed(updatedAt: UInt64, now: UInt64, locale: String) -> String {
        let minutes = (now > updatedAt ? now - updatedAt : 0) / 60_000_000
        let (count, one, other): (UInt64, FlowctlText, FlowctlText)
        switch minutes {
        case 0: return FlowctlText.changedJustNow.text(locale)
        case ..<60: (count, one, other) = (minutes, .changedMinuteOne, .changedMinutesOther)
        case ..<(24 * 60): (count, one, other) = (minutes / 60, .changedHourOne, .changedHoursOther)
        default: (count, one, other) = (minutes / (24 * 60), .changedDayOne, .changedDaysOther)
        }
        return (count == 1 ? one : other).text(locale, ["n": String(count)])
    }

    /// `flowctl plugins`.
    package static func plugins(_ plugins: [PluginSummary], style: Style) -> String {
        var table = TextTable(headers: ["NAME", "KINDS", "VERSION", "STATUS", "REASON"])
        for plugin in plugins.sorted(by: { $0.name < $1.name }) {
            table.add(cells: [
                TextTable.Cell(plugin.name), TextTable.Cell(plugin.kinds.joined(separator: ",")),
                TextTable.Cell(plugin.version), TextTable.Cell(plugin.status.rawValue) { style.state($0) },
                TextTable.Cell(plugin.error) { style.red($0) },
            ])
        }
        return table.render(style: style)
    }

    /// `flowctl answers`: one line per field, sorted by field id.
    package static func answers(_ answers: [String: DBusValue], style: Style) -> String {
        var table = TextTable(headers: [])
        for (key, value) in answers.sorted(by: { $0.key < $1.key }) {
            table.add(cells: [TextTable.Cell(key) { style.cyan($0) }, TextTable.Cell(Render.value(value))])
        }
        return table.render(style: style)
    }

    // MARK: steps

    /// "Step 2 of 4 · Day and time" in the session's locale, and the bar under it.
    package static func progress(_ step: StepPage, locale: String, style: Style) -> String {
        guard step.count > 0 else { return style.bold(step.title) + "\n" }
        let counter = Strings.builtin.text(
            .stepCounter, locale: locale, ["n": String(step.index), "m": String(step.count)])
        var text = style.bold(counter + " · " + step.title) + "\n"
        text += progressBar(index: step.index, count: step.count, style: style) + "\n"
        return text
    }

    /// The reference a person quotes about a submission: the receipt's
    /// `reference` (a string or a number); nil without one.
    package static func reference(_ receipt: [String: DBusValue]) -> String? {
        guard let value = receipt["reference"] else { return nil }
        let shown = Render.value(value)
        return shown.isEmpty ? nil : shown
    }

    /// `flowctl show` of a form, content or complete step (Review is
    /// ``review(_:numbered:style:)``); once complete, with the receipt's reference.
    package static func step(
        _ step: StepPage, locale: String, receipt: [String: DBusValue] = [:], style: Style
    ) -> String {
        var text = progress(step, locale: locale, style: style)
        if step.kind == .complete {
            text = style.green("✓ " + step.title) + "\n"
            if !step.body.isEmpty { text += step.body + "\n" }
            if let reference = reference(receipt) { text += FlowctlText.reference.text(locale, ["reference": reference]) + "\n" }
            return text
        }
        // On Review the description is the note, which the review shows last.
        if !step.description.isEmpty && step.kind != .review { text += style.dim(step.description) + "\n" }
        for hint in step.ruleHints where !hint.text.isEmpty { text += style.dim(hint.text) + "\n" }
        if !step.body.isEmpty { text += "\n" + step.body + "\n" }
        // A content step's icon is a name for windows (dialog-information): nothing a
        // person reads; --json keeps it.
        if !step.error.isEmpty { text += "\n" + style.red("✗ " + step.error) + "\n" }
        if !step.warning.isEmpty { text += "\n" + style.yellow("! " + step.warning) + "\n" }
        for field in step.fields {
            text += "\n" + Render.field(field, locale: locale, style: style)
        }
        return text
    }

    /// One field of `show`: its label, then aligned lines for id and type,
    /// value, options, help, rules and error.
    package static func field(_ field: StepField, locale: String, style: Style) -> String {
        var text = style.bold(field.label.isEmpty ? field.id : field.label)
        if field.mustBeAnswered { text += " *" }
        text += "\n"
        func caption(_ key: FlowctlText) -> String { key.text(locale) }
        var lines: [(String, String, @Sendable (String) -> String)] = []
        lines.append((caption(.captionField), field.id + " (" + field.type.rawValue + ")", { style.cyan($0) }))
        if field.type == .computed {
            // Worked out by flowd, in its words: "1,440 €".
            let shown = field.display.isEmpty ? Strings.builtin.text(.notGiven, locale: locale) : field.display
            lines.append((caption(.captionValue), shown, { $0 }))
        } else if let value = fieldValue(field, locale: locale) {
            lines.append((caption(.captionValue), value, { $0 }))
        } else {
            lines.append((caption(.captionValue), caption(.notSet), { style.dim($0) }))
        }
        if !field.options.isEmpty || field.other {
            var options = field.options.map { $0.label == $0.id ? $0.id : "\($0.id) (\($0.label))" }
            if field.other {
                options.append("other (\(field.label(ofOption: "other") ?? Strings.builtin.text(.other, locale: locale)))")
            }
            lines.append((caption(.captionOptions), options.joined(separator: ", "), { $0 }))
        }
        let hints = field.hintTexts
        if !hints.isEmpty { lines.append((caption(.captionHint), hints.joined(separator: " "), { style.dim($0) })) }
        if !field.help.isEmpty { lines.append((caption(.captionHelp), field.help, { style.dim($0) })) }
        let rules = FieldRules.describe(field, locale: locale)
        if !rules.isEmpty { lines.append((caption(.captionRules), rules, { style.dim($0) })) }
        if !field.error.isEmpty { lines.append((caption(.captionError), field.error, { style.red($0) })) }
        if !field.warning.isEmpty { lines.append((caption(.captionWarning), field.warning, { style.yellow($0) })) }
        // "Value:", or as the language punctuates it ("Valeur :").
        let captions = lines.map { line in
            String(FlowctlText.labelValue.text(locale, ["label": line.0, "value": ""]).reversed().drop { $0 == " " }.reversed())
        }
        let width = captions.map(displayWidth).max() ?? 0
        for (caption, (_, value, decorate)) in zip(captions, lines) {
            text += "  " + padded(caption, to: width) + " " + decorate(value) + "\n"
        }
        return text
    }

    /// `flowctl review`, or `show` on Review: one group per step with its
    /// answers lined up, "Not finished" where a step needs attention, the note.
    package static func review(_ review: ReviewPage, numbered: Bool = false, style: Style) -> String {
        var text = ""
        let labelWidth = review.groups.flatMap(\.answers).map { displayWidth($0.label.isEmpty ? $0.field : $0.label) }.max() ?? 0
        for (number, group) in review.groups.enumerated() {
            var heading = numbered ? "\(number + 1)  " : ""
            heading += style.bold(group.title)
            if !numbered { heading += " " + style.dim("(" + group.step + ")") }
            if !group.status.isEmpty {
                heading += "  " + style.yellow(group.status)
            } else if !group.finished {
                heading += "  " + style.yellow("not finished")
            }
            text += heading + "\n"
            for answer in group.answers {
                let label = answer.label.isEmpty ? answer.field : answer.label
                text += "    " + padded(label, to: labelWidth) + "  " + answer.display + "\n"
            }
        }
        if !review.note.isEmpty { text += "\n" + style.dim(review.note) + "\n" }
        return text
    }

    // MARK: watch

    /// One `watch` line for `event`; empty for events `watch` does not show.
    package static func event(_ event: FlowEvent, time: String, style: Style) -> String {
        let stamp = time.isEmpty ? "" : style.dim(time) + " "
        switch event {
        case .propertiesChanged(_, let changed):
            // Timestamps change with everything; --json has them.
            let shown = changed.filter { $0.key != .updatedAt && $0.key != .createdAt }
            if shown.isEmpty { return "" }
            let parts = shown.sorted { $0.key.rawValue < $1.key.rawValue }.map { key, value in
                key.rawValue + "=" + (key == .state ? style.state(Render.value(value)) : Render.value(value))
            }
            return stamp + "changed " + parts.joined(separator: " ") + "\n"
        case .session(_, .stepCompleted(let step, let answers)):
            let values = answers.sorted { $0.key < $1.key }.map { "\($0.key)=\(Render.value($0.value))" }
            return stamp + "step " + style.cyan(step) + " completed" + (values.isEmpty ? "" : ": " + values.joined(separator: " ")) + "\n"
        case .session(_, .submitted(let receipt)):
            let values = receipt.sorted { $0.key < $1.key }.map { "\($0.key)=\(Render.value($0.value))" }
            return stamp + style.green("submitted") + (values.isEmpty ? "" : ": " + values.joined(separator: " ")) + "\n"
        case .session(_, .submitFailed(let message)):
            return stamp + style.red("submit failed") + ": " + message + "\n"
        case .session(_, .announcement(let text)):
            return stamp + "announcement: " + text + "\n"
        case .manager(.sessionRemoved):
            return stamp + "session removed\n"
        case .manager(.sessionNew), .sessionCount, .serviceLost, .reconnected:
            return ""
        }
    }
}

/// The constraints of a field in words, for `show` and the wizard's prompt.
package enum FieldRules {
    /// The field's rules in `locale` (with the wizard's fallback to English),
    /// such as "3–40 characters, whole number"; empty when it has none.
    package static func describe(_ field: StepField, locale: String) -> String {
        var parts: [String] = []
        func text(_ key: FlowctlText, _ arguments: [String: String] = [:]) -> String { key.text(locale, arguments) }
        switch (field.minLength.map(String.init), field.maxLength.map(String.init)) {
        case let (min?, max?): parts.append(text(.lengthRange, ["min": min, "max": max]))
        case let (min?, nil): parts.append(text(.lengthMin, ["min": min]))
        case let (nil, max?): parts.append(text(.lengthMax, ["max": max]))
        default: break
        }
        switch (field.minimum.map(Render.number), field.maximum.map(Render.number)) {
        case let (min?, max?): parts.append("\(min)–\(max)")
        case let (min?, nil): parts.append("≥ \(min)")
        case let (nil, max?): parts.append("≤ \(max)")
        default: break
        }
        if field.integer { parts.append(text(.wholeNumber)) }
        if let min = field.minSelected { parts.append(text(.pickAtLeast, ["min": String(min)])) }
        if let max = field.maxSelected { parts.append(text(.pickAtMost, ["max": String(max)])) }
        if let after = field.after { parts.append(text(.afterDate, ["date": after])) }
        if let before = field.before { parts.append(text(.beforeDate, ["date": before])) }
        if field.mustBeOn { parts.append(text(.mustBeYes)) }
        switch field.type {
        case .date: parts.insert(text(.formatDate), at: 0)
        case .time: parts.insert(text(.formatTime), at: 0)
        default: break
        }
        return parts.joined(separator: text(.ruleSeparator))
    }
}
