import Foundation
import FlowKit
import Testing

@testable import FlowEngine

/// The shortcuts taken for speed (docs/performance.md) must give exactly
/// the answers of the general code they bypass. No timing here.
@Suite("Fast paths agree with the general code")
struct FastPathTests {
    static let requests = [
        "en", "EN", "en-US", "en-us", "de", "de-DE", "de_DE", "de_DE.UTF-8@euro", "pt", "pt-BR", "pt-br", "pt-PT", "pt_BR",
        "zh", "ZH", "zh-TW", "zh-HK", "zh-CN", "zh-Hant", "zh-hans", "zh-Hant-TW", "ja", "ko", "fr-CA", "C", "POSIX", "",
        "x", "es-419", "sr-Latn", "en-", "-", "1", "K",
    ]
    static let availableLists: [[String]] = [
        ["en"], ["de", "en"], ["en", "de"], ["EN", "en"], ["en", "EN"], ["pt-BR", "pt", "en"], ["pt", "pt-BR"],
        ["pt-PT", "en"], ["zh-Hans", "zh-Hant", "zh"], ["zh", "zh-Hans"], ["zh-Hant"], ["fr", "es"], ["en-GB", "en-US"],
        ["De-de", "de"], ["es-419", "es"], ["sr-Latn", "sr"], Strings.locales, ["\u{212A}o", "ko"], ["ko", "\u{212A}o"],
    ]

    @Test("bestMatch equals the whole chain for every request and list")
    func bestMatchEqualsTheChain() {
        for available in Self.availableLists {
            for requested in Self.requests {
                let fast = LocaleFallback.bestMatch(for: requested, in: available)
                let chain = LocaleFallback.chainMatch(for: requested, in: available)
                #expect(fast == chain, "\(requested) in \(available): \(String(describing: fast)) vs \(chain)")
            }
        }
        #expect(LocaleFallback.bestMatch(for: "en", in: []) == nil)
    }

    @Test("the shortcut answers the plain cases and declines the others")
    func exactMatchScope() {
        #expect(LocaleFallback.exactMatch(for: "en", in: ["de", "en"]) == 1)
        #expect(LocaleFallback.exactMatch(for: "PT-br", in: ["pt", "pt-BR"]) == 1)
        #expect(LocaleFallback.exactMatch(for: "pt-PT", in: ["pt", "pt-BR"]) == nil)
        #expect(LocaleFallback.exactMatch(for: "zh", in: ["zh", "zh-Hans"]) == nil)
        #expect(LocaleFallback.exactMatch(for: "de_DE", in: ["de-DE"]) == nil)
        #expect(LocaleFallback.exactMatch(for: "C", in: ["C", "en"]) == nil)
        #expect(LocaleFallback.exactMatch(for: "ko", in: ["\u{212A}o", "ko"]) == nil)
    }
}

@Suite("The record's own JSON encoder matches JSONEncoder")
struct RecordJSONTests {
    static let awkward = "quote \" backslash \\ slash / newline \n tab \t cr \r bell \u{07} nul-free ünïcödé 日本 🙂"

    /// A record with every property set, and awkward values everywhere.
    static func fullRecord() -> SessionRecord {
        SessionRecord(
            formatVersion: SessionRecord.currentFormatVersion, id: "0123456789abcdef0123456789abcdef",
            flowID: "flow.\(awkward)", flowFingerprint: "b207fc97fe198419", owner: 4_294_967_295, locale: "pt-BR",
            createdAt: 1_700_000_000_000_000, updatedAt: -5, revision: UInt64.max, state: .failed,
            currentStep: "review", returningToReview: true, visited: ["a", "b", awkward], completed: ["a"],
            shownErrors: [], answers: [
                "text": .text(awkward), "empty": .text(""), "list": .list(["x", awkward]), "none": .list([]),
                "yes": .bool(true), "no": .bool(false), "int": .integer(-9_223_372_036_854_775_808),
                "big": .integer(Int64.max), "frac": .number(2.5), "tiny": .number(Double.leastNonzeroMagnitude), "huge": .number(1e300),
                "neg": .number(-0.1),
            ],
            secureFieldsSet: ["password"],
            dynamicOptions: [
                "day": [ChoiceOption(id: "mon", label: "Monday \(awkward)", icon: "x-office-calendar"),
                        ChoiceOption(id: "tue", label: "Tuesday")],
                "none": [],
            ],
            stepMessages: [
                "a": SessionRecord.StepMessages(revision: 3, messages: ["": "step \(awkward)", "f": "field"]),
                "b": SessionRecord.StepMessages(revision: 0, messages: [:]),
            ],
            lastError: "Couldn't send this. \(awkward)", announcement: "Step 2 of 4, Day and time",
            announcementSequence: UInt64.max - 1,
            receipt: [
                "id": .number(12), "ratio": .number(0.25), "ok": .bool(true), "none": .null,
                "list": .array([.string(awkward), .number(-3), .array([]), .object([:])]),
                "nested": .object(["k": .string("v"), "n": .number(1e16)]),
            ],
            submittedAt: 1_700_000_000_123_456)
    }

