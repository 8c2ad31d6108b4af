import DBus
import FlowEngine
import FlowKit
import FlowProtocol
import Foundation
import Testing

/// `GetStep`'s reply is written by its own encoder (``StepPage/encode(into:)``,
/// docs/performance.md "The seventh round"); its bytes must stay exactly
/// the contract's, which clients decode. The reference here is libdbus:
/// the keys in the order the contract sends them, each value as its own
/// type, marshalled by libdbus' iterators.
@Suite("A page's bytes are libdbus' bytes, for pages of every shape")
struct PageBytesTests {
    /// The body libdbus writes for `values`.
    static func libdbusBody(_ values: [DBusValue]) throws -> [UInt8] {
        let message = Message.signal(path: "/a", interface: "org.example.I", member: "S")
        try message.append(contentsOf: values)
        let wire = message.marshaled()
        let bodyLength = Int(wire[4]) | Int(wire[5]) << 8 | Int(wire[6]) << 16 | Int(wire[7]) << 24
        return Array(wire.suffix(bodyLength))
    }

    /// The body the page's encoder writes, checked by libdbus as it loads it.
    static func encodedBody(_ encode: (inout WireEncoder) throws(DBusError) -> Void) throws -> [UInt8] {
        var encoder = WireEncoder()
        try encode(&encoder)
        _ = try Message.prebuiltSignal(
            path: "/a", interface: "org.example.I", member: "S", destination: nil, signature: "a{sv}", body: encoder)
        return encoder.bytes
    }

    /// An `a{sv}` in the given order (``DBusValue/vardict(_:)`` sorts).
    static func ordered(_ entries: [(String, DBusValue)]) -> DBusValue {
        .dictionary(
            keyType: .string, valueType: .variant,
            entries.map { DBusDictEntry(key: .string($0.0), value: .variant($0.1)) })
    }

    static func hints(_ hints: [RuleHint]) -> DBusValue {
        .array(
            elementType: "(sss)",
            hints.map { .structure([.string($0.kind.rawValue), .string($0.subject), .string($0.text)]) })
    }

    /// A field as the contract sends it (docs/dbus-api.md, "GetStep keys"),
    /// written out key by key.
    static func reference(_ f: StepField) -> DBusValue {
        var entries: [(String, DBusValue)] = [
            ("id", .string(f.id)), ("type", .string(f.type.rawValue)), ("label", .string(f.label)),
            ("help", .string(f.help)), ("placeholder", .string(f.placeholder)), ("required", .bool(f.required)),
            ("options", .array(elementType: "(ss)", f.options.map { .structure([.string($0.id), .string($0.label)]) })),
            ("other", .bool(f.other)), ("otherLabel", .string(f.otherLabel)), ("isSet", .bool(f.isSet)),
            ("error", .string(f.error)), ("warning", .string(f.warning)), ("display", .string(f.display)),
            ("hint", .string(f.hint)), ("conditionallyRequired", .bool(f.conditionallyRequired)),
            ("ruleHints", hints(f.ruleHints)),
        ]
        if !f.yesLabel.isEmpty { entries.append(("yesLabel", .string(f.yesLabel))) }
        if !f.noLabel.isEmpty { entries.append(("noLabel", .string(f.noLabel))) }
        if !f.patternHint.isEmpty { entries.append(("patternHint", .string(f.patternHint))) }
        if f.options.contains(where: { $0.icon != nil }) {
            // In the options' order (option ids are unique).
            entries.append(
                ("optionIcons", .dictionary(
                    keyType: .string, valueType: .string,
                    f.options.compactMap { option in
                        option.icon.map { DBusDictEntry(key: .string(option.id), value: .string($0)) }
                    })))
        }
        if let value = f.value { entries.append(("value", value)) }
        if let other = f.otherValue { entries.append(("otherValue", .string(other))) }
        if let v = f.minLength { entries.append(("minLength", .uint32(UInt32(clamping: v)))) }
        if let v = f.maxLength { entries.append(("maxLength", .uint32(UInt32(clamping: v)))) }
        if let v = f.minimum { entries.append(("minimum", .double(v))) }
        if let v = f.maximum { entries.append(("maximum", .double(v))) }
        entries.append(("integer", .bool(f.integer)))
        if let v = f.minSelected { entries.append(("minSelected", .uint32(UInt32(clamping: v)))) }
        if let v = f.maxSelected { entries.append(("maxSelected", .uint32(UInt32(clamping: v)))) }
        if let v = f.after { entries.append(("after", .string(v))) }
        if let v = f.before { entries.append(("before", .string(v))) }
        entries.append(("mustBeOn", .bool(f.mustBeOn)))
        return ordered(entries)
    }

