import FlowKit
import Foundation
import Testing

@testable import FlowEngine

/// `GetStep`'s page is made from texts kept per flow and locale
/// (``FlowSession/currentStep()``); it must be, field for field, the page
/// the general presenter makes (``SessionPresenter/step()``), for every flow,
/// step, locale and answer state.
@Suite("The kept page texts give the general page")
struct PageTextsTests {
    /// The example flows, the format 1 fixtures, and the test flows that
    /// pipe, hide, compute, warn and hint.
    static func flows() throws -> [(String, FlowDefinition)] {
        var out: [(String, FlowDefinition)] = []
        for name in Fixture.exampleNames + ["support-request"] {
            out.append((name, try FlowLoader.load(Fixture.exampleBytes(name), fileName: "\(name).json", capabilities: .any)))
        }
        let format1 = Fixture.root.appendingPathComponent("Tests/Fixtures/Flows/format1")
        for file in try FileManager.default.contentsOfDirectory(atPath: format1.path).sorted() where file.hasSuffix(".json") {
            let bytes = Array(try Data(contentsOf: format1.appendingPathComponent(file)))
            out.append(("format1/\(file)", try FlowLoader.load(bytes, fileName: file, capabilities: .any)))
        }
        let inline = [
            ("loan", FieldConditionTests.loanFlow), ("pipe", PipingTests.flow), ("hints", RuleHintTests.flow),
            ("warnings", WarningTests.flow), ("presenter", PresenterTests.flow), ("words", LocalizedFlowTextsTests.flow),
        ]
        for (name, json) in inline { out.append((name, try Fixture.flow(json))) }
        return out
    }

    static let locales = ["en", "de", "es", "fr-CA", "pt-PT", "ja", "zh-TW", "sv", "de_DE"]

    /// A plugin outcome picked by `r`, so cached verdicts, step messages,
    /// warnings and failures all reach pages.
    static func outcome(_ r: UInt64, field: String?) -> PluginCheckOutcome {
        switch r % 7 {
        case 0: return .rejected("Not {that} one.")
        case 1: return .warning("Looks odd.")
        case 2: return .failed
        case 3: return .timedOut
        case 4: return .issues([ValidationIssue(field: field, message: "Issue here."),
                                ValidationIssue(field: nil, message: "Step issue.", level: .warning)])
        default: return .accepted
        }
    }

    /// A move of ``ProgressSnapshotTests/move(_:_:now:)``, or one of its
    /// own: an answer with the plugins' verdicts, Continue with them, a
    /// change of language, a provider's options, a finished submit.
    static func move(_ s: inout FlowSession, _ r: UInt64, now: Int64) {
        switch (r >> 40) % 10 {
        case 0:
            _ = try? s.setLocale(locales[Int(r >> 8) % locales.count], now: now)
        case 1:
            guard let step = s.flow.step(s.currentStepID), !step.fields.isEmpty else { return }
            let field = step.fields[Int(r >> 8) % step.fields.count]
            let value = ProgressSnapshotTests.value(for: field, in: s, pick: r >> 16)
            if let result = try? s.setAnswers([field.id: value], now: now), !result.checks.isEmpty {
                _ = s.applyPluginResults(result.checks.map { PluginCheckResult(check: $0, outcome: outcome(r >> 20, field: field.id)) })
            }
        case 2:
            if case .checking(let checks)? = try? s.continueStep(now: now) {
                let first = s.flow.step(s.currentStepID)?.fields.first?.id
                _ = s.applyPluginResults(checks.map { PluginCheckResult(check: $0, outcome: outcome(r >> 24, field: first)) })
                _ = try? s.continueStep(now: now)
            }
        case 3:
            for field in s.flow.steps.flatMap(\.fields) where field.optionsFrom != nil {
                try? s.setDynamicOptions(field: field.id, r & 0x1000 == 0 ? weekdayOptions : slotOptions)
            }
        case 4:
            if s.state == .submitting { try? s.finishSubmit(receipt: SubmitReceipt(), now: now) }
        default:
            ProgressSnapshotTests.move(&s, r, now: now)
        }
    }

