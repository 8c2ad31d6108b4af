import DBus
import FlowCLI
import FlowEngine
import FlowKit
import FlowProtocol
import Testing

@Suite("Rendering and output conventions")
struct RenderTests {
    @Test("sessions of more than one user get an OWNER column with login names, or the uid without one")
    func sessionOwners() throws {
        func row(_ id: Character, owner: UInt32) throws -> Render.SessionRow {
            let listing = try #require(SessionListing(id: String(repeating: id, count: 32), flowID: "survey", state: .editing))
            var properties = SessionProperties(id: listing.id, flowID: "survey")
            properties.owner = owner
            return Render.SessionRow(listing: listing, properties: properties, flow: nil)
        }
        let names: (UInt32) -> String? = { $0 == 1000 ? "ada" : nil }
        let mixed = Render.sessions(
            [try row("a", owner: 1000), try row("b", owner: 1001)], now: 0, locale: "en", style: Style(color: false),
            ownerName: names)
        let lines = mixed.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        #expect(lines.first == ["ID", "OWNER", "FLOW", "STATE", "CHANGED", "STEP"], "\(mixed)")
        #expect(lines.dropFirst().map { $0.dropFirst().first } == ["ada", "1001"], "\(mixed)")
        let german = Render.sessions(
            [try row("a", owner: 1000), try row("b", owner: 0)], now: 0, locale: "de", style: Style(color: false))
        #expect(german.hasPrefix("ID") && german.contains("BESITZER"), "\(german)")
        // One user's sessions: nothing to tell apart, no column.
        let own = Render.sessions(
            [try row("a", owner: 1000), try row("b", owner: 1000)], now: 0, locale: "en", style: Style(color: false),
            ownerName: names)
        #expect(!own.contains("OWNER") && !own.contains("ada"), "\(own)")
    }

    @Test("colour: only on a terminal, never with NO_COLOR or TERM=dumb; --color overrides")
    func colourDecision() {
        #expect(Style.decide(option: .auto, isTerminal: true, environment: [:]).color)
        #expect(!Style.decide(option: .auto, isTerminal: false, environment: [:]).color)
        #expect(!Style.decide(option: .auto, isTerminal: true, environment: ["NO_COLOR": "1"]).color)
        // no-color.org: an empty NO_COLOR does not count.
        #expect(Style.decide(option: .auto, isTerminal: true, environment: ["NO_COLOR": ""]).color)
        #expect(!Style.decide(option: .auto, isTerminal: true, environment: ["TERM": "dumb"]).color)
        #expect(Style.decide(option: .always, isTerminal: false, environment: ["NO_COLOR": "1"]).color)
        #expect(!Style.decide(option: .never, isTerminal: true, environment: [:]).color)
    }

    @Test("plain style writes no escape codes; colour wraps and resets")
    func escapes() {
        #expect(Style.plain.red("x") == "x")
        #expect(Style.plain.header("ID") == "ID")
        #expect(Style(color: true).red("x") == "\u{1B}[31mx\u{1B}[0m")
        #expect(Style(color: true).bold("") == "")
    }

    @Test("a content step shows its text, not its icon's name (a name for windows)")
    func contentStep() {
        var page = StepPage(id: "welcome", kind: .content, title: "Welcome")
        page.body = "Your answers help us."
        page.icon = "dialog-information"
        let shown = Render.step(page, locale: "fr", style: .plain)
        #expect(shown.contains("Your answers help us.\n"))
        #expect(!shown.contains("dialog-information") && !shown.contains("icon"), "\(shown)")
    }

    @Test("ids are abbreviated to the shortest beginning that tells them apart, at least the minimum")
    func abbreviatedIDs() {
        #expect(Render.abbreviated(["0123456789ab", "fedcba987654"], minimum: 8) == ["01234567", "fedcba98"])
        #expect(Render.abbreviated(["0123456789ab", "0123456789cd"], minimum: 8) == ["0123456789a", "0123456789c"])
        #expect(Render.abbreviated(["abc"], minimum: 8) == ["abc"])
        #expect(Render.abbreviated([], minimum: 8) == [])
    }

    @Test("tables line up by display width, also with wide characters and colour")
    func tableAlignment() {
        var table = TextTable(headers: ["ID", "TITLE", "STATE"])
        table.add(["a", "予約する", "editing"])
        table.add(["longer-id", "Book", "submitted"])
        for style in [Style.plain, Style(color: true)] {
            var coloured = table
            coloured.rows = table.rows.map { row in row.map { cell in TextTable.Cell(cell.text) { style.cyan($0) } } }
            let lines = coloured.render(style: style).split(separator: "\n").map { strip(String($0)) }
            #expect(lines.count == 3)
            // The third column starts at the same display column on every line.
            let starts = lines.map { line -> Int in
                let third = line.range(of: ["STATE", "editing", "submitted"].first { line.contains($0) } ?? "")!
                return displayWidth(String(line[..<third.lowerBound]))
            }
            #expect(Set(starts).count == 1, "\(lines)")
            #expect(lines.allSatisfy { !$0.hasSuffix(" ") })
        }
    }