    /// A page as the contract sends it, written out key by key.
    static func reference(_ p: StepPage) -> DBusValue {
        ordered([
            ("id", .string(p.id)), ("kind", .string(p.kind.rawValue)), ("title", .string(p.title)),
            ("description", .string(p.description)), ("body", .string(p.body)), ("icon", .string(p.icon)),
            ("fields", .array(elementType: "a{sv}", p.fields.map(reference))),
            ("error", .string(p.error)), ("warning", .string(p.warning)), ("announcement", .string(p.announcement)),
            ("index", .uint32(UInt32(clamping: p.index))), ("count", .uint32(UInt32(clamping: p.count))),
            ("continueLabel", .string(p.continueLabel)), ("backLabel", .string(p.backLabel)),
            ("canGoBack", .bool(p.canGoBack)), ("canContinue", .bool(p.canContinue)),
            ("progressLabel", .string(p.progressLabel)), ("retryLabel", .string(p.retryLabel)),
            ("cancelLabel", .string(p.cancelLabel)), ("submittingLabel", .string(p.submittingLabel)),
            ("notSentLabel", .string(p.notSentLabel)), ("optionalLabel", .string(p.optionalLabel)),
            ("flowTitle", .string(p.flowTitle)), ("flowDescription", .string(p.flowDescription)),
            ("locale", .string(p.locale)), ("effectiveLocale", .string(p.effectiveLocale)),
            ("ruleHints", hints(p.ruleHints)),
        ])
    }

    /// Strings of every length mod 8 and beyond the encoder's first
    /// reservation, ASCII and not.
    static let texts = [
        "", "a", "ab", "abc", "abcd", "abcde", "Grüße", "日本語の", "é", "1234567", "12345678", "123456789",
        String(repeating: "x", count: 1_500), String(repeating: "ü", count: 700) + "!",
    ]

    /// Fields of every type, every optional key present and absent, values
    /// of every answer type.
    static func fields(_ seed: Int) -> [StepField] {
        let text = { (offset: Int) in texts[(seed + offset) % texts.count] }
        return FieldType.allCases.enumerated().map { index, type in
            var f = StepField(id: "f\(index)\(text(1))", type: type, label: text(index))
            f.help = text(index + 2)
            f.placeholder = text(index + 3)
            f.required = (seed + index) % 2 == 0
            f.error = text(index + 4)
            f.warning = text(index + 5)
            f.display = type == .computed ? text(index + 6) : ""
            f.hint = type == .multichoice ? text(index + 7) : ""
            f.conditionallyRequired = (seed + index) % 3 == 0
            f.integer = (seed + index) % 2 == 1
            f.mustBeOn = type == .toggle
            f.isSet = (seed + index) % 2 == 1
            if type.isChoice {
                f.options = (0..<(seed % 4)).map { n in
                    ChoiceOption(id: "o\(n)\(text(n))", label: text(n + 8), icon: n % 2 == 0 ? "icon-\(text(n))" : nil)
                }
                f.other = seed % 2 == 0
                f.otherLabel = f.other ? text(index + 9) : ""
                if f.other, seed % 3 == 0 { f.otherValue = text(index + 10) }
            }
            if type == .toggle {
                f.yesLabel = text(index + 11)
                f.noLabel = text(index + 12)
            }
            if type == .text, seed % 2 == 0 { f.patternHint = text(index + 13) }
            if seed % 2 == 1 {
                f.minLength = seed
                f.maxLength = seed * 1000 + index
                f.minimum = -Double(seed) / 3
                f.maximum = 1e300
                f.minSelected = 0
                f.maxSelected = Int(UInt32.max) + 7
                f.after = text(index + 14)
                f.before = "2026-12-0\(seed % 10)"
            }
            f.ruleHints = (0..<(seed % 3)).map { n in
                RuleHint(kind: n % 2 == 0 ? .requiredIf : .plugin, subject: text(n + 15), text: text(n + 16))
            }
            // Secure fields never carry their value.
            if type != .secure, f.isSet {
                switch type {
                case .toggle: f.value = .bool(seed % 2 == 0)
                case .number: f.value = seed % 2 == 0 ? .double(2.5) : .int64(-Int64(seed))
                case .multichoice: f.value = .strings(seed % 2 == 0 ? [] : [text(1), text(2), text(3)])
                default: f.value = .string(text(index + 17))
                }
            }
            return f
        }
    }