    @Test("along random walks of every example and test flow, in many locales")
    func randomWalks() throws {
        var formPages = 0
        for (name, flow) in try Self.flows() {
            var dynamic: [String: [ChoiceOption]] = [:]
            for step in flow.steps { for f in step.fields where f.optionsFrom != nil { dynamic[f.id] = weekdayOptions } }
            for (li, locale) in Self.locales.enumerated() {
                var s = try Fixture.session(flow, locale: locale, options: dynamic)
                var random = SplitMix(seed: UInt64(name.utf8.count) &* 104_729 &+ UInt64(li))
                for move in 0..<150 {
                    let kept = s.currentStep()
                    let general = SessionPresenter(s).step()
                    #expect(kept == general, "\(name)/\(locale) move \(move) on \(s.currentStepID) (\(s.state.rawValue))")
                    if kept != general { return }
                    // The progress snapshot from the kept texts is the
                    // general presenter's, with `canContinue` known or not.
                    let progress = SessionPresenter(s).progress()
                    #expect(s.progressSnapshot(canContinue: nil) == progress, "\(name)/\(locale) move \(move): progress")
                    #expect(s.progressSnapshot(canContinue: progress.canContinue) == progress, "\(name)/\(locale) move \(move)")
                    if s.progressSnapshot != progress { return }
                    if let i = s.flow.stepIndex[s.currentStepID] {
                        formPages += 1
                        // The arrival said from the kept texts is the general words'.
                        let route = s.route()
                        #expect(s.arrivalWords(atStep: i, path: route) == s.words(s.arrival(atStep: i, path: route)),
                                "\(name)/\(locale) move \(move) on \(s.currentStepID)")
                    }
                    Self.move(&s, random.next(), now: Int64(move + 10))
                }
            }
            // The walks were served from the kept texts.
            #expect(flow.pageTexts.count > 0, "\(name)")
        }
        #expect(formPages > 1000, "the walks reached steps: \(formPages)")
    }

    @Test("past the bound of kept locales a page is still the general one")
    func pastTheBound() throws {
        let flow = try Fixture.flow(LocalizedFlowTextsTests.flow)
        for i in 0..<(PerLocaleCache<PageTexts>.capacity + 5) {
            // Regions of German: each its own locale asked for.
            let region = String(decoding: [UInt8(ascii: "A") + UInt8(i / 26), UInt8(ascii: "A") + UInt8(i % 26)], as: UTF8.self)
            let s = try Fixture.session(flow, locale: "de-\(region)")
            #expect(s.currentStep() == SessionPresenter(s).step())
            #expect(s.progressSnapshot == SessionPresenter(s).progress())
        }
        #expect(flow.pageTexts.count == PerLocaleCache<PageTexts>.capacity)
    }

    @Test("a template is filled as Strings.fill fills it, for every built-in template and awkward ones")
    func fillTemplate() {
        var templates = [
            "", "{", "}", "{}", "{n", "n}", "{n}{m}", "{{n}}", "{x{n}", "{n} {unknown} {m}", "a{n}b{m}c{title}d",
            "unclosed {a", "日本 {n} 語 {m}", "{title} 🙂 {n}", "{n}{", "{ n }", "{n}}", "{title}{title}",
        ]
        for key in BuiltinString.allCases {
            for locale in Strings.locales { templates.append(Strings.builtin.text(key, locale: locale)) }
        }
        let names = ["n", "m", "title"]
        for values in [["2", "4", "Día y hora"], ["{m}", "x", "{n}"], ["", "", ""]] {
            let arguments = Dictionary(uniqueKeysWithValues: zip(names, values))
            for template in templates {
                #expect(FillTemplate(template, names: names).fill(values[0], values[1], values[2]) == Strings.fill(template, arguments), "\(template)")
            }
        }
        // Two values (the progress line's template): a third name stays empty.
        for template in templates {
            let arguments = ["n": "2", "m": "4", "title": ""]
            #expect(FillTemplate(template, names: names).fill("2", "4") == Strings.fill(template, arguments), "\(template)")
        }
    }

    @Test("a progress line's numbers read from the table are the integers' digits")
    func numbers() {
        for n in [-1, 0, 1, 9, 10, 42, 99, 100, 101, 12_345] {
            #expect(FlowSession.number(n) == String(n))
        }
    }
}