    static func minimalRecord() -> SessionRecord {
        SessionRecord(
            formatVersion: 1, id: "ffffffffffffffffffffffffffffffff", flowID: "f", flowFingerprint: "", owner: 0,
            locale: "en", createdAt: 0, updatedAt: 0, revision: 0, state: .editing, currentStep: "s",
            returningToReview: false, visited: ["s"], completed: [], shownErrors: [], answers: [:], secureFieldsSet: [],
            dynamicOptions: [:], stepMessages: [:], lastError: nil, announcement: "", receipt: nil, submittedAt: nil)
    }

    @Test("every record decodes back to itself and to what JSONEncoder's bytes decode to", arguments: [0, 1])
    func sameRecord(which: Int) throws {
        let record = which == 0 ? Self.fullRecord() : Self.minimalRecord()
        let fast = try record.encodedJSON()
        let slow = try JSONEncoder().encode(record)
        let fromFast = try JSONDecoder().decode(SessionRecord.self, from: Data(fast))
        let fromSlow = try JSONDecoder().decode(SessionRecord.self, from: slow)
        #expect(fromFast == record)
        #expect(fromFast == fromSlow)
        // The same JSON document: the same keys (a property added to the record
        // and not to the encoder fails here) and the same values.
        let fastTree = try JSONDecoder().decode(JSONValue.self, from: Data(fast))
        let slowTree = try JSONDecoder().decode(JSONValue.self, from: slow)
        #expect(fastTree == slowTree)
        #expect(fastTree.objectValue?.keys.sorted() == slowTree.objectValue?.keys.sorted())
    }

    @Test("integers of every length are written as their decimal text")
    func integerDigits() throws {
        var values: [UInt64] = [0, 9, 10, 11, 99, 100, UInt64.max, UInt64.max - 1]
        var power: UInt64 = 1
        for _ in 0..<19 {
            power *= 10
            values += [power - 1, power, power + 1]
        }
        for value in values {
            var record = Self.minimalRecord()
            record.revision = value
            record.updatedAt = -Int64(truncatingIfNeeded: value & UInt64(Int64.max))
            let text = String(decoding: try record.encodedJSON(), as: UTF8.self)
            #expect(text.contains("\"revision\":\(value),"), "\(text)")
            #expect(text.contains("\"updatedAt\":\(record.updatedAt),"), "\(text)")
        }
    }

    /// The writer scans and copies strings eight bytes at a time, with the
    /// last eight overlapping and a byte loop under eight: a byte that needs
    /// an escape must be found at every place, in every one of those paths.
    @Test("a byte that needs an escape is found at every place of strings of every length")
    func escapesAtEveryPlace() throws {
        let specials = ["\"", "\\", "\n", "\u{01}", "\u{1F}", " ", "~", "\u{7F}", "é", "🙂"]
        for length in 1...20 {
            for place in 0..<length {
                for special in specials {
                    let text = String(repeating: "a", count: place) + special
                        + String(repeating: "b", count: length - place - 1)
                    var record = Self.minimalRecord()
                    record.announcement = text
                    let fast = try record.encodedJSON()
                    #expect(try JSONDecoder().decode(SessionRecord.self, from: Data(fast)).announcement == text)
                }
            }
        }
    }