    static func page(_ seed: Int) -> StepPage {
        let text = { (offset: Int) in texts[(seed + offset) % texts.count] }
        let kinds: [StepView.Kind] = [.form, .content, .review, .complete]
        var p = StepPage(id: "step\(text(0))", kind: kinds[seed % kinds.count], title: text(1))
        p.description = text(2)
        p.body = text(3)
        p.icon = text(4)
        p.fields = seed % 5 == 4 ? [] : fields(seed)
        p.error = text(5)
        p.warning = text(6)
        p.announcement = text(7)
        p.index = seed
        p.count = seed % 3 == 0 ? Int.max : seed + 2
        p.continueLabel = text(8)
        p.backLabel = text(9)
        p.canGoBack = seed % 2 == 0
        p.canContinue = seed % 3 == 0
        p.progressLabel = text(10)
        p.retryLabel = text(11)
        p.cancelLabel = text(12)
        p.submittingLabel = text(13)
        p.notSentLabel = text(0)
        p.optionalLabel = text(1)
        p.flowTitle = text(2)
        p.flowDescription = text(3)
        p.locale = text(4)
        p.effectiveLocale = text(5)
        p.ruleHints = (0..<(seed % 4)).map { n in
            RuleHint(kind: [.equals, .notEquals, .before, .after][n], subject: text(n), text: text(n + 1))
        }
        return p
    }

    @Test("a step page's bytes equal libdbus' for its keys in the contract's order", arguments: 0..<28)
    func stepPage(_ seed: Int) throws {
        let page = Self.page(seed)
        let encoded = try Self.encodedBody(page.encode)
        #expect(encoded == (try Self.libdbusBody([Self.reference(page)])))
    }

    @Test("a field's bytes equal libdbus', after a byte of every offset", arguments: 0..<8)
    func fieldAfterOddOffsets(_ offset: Int) throws {
        // Alignment inside the field's entries follows from where it starts.
        for field in Self.fields(offset) {
            var encoder = WireEncoder()
            for n in 0..<offset { encoder.byte(UInt8(n)) }
            try field.encode(into: &encoder)
            let prefix: [DBusValue] = (0..<offset).map { .byte(UInt8($0)) }
            #expect(encoder.bytes == (try Self.libdbusBody(prefix + [Self.reference(field)])))
        }
    }

    /// The engine's views of real sessions: every field type, answers of
    /// every type (a number as an integer and as a fraction, lists of 0 to
    /// 2, Other's text), errors after a refused Continue, an option icon,
    /// the content step, two flows in three locales.
    static func views() throws -> [StepView] {
        let clock = FixedClock(now: 1_750_000_000_000_000, today: CivilDate(iso: "2025-06-16")!)
        var views: [StepView] = []
        let answerSets: [[String: AnswerValue]] = [
            [:],
            ["name": .text("Ada"), "count": .number(2.5), "days": .list(["mon", "tue"]), "ok": .bool(true),
             "colour": .text("red"), "day": .text("2025-03-01"), "note": .text("Grüße\n日本語"), "pin": .text("12345")],
            ["count": .integer(-3), "days": .list([]), "colour": .text("other"), "colour.other": .text("Teal"),
             "mail": .text("no"), "at": .text("25:99")],
        ]
        for locale in ["en", "de", "ja"] {
            let flow = try FlowLoader.load(everyField, fileName: "wire.json", capabilities: .any)
            var session = try FlowSession(
                flow: flow, id: String(repeating: "ab", count: 16), owner: 1000, locale: locale, clock: clock)
            views.append(session.currentStep())
            _ = try session.continueStep(now: clock.now)
            for answers in answerSets {
                _ = try? session.setAnswers(answers, now: clock.now)
                views.append(session.currentStep())
                _ = try? session.continueStep(now: clock.now)
                views.append(session.currentStep())
                if session.currentStepID != "all" { try session.back(now: clock.now) }
            }
            let loan = try FlowLoader.load(hinted, fileName: "hinted.json", capabilities: .any)
            var other = try FlowSession(
                flow: loan, id: String(repeating: "12", count: 16), owner: 0, locale: locale, clock: clock)
            views.append(other.currentStep())
            _ = try? other.setAnswers(
                ["purpose": .text("loan"), "phone": .text("x1"), "password": .text("a"), "confirm": .text("b")],
                now: clock.now)
            _ = try? other.continueStep(now: clock.now)
            views.append(other.currentStep())
        }
        return views
    }