    @Test("display width: CJK is two columns, combining marks none")
    func widths() {
        #expect(displayWidth("abc") == 3)
        #expect(displayWidth("日本") == 4)
        #expect(displayWidth("e\u{301}") == 1)
        #expect(displayWidth("한국어") == 6)
        #expect(padded("日本", to: 6) == "日本  ")
    }

    @Test("prose wraps at spaces, and between CJK characters, which have none; indentation is kept")
    func wrapping() {
        #expect(wrapped("Mit :quit beenden Sie; Ihre Antworten bleiben", width: 20)
            == "Mit :quit beenden\nSie; Ihre Antworten\nbleiben")
        // Japanese breaks between characters, two columns each; Latin words inside stay whole.
        let japanese = wrapped("各質問に答えて Enter キーを押してください。", width: 16)
        #expect(japanese == "各質問に答えて\nEnter キーを押し\nてください。", "\(japanese)")
        #expect(japanese.split(separator: "\n").allSatisfy { displayWidth(String($0)) <= 16 })
        // No line begins with closing punctuation: "。" stays with the word before it.
        #expect(wrapped("答えてください。はい", width: 14) == "答えてください。\nはい")
        // An indented line keeps its indent on every line; a word longer than the line stays whole.
        #expect(wrapped("  ✗ Enter a phone number please", width: 14) == "  ✗ Enter a\n  phone number\n  please")
        #expect(wrapped("see https://example.org/a/long/path now", width: 10) == "see\nhttps://example.org/a/long/path\nnow")
        #expect(wrapped("one\n\ntwo", width: 10) == "one\n\ntwo")
    }

    @Test("the progress bar fills in proportion and has no escapes without colour")
    func progress() {
        let half = progressBar(index: 2, count: 4, width: 10, style: .plain)
        #expect(half == "█████░░░░░")
        #expect(progressBar(index: 4, count: 4, width: 8, style: .plain) == "████████")
        #expect(progressBar(index: 9, count: 4, width: 4, style: .plain) == "████")
        #expect(progressBar(index: 1, count: 0, style: .plain) == "")
        #expect(progressBar(index: 1, count: 2, width: 4, style: Style(color: true)).contains("\u{1B}["))
    }

    @Test("the progress line is localized: Step N of M · title")
    func progressLine() {
        var step = StepPage(id: "when", kind: .form, title: "Day and time")
        step.index = 2
        step.count = 4
        #expect(Render.progress(step, locale: "en", style: .plain).hasPrefix("Step 2 of 4 · Day and time\n"))
        #expect(Render.progress(step, locale: "de", style: .plain).hasPrefix("Schritt 2 von 4 · Day and time\n"))
    }

    @Test("JSON: escaping, key order, numbers, and D-Bus values mapped naturally")
    func json() {
        let value = JSONOutput.object([
            "b": .string("quote \" backslash \\ newline \n tab \t bell \u{07}"), "a": .integer(-3),
            "d": .double(2.5), "w": .double(3), "n": .double(.nan), "u": .unsigned(.max),
        ])
        #expect(value.serialized() == #"{"b":"quote \" backslash \\ newline \n tab \t bell \u0007","a":-3,"d":2.5,"w":3,"n":null,"u":18446744073709551615}"#)
        #expect(JSONOutput.object([:]).pretty() == "{}")
        #expect(JSONOutput.array([]).pretty() == "[]")
        #expect(JSONOutput.array([.bool(true)]).pretty() == "[\n  true\n]")

        let dbus: [String: DBusValue] = [
            "s": .string("x"), "b": .bool(false), "u": .uint32(7), "x": .int64(-1), "d": .double(0.5),
            "as": .strings(["a", "b"]), "dict": .vardict(["k": .string("v")]), "o": .objectPath("/a/b"),
            "st": .structure([.string("id"), .string("label")]),
        ]
        #expect(JSONOutput(dbus).serialized() ==
            #"{"as":["a","b"],"b":false,"d":0.5,"dict":{"k":"v"},"o":"/a/b","s":"x","st":["id","label"],"u":7,"x":-1}"#)
    }

    @Test("rule hints follow the session's language; an unknown one falls back to English")
    func localizedRules() {
        var name = StepField(id: "name", type: .text, label: "Name")
        name.minLength = 3
        name.maxLength = 40
        #expect(FieldRules.describe(name, locale: "en") == "3–40 characters")
        #expect(FieldRules.describe(name, locale: "de") == "3–40 Zeichen")
        #expect(FieldRules.describe(name, locale: "de-AT") == "3–40 Zeichen")
        #expect(FieldRules.describe(name, locale: "ja") == "3〜40 文字")
        #expect(FieldRules.describe(name, locale: "tlh") == "3–40 characters")
        name.maxLength = nil
        #expect(FieldRules.describe(name, locale: "de") == "mindestens 3 Zeichen")
        name.minLength = nil
        name.maxLength = 40
        #expect(FieldRules.describe(name, locale: "ja") == "40 文字以内")

        var pages = StepField(id: "pages", type: .number, label: "Pages")
        pages.minimum = 1
        pages.maximum = 500
        pages.integer = true
        #expect(FieldRules.describe(pages, locale: "ja") == "1–500、整数")
        #expect(Render.field(pages, locale: "fr", style: .plain).contains("Règles : 1–500, nombre entier")
                || Render.field(pages, locale: "fr", style: .plain).contains("Règles: 1–500, nombre entier"))

        // Every phrase is translated in every locale of the catalog.
        var days = StepField(id: "days", type: .multichoice, label: "Days")
        days.minSelected = 1
        days.maxSelected = 3
        var date = StepField(id: "day", type: .date, label: "Day")
        date.after = "2030-01-01"
        date.before = "2030-12-31"
        var terms = StepField(id: "terms", type: .toggle, label: "Terms")
        terms.mustBeOn = true
        let fields = [name, pages, days, date, terms]
        let english = fields.map { FieldRules.describe($0, locale: "en") }
        #expect(english[2] == "pick at least 1, pick at most 3")
        #expect(english[3] == "YYYY-MM-DD, after 2030-01-01, before 2030-12-31")
        // How a date is typed, in the words the date validators use; captions punctuated as French does.
        #expect(Render.field(date, locale: "fr", style: .plain).contains("  Règles : AAAA-MM-JJ, "), "\(Render.field(date, locale: "fr", style: .plain))")
        #expect(Render.field(date, locale: "fr", style: .plain).contains("  Champ :  day (date)\n"))
        #expect(FieldRules.describe(date, locale: "de").hasPrefix("JJJJ-MM-TT, "))
        #expect(english[4] == "must be yes")
        for locale in Strings.locales where locale != "en" {
            for (field, en) in zip(fields, english) {
                let text = FieldRules.describe(field, locale: locale)
                #expect(text != en, "\(locale): \(field.id) is not translated")
                #expect(!text.contains("{"), "\(locale): \(text)")
            }
        }
    }

    @Test("show renders every field with id, type, value, options, rules and error")
    func showField() {
        var field = StepField(id: "pageCount", type: .number, label: "About how many pages?")
        field.required = true
        field.value = .int64(12)
        field.isSet = true
        field.error = "Enter a whole number."
        field.minimum = 1
        field.maximum = 500
        field.integer = true
        let text = Render.field(field, locale: "en", style: .plain)
        #expect(text.contains("About how many pages? *"))
        #expect(text.contains("Field: pageCount (number)"))
        #expect(text.contains("Value: 12"))
        #expect(text.contains("Rules: 1–500, whole number"))
        #expect(text.contains("Error: Enter a whole number."))

        var secure = StepField(id: "pin", type: .secure, label: "PIN")
        secure.isSet = true
        #expect(Render.field(secure, locale: "en", style: .plain).contains("Value: (set)"))
        secure.isSet = false
        #expect(Render.field(secure, locale: "en", style: .plain).contains("Value: not set"))

        var choice = StepField(id: "service", type: .choice, label: "Service")
        choice.options = [ChoiceOption(id: "website", label: "A website")]
        choice.other = true
        choice.otherLabel = "Something else"
        choice.value = .string("other")
        choice.otherValue = "A kiosk"
        let rendered = Render.field(choice, locale: "en", style: .plain)
        #expect(rendered.contains("Value:   other (Something else): A kiosk"))
        #expect(rendered.contains("Options: website (A website), other (Something else)"))
    }

    @Test("a review lines up its answers and marks unfinished steps")
    func review() {
        let review = ReviewPage(groups: [
            ReviewSection(step: "service", title: "Service", finished: true, status: "", editLabel: "Edit “Service”",
                          answers: [ReviewLine(field: "service", label: "What can we help with?", display: "A website")]),
            ReviewSection(step: "when", title: "Day and time", finished: false, status: "Not finished",
                          editLabel: "Edit “Day and time”",
                          answers: [ReviewLine(field: "day", label: "Day", display: "Not given")]),
        ], note: "We send an invite.")
        let text = Render.review(review, style: .plain)
        #expect(text.contains("Service (service)\n    What can we help with?  A website\n"))
        #expect(text.contains("Day and time (when)  Not finished\n    Day                     Not given\n"))
        #expect(text.hasSuffix("\nWe send an invite.\n"))
        #expect(Render.review(review, numbered: true, style: .plain).contains("2  Day and time  Not finished"))
    }
}

/// `text` without ANSI escape sequences (CSI: `ESC [`, parameters, a final
/// character from `@` to `~`), as a terminal shows it.
func strip(_ text: String) -> String {
    var out = ""
    var inEscape = false
    var sawBracket = false
    for scalar in text.unicodeScalars {
        if inEscape {
            if !sawBracket && scalar == "[" {
                sawBracket = true
            } else if (0x40...0x7E).contains(scalar.value) {
                inEscape = false
            }
            continue
        }
        if scalar == "\u{1B}" {
            inEscape = true
            sawBracket = false
            continue
        }
        out.unicodeScalars.append(scalar)
    }
    return out
}