    @Test("the eight-byte test agrees with the byte test for every byte at every place of a word")
    func wordTestAgreesWithByteTest() {
        let fills: [UInt8] = [0x00, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x61, 0x7F, 0x80, 0xA2, 0xDC, 0xFF]
        for fill in fills {
            for place in 0..<8 {
                for b in 0...UInt8.max {
                    var bytes = [UInt8](repeating: fill, count: 8)
                    bytes[place] = b
                    let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                    let expected = bytes.contains(where: RecordJSONWriter.needsEscape)
                    #expect(RecordJSONWriter.needsEscape(word: word) == expected, "\(bytes)")
                }
            }
        }
    }

    @Test("a record many times larger than the writer's first buffer reads back whole")
    func growsItsBuffer() throws {
        var record = Self.fullRecord()
        for i in 0..<300 { record.answers["field\(i)"] = .text(String(repeating: "é\"\n", count: i)) }
        record.announcement = String(repeating: "long announcement ", count: 500)
        let fast = try record.encodedJSON()
        #expect(fast.count > 100_000)
        #expect(try JSONDecoder().decode(SessionRecord.self, from: Data(fast)) == record)
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(fast))
            == JSONDecoder().decode(JSONValue.self, from: try JSONEncoder().encode(record)))
    }

    @Test("equal records give equal bytes")
    func deterministic() throws {
        #expect(try Self.fullRecord().encodedJSON() == Self.fullRecord().encodedJSON())
    }

    @Test("a number JSON cannot hold is refused, as JSONEncoder refuses it", arguments: [Double.nan, .infinity, -.infinity])
    func nonFinite(value: Double) {
        var record = Self.minimalRecord()
        record.receipt = ["n": .number(value)]
        #expect(throws: RecordEncodingError.self) { try record.encodedJSON() }
        #expect(throws: (any Error).self) { try JSONEncoder().encode(record) }
        record.receipt = nil
        record.answers = ["n": .number(value)]
        #expect(throws: RecordEncodingError.self) { try record.encodedJSON() }
    }
}

@Suite("progressSnapshot equals the separate getters")
struct ProgressSnapshotTests {
    /// A value for `field`, picked by `pick`: sometimes valid, sometimes empty
    /// or wrong, so steps become finished and unfinished along the walk.
    static func value(for field: FieldDefinition, in session: FlowSession, pick: UInt64) -> AnswerValue {
        let options = session.options(of: field).map(\.id)
        switch field.type {
        case .choice:
            return pick % 4 == 0 ? .text("") : .text(options.isEmpty ? "" : options[Int(pick) % options.count])
        case .multichoice:
            return pick % 4 == 0 ? .list([]) : .list(options.isEmpty ? [] : [options[Int(pick) % options.count]])
        case .toggle: return .bool(pick % 2 == 0)
        case .number: return pick % 3 == 0 ? .text("") : .integer(Int64(pick % 20))
        case .date: return .text(pick % 3 == 0 ? "" : "2025-07-0\(1 + pick % 9)")
        case .time: return .text(pick % 3 == 0 ? "" : "10:3\(pick % 10)")
        case .email: return .text(pick % 3 == 0 ? "nope" : "a@example.org")
        case .text, .multiline, .secure: return .text(pick % 4 == 0 ? "" : String(repeating: "x", count: Int(pick % 16)))
        case .computed: return .integer(Int64(pick % 20))  // refused: nothing sets a computed field
        }
    }