    @Test("GetStep's reply written from the engine's view has the bytes of the page made from it")
    func viewBytes() throws {
        let views = try Self.views()
        #expect(views.count == 27)
        for view in views {
            let page = StepPage(view)
            let encoded = try Self.encodedBody(view.encode)
            #expect(encoded == (try Self.encodedBody(page.encode)))
            #expect(encoded == (try Self.libdbusBody([Self.reference(page)])))
        }
    }

    /// Every locale flowd has built-in words for, regions and the
    /// underscore form, and right-to-left languages no flow is written in
    /// (their pages fall back to a flow locale: the locale asked for and the
    /// one used differ).
    static let locales = [
        "en", "de", "es", "fr", "it", "ja", "ko", "pt-BR", "zh-Hans", "zh-Hant", "fr-CA", "de_DE", "ar", "he-IL", "sv",
    ]

    /// The example flows under flows/.
    static func exampleFlows() throws -> [(String, FlowDefinition)] {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("flows")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }.sorted()
        return try names.map { name in
            let bytes = Array(try Data(contentsOf: directory.appendingPathComponent(name)))
            return (name, try FlowLoader.load(bytes, fileName: name, capabilities: .any))
        }
    }

    @Test("the entries kept with a flow's page texts are the bytes of each page's own, in every flow and locale")
    func keptEntries() throws {
        let clock = FixedClock(now: 1_750_000_000_000_000, today: CivilDate(iso: "2025-06-16")!)
        let flows = try Self.exampleFlows()
        #expect(flows.count >= 6)
        var kept = 0
        for (name, flow) in flows {
            // Two rounds: the first page of a flow and locale makes the
            // bytes, every later one (another session) copies them.
            for round in 0..<2 {
                for (n, locale) in Self.locales.enumerated() {
                    var session = try FlowSession(
                        flow: flow, id: String(repeating: String(format: "%02x", n * 2 + round), count: 16), owner: 1000,
                        locale: locale, clock: clock)
                    var views = [session.currentStep()]
                    // A second step of the same session, where there is one.
                    if (try? session.continueStep(now: clock.now)) != nil { views.append(session.currentStep()) }
                    for view in views {
                        if view.shared.kept != nil { kept += 1 }
                        let page = StepPage(view)
                        let encoded = try Self.encodedBody(view.encode)
                        #expect(encoded == (try Self.encodedBody(page.encode)), "\(name) \(locale) \(view.id) round \(round)")
                        #expect(encoded == (try Self.libdbusBody([Self.reference(page)])), "\(name) \(locale) \(view.id)")
                    }
                }
            }
        }
        // The pages were made from the kept texts (not the general way).
        #expect(kept >= flows.count * Self.locales.count * 2)
    }

    @Test("a page with no fields, no hints and empty strings")
    func emptyPage() throws {
        let page = StepPage(id: "", kind: .content, title: "")
        #expect(try Self.encodedBody(page.encode) == (try Self.libdbusBody([Self.reference(page)])))
    }

    @Test("a string with a NUL makes the page invalid instead of reaching the bus")
    func nulInPage() throws {
        var page = Self.page(1)
        page.fields[0].help = "a\u{0}b"
        var encoder = WireEncoder()
        try page.encode(into: &encoder)
        #expect(encoder.invalidity != nil)
        #expect(throws: DBusError.self) {
            try Message.prebuiltSignal(
                path: "/a", interface: "org.example.I", member: "S", destination: nil, signature: "a{sv}", body: encoder)
        }
    }

    @Test("a review's bytes equal libdbus'", arguments: 0..<6)
    func reviewPage(_ seed: Int) throws {
        let text = { (offset: Int) in Self.texts[(seed + offset) % Self.texts.count] }
        let review = ReviewPage(
            groups: (0..<seed).map { n in
                ReviewSection(
                    step: text(n), title: text(n + 1), finished: n % 2 == 0, status: text(n + 2), editLabel: text(n + 3),
                    answers: (0..<(n % 3)).map { a in ReviewLine(field: text(a), label: text(a + 4), display: text(a + 5)) })
            },
            note: text(6))
        var encoder = WireEncoder()
        for value in review.dbusArguments { try encoder.value(value) }
        #expect(encoder.bytes == (try Self.libdbusBody(review.dbusArguments)))
    }
}