    /// One move of a random walk, picked by `r`: an answer (valid or not)
    /// to a field of the current step, Continue (plugins accept), Back, GoTo
    /// a step or Review, or a submit begun, failed or cancelled.
    static func move(_ session: inout FlowSession, _ r: UInt64, now: Int64) {
        let flow = session.flow
        switch r % 8 {
        case 0, 1, 2:
            if let step = flow.step(session.currentStepID), !step.fields.isEmpty {
                let field = step.fields[Int(r >> 8) % step.fields.count]
                _ = try? session.setAnswers([field.id: value(for: field, in: session, pick: r >> 16)], now: now)
            }
        case 3, 4:
            if case .checking(let checks)? = try? session.continueStep(now: now) {
                _ = session.applyPluginResults(checks.map { PluginCheckResult(check: $0, outcome: .accepted) })
            }
        case 5: try? session.back(now: now)
        case 6:
            let targets = flow.steps.map(\.id) + ["review"]
            try? session.goTo(targets[Int(r >> 8) % targets.count], now: now)
        default:
            if session.state == .submitting {
                if r & 0x100 == 0 { try? session.failSubmit(.other, now: now) } else { try? session.cancelSubmit(now: now) }
            } else {
                _ = try? session.beginSubmit(now: now)
            }
        }
    }

    static func expectSame(_ s: FlowSession, _ context: String) {
        let snapshot = s.progressSnapshot
        #expect(snapshot.stepIndex == s.stepIndex, "\(context)")
        #expect(snapshot.stepCount == s.stepCount, "\(context)")
        #expect(snapshot.canGoBack == s.canGoBack, "\(context)")
        #expect(snapshot.canContinue == s.canContinue, "\(context)")
        #expect(snapshot.continueLabel == s.continueLabel, "\(context)")
        #expect(snapshot.path == s.path, "\(context)")
        #expect(snapshot.visibleFields == s.visibleFieldIDs, "\(context)")
        // The general code these share a resolution with: each read on a
        // resolution of its own, the current step included.
        let own = s.flow.stepIndex[s.currentStepID].map { s.resolve(including: $0) } ?? s.resolve()
        #expect(snapshot.canContinue == s.canContinue(in: own), "\(context)")
        if let i = s.flow.stepIndex[s.currentStepID], s.flow.steps[i].kind == .form {
            #expect(snapshot.visibleFields == s.flow.steps[i].fields.filter(own.shows).map(\.id), "\(context)")
        }
        #expect(s.currentStep().canContinue == snapshot.canContinue, "\(context)")
    }

    @Test("along a long random walk through each example flow", arguments: ["consultation", "onboarding", "survey", "support-request"])
    func randomWalk(name: String) throws {
        let flow = try FlowLoader.load(Fixture.exampleBytes(name), fileName: "\(name).json", capabilities: .any)
        var dynamic: [String: [ChoiceOption]] = [:]
        for step in flow.steps { for field in step.fields where field.optionsFrom != nil { dynamic[field.id] = weekdayOptions } }
        for locale in ["en", "de"] {
            var session = try Fixture.session(flow, locale: locale, options: dynamic)
            var random = SplitMix(seed: UInt64(name.utf8.count) &* 7919 &+ UInt64(locale.utf8.first ?? 0))
            Self.expectSame(session, "\(name) start")
            var seen: Set<String> = []
            for move in 0..<400 {
                let r = random.next()
                Self.move(&session, r, now: Int64(move + 10))
                Self.expectSame(session, "\(name)/\(locale) after move \(move) (\(r % 8)) on \(session.currentStepID)")
                seen.insert("\(session.currentStepID) \(session.state.rawValue) \(session.returningToReview)")
            }
            // The walk went places: several steps and states, not one spot.
            #expect(seen.count >= 3, "\(seen.sorted())")
        }
    }
}

/// SplitMix64, for repeatable walks.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("Strings.fill scans bytes with the old results")
struct FillTests {
    /// The Character-walking version `fill` replaced, kept as the reference.
    static func reference(_ template: String, _ arguments: [String: String]) -> String {
        var out = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            out += rest[..<open]
            let after = rest[rest.index(after: open)...]
            guard let close = after.firstIndex(of: "}") else {
                rest = rest[open...]
                break
            }
            let name = String(after[..<close])
            if let value = arguments[name] {
                out += value
            } else {
                out += rest[open...close]
            }
            rest = after[after.index(after: close)...]
        }
        return out + rest
    }

    @Test("every built-in template in every locale, and awkward ones")
    func sameAsReference() {
        let arguments = ["n": "2", "m": "4", "title": "Día y hora 日本", "step": "Ünïcödé", "min": "1", "max": "9", "count": "3"]
        var templates = [
            "", "{", "}", "{}", "{n", "n}", "{n}{m}", "{{n}}", "{x{n}", "{n} {unknown} {m}", "a{n}b{m}c{title}d",
            "unclosed {a", "日本 {n} 語 {m}", "{title} 🙂 {n}", "{n}{", "{ n }", "{n}}",
        ]
        for key in BuiltinString.allCases {
            for locale in Strings.locales { templates.append(Strings.builtin.text(key, locale: locale)) }
        }
        for template in templates {
            for args in [arguments, [:], ["n": "{m}", "m": "x"]] {
                #expect(Strings.fill(template, args) == Self.reference(template, args), "\(template)")
            }
        }
    }
}

/// A flow's texts are resolved once per locale asked for
/// (``FlowDefinition/localized(_:)``); they must be what resolving each
/// text along the fallback chain gives, in every locale, also past the
/// cache's bound.
@Suite("The per-locale texts of a flow equal the texts resolved each time")
struct LocalizedFlowTextsTests {
    static let flow = #"""
        {"format": 1, "id": "words", "title": {"en": "Words", "de": "Wörter", "pt-BR": "Palavras"},
         "description": {"en": "About words", "de": "Über Wörter"},
         "steps": [
           {"id": "one", "title": {"en": "One", "de": "Eins", "pt-BR": "Um", "zh-Hant": "一"},
            "fields": [{"id": "a", "type": "text", "label": "A"},
                       {"id": "c", "type": "choice", "label": "C", "options": [
                         {"id": "x", "label": {"en": "Ex", "de": "Iks", "pt-BR": "Xis"}}, {"id": "y", "label": "Why", "icon": "face-smile"}]}]},
           {"id": "two", "title": "Two", "fields": [{"id": "b", "type": "text", "label": "B"}]}]}
        """#

    @Test("summary, effective locale and step titles, for many requests, kept and not kept")
    func equalToResolving() throws {
        let flow = try Fixture.flow(Self.flow)
        var requests = FastPathTests.requests
        // More locales than the cache keeps: the rest are worked out each time.
        requests += (0..<(LocalizedFlowCache.capacity + 8)).map { "x\($0 % 10)\($0 / 10)" }
        for round in 0..<2 {
            for request in requests {
                let texts = flow.localized(request)
                let locale = LocaleFallback.bestMatch(for: LocaleFallback.normalize(request), in: flow.locales)
                    .map { flow.locales[$0] } ?? "en"
                #expect(texts.effectiveLocale == locale, "\(request), round \(round)")
                #expect(flow.effectiveLocale(for: request) == locale, "\(request)")
                #expect(texts.summary.title == flow.title.resolve(request), "\(request)")
                #expect(texts.summary.description == flow.description?.resolve(request) ?? "", "\(request)")
                #expect(texts.summary.locale == locale, "\(request)")
                #expect(texts.stepTitles == flow.steps.map { $0.title.resolve(request) }, "\(request)")
                for field in flow.steps.flatMap(\.fields) where !field.options.isEmpty {
                    let resolved = field.options.map { ChoiceOption(id: $0.id, label: $0.label.resolve(request), icon: $0.icon) }
                    #expect(texts.options[field.id] == resolved, "\(request)")
                }
            }
        }
        #expect(flow.localizedTexts.count == LocalizedFlowCache.capacity, "the cache is bounded")
    }

    @Test("a session whose locale changes shows the new locale's texts at once")
    func setLocale() throws {
        var s = try Fixture.session(Fixture.flow(Self.flow), locale: "en")
        #expect(s.currentStep().title == "One")
        #expect(s.flowSummary.title == "Words")
        _ = try s.setLocale("de", now: 5)
        #expect(s.currentStep().title == "Eins")
        #expect(s.currentStep().flowTitle == "Wörter")
        #expect(s.path.map(\.title) == ["Eins", "Two"])
        #expect(s.effectiveLocale == "de")
        _ = try s.setLocale("zh-TW", now: 6)
        #expect(s.currentStep().title == "一")
        #expect(s.currentStep().flowTitle == "Words", "the title has no Chinese")
    }
}
