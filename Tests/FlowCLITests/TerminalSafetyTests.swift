@testable import FlowCLI
import DBus
import FlowEngine
import FlowKit
import FlowProtocol
import Foundation
import TestSupport
import Testing

/// Text from flowd or a plugin never reaches the terminal raw (issue 20,
/// defect 2): escape sequences and control characters are removed, and a
/// text is bounded, on every path that shows one.
@Suite("terminal safety")
struct TerminalSafetyTests {
    @Test("clean keeps printable text, newlines and tabs, and removes every control and escape sequence")
    func clean() {
        #expect(TerminalText.clean("Plain text, ünïcödé, 日本語\n\tindented") == "Plain text, ünïcödé, 日本語\n\tindented")
        #expect(TerminalText.clean("a\u{1B}[2Jb") == "ab", "CSI: clear screen")
        #expect(TerminalText.clean("a\u{1B}[38;5;196mb\u{1B}[0m") == "ab", "CSI with parameters")
        #expect(TerminalText.clean("a\u{1B}]0;owned\u{07}b") == "ab", "OSC ended by BEL: window title")
        #expect(TerminalText.clean("a\u{1B}]8;;http://x\u{1B}\\link\u{1B}]8;;\u{1B}\\b") == "alinkb", "OSC ended by ST: hyperlink")
        #expect(TerminalText.clean("a\u{1B}Pq#0;2;0;0;0\u{1B}\\b") == "ab", "DCS")
        #expect(TerminalText.clean("a\u{9B}31mb") == "ab", "8-bit CSI")
        #expect(TerminalText.clean("a\u{9D}0;t\u{9C}b") == "ab", "8-bit OSC and ST")
        #expect(TerminalText.clean("a\u{1B}(Bb\u{1B}7c") == "abc", "charset and save-cursor escapes")
        #expect(TerminalText.clean("ring\u{07}\u{08}\u{7F}\r\u{0C}\u{85}done") == "ringdone", "BEL, BS, DEL, CR, FF, NEL")
        #expect(TerminalText.clean("cut short \u{1B}[12") == "cut short ")
        #expect(TerminalText.clean("\u{1B}") == "")
        let long = String(repeating: "x", count: TerminalText.limit + 500)
        let bounded = TerminalText.clean(long)
        #expect(bounded.count == TerminalText.limit)
        #expect(bounded.hasSuffix("…"))
        #expect(TerminalText.clean(String(repeating: "y", count: TerminalText.limit)).count == TerminalText.limit)
    }

    @Test("every text of a step page is cleaned, the API 1.1 keys included (labels, flow texts, locales, hints, yes/no)")
    func everyPageKey() throws {
        let bad = "x\u{1B}]0;owned\u{07}\u{1B}[2J\r"
        var field = StepField(id: bad, type: .toggle, label: bad)
        field.help = bad; field.placeholder = bad; field.otherLabel = bad; field.error = bad
        field.warning = bad; field.display = bad; field.hint = bad; field.after = bad; field.before = bad
        field.value = .string(bad); field.otherValue = bad
        field.options = [ChoiceOption(id: bad, label: bad, icon: bad)]
        field.yesLabel = bad; field.noLabel = bad; field.patternHint = bad
        field.ruleHints = [RuleHint(kind: .equals, subject: bad, text: bad)]
        var page = StepPage(id: bad, kind: .form, title: bad)
        page.description = bad; page.body = bad; page.icon = bad; page.error = bad; page.warning = bad
        page.announcement = bad; page.continueLabel = bad; page.backLabel = bad
        page.progressLabel = bad; page.retryLabel = bad; page.cancelLabel = bad; page.submittingLabel = bad
        page.notSentLabel = bad; page.optionalLabel = bad; page.flowTitle = bad; page.flowDescription = bad
        page.locale = bad; page.effectiveLocale = bad
        page.ruleHints = [RuleHint(kind: .plugin, subject: bad, text: bad)]
        page.fields = [field]

        // Every string the page puts on the bus, walked, so a key added later
        // and not cleaned fails here.
        func strings(_ value: DBusValue) -> [String] {
            switch value {
            case .string(let s): return [s]
            case .array(_, let items): return items.flatMap(strings)
            case .dictionary(_, _, let entries): return entries.flatMap { strings($0.key) + strings($0.value) }
            case .structure(let fields): return fields.flatMap(strings)
            case .variant(let inner): return strings(inner)
            default: return []
            }
        }
        let before = strings(page.dbusValue).filter { $0 == bad }.count
        #expect(before >= 30, "the page carries the hostile text in every key (\(before))")
        let safe = try page.terminalSafe()
        let cleaned = strings(safe.dbusValue)
        #expect(!cleaned.isEmpty)
        for text in cleaned { #expect(hasNoControls(text), "\(text.debugDescription)") }
        #expect(safe.fields.first?.ruleHints.first?.text == "x")
        #expect(safe.ruleHints.first?.text == "x")
    }

    @Test("the other replies are cleaned through their codecs too: status, flows, plugins, properties, review")
    func otherReplies() throws {
        let bad = "x\u{1B}]0;owned\u{07}\r"
        let status = DaemonStatus(
            version: bad, startedAt: 1, sessions: [bad: 1], flows: [bad], refusedFlows: [.init(file: bad, reason: bad)],
            plugins: [bad: 2], failedPlugins: [bad: bad], limits: [bad: .string(bad)], stateDirectory: bad, stateBytes: 3)
        let safeStatus = try status.terminalSafe()
        #expect(safeStatus.version == "x" && safeStatus.stateDirectory == "x" && safeStatus.flows == ["x"])
        #expect(safeStatus.refusedFlows.first?.reason == "x" && safeStatus.plugins == ["x": 2])
        #expect(safeStatus.stateBytes == 3)
        let flow = try FlowSummary(id: bad, title: bad, titles: ["de": bad], locales: [bad]).terminalSafe()
        #expect(flow.id == "x" && flow.title == "x" && flow.titles == ["de": "x"] && flow.locales == ["x"])
        let plugin = try PluginSummary(name: bad, version: bad, kinds: [bad], path: bad, status: .failed, error: bad).terminalSafe()
        #expect(plugin.name == "x" && plugin.error == "x" && plugin.status == .failed)
        var properties = SessionProperties(id: "0123456789abcdef0123456789abcdef", flowID: "f")
        properties.lastError = bad
        properties.path = [PathStep(step: "a", title: bad, status: .current)]
        properties.receipt = ["reference": .string(bad)]
        let safeProperties = try properties.terminalSafe()
        #expect(safeProperties.lastError == "x" && safeProperties.path.first?.title == "x")
        #expect(safeProperties.receipt == ["reference": .string("x")])
        let review = ReviewPage(
            groups: [ReviewSection(step: "a", title: bad, finished: true, status: "", editLabel: bad,
                                   answers: [ReviewLine(field: "f", label: bad, display: bad)])],
            note: bad)
        let safeReview = try review.terminalSafe()
        #expect(safeReview.note == "x" && safeReview.groups.first?.answers.first?.display == "x")
    }

    /// A flow whose texts carry escape sequences, a validator (`test.even`)
    /// whose message quotes the label, and a receipt with escapes.
    static let hostile = #"""
        {"format": 1, "id": "hostile", "title": "Hostile\u001b]0;owned\u0007",
         "steps": [{"id": "count", "title": "Count\u001b[2J", "fields": [
           {"id": "n", "type": "number", "label": "Boxes\u001b[31m\u0007\r", "required": true,
            "validators": [{"plugin": "test.even"}]}]}],
         "review": {"title": "Review"},
         "submit": {"action": "test.echo-submit",
                    "options": {"receipt": {"reference": "R-1\u001b[2J\u001b]0;title\u0007\r\u009b31m"}}}}
        """#

    private func hasNoControls(_ text: String) -> Bool {
        !text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || (0x7F..<0xA0).contains($0.value) }
    }

    @Test("a validator's message and a receipt with escape sequences reach the terminal clean; --json keeps them, escaped")
    func throughFlowd() throws {
        let flowd = try DaemonFixture(flows: ["hostile.json": Self.hostile], plugins: ["FixtureTestPlugin"])
        let id = try flowd.start("hostile")
        let set = try flowd.flowctl(["set", id, "n=3"])
        #expect(set.status == .exited(1))
        #expect(set.standardError.contains("must be even"), "\(set.standardError)")
        #expect(hasNoControls(set.standardError), "\(set.standardError.debugDescription)")
        let show = try flowd.flowctl(["show", id])
        #expect(show.standardOutput.contains("Boxes"))
        #expect(hasNoControls(show.standardOutput), "\(show.standardOutput.debugDescription)")
        // JSON: the texts as they are, every control character escaped.
        let json = try flowd.flowctl(["show", id, "--json"])
        #expect(hasNoControls(json.standardOutput), "\(json.standardOutput.debugDescription)")
        #expect(json.standardOutput.contains(#"Boxes\u001b[31m\u0007\r"#))

        // The wizard on a terminal, with colour: only flowctl's own colour codes.
        _ = try flowd.flowctl(["close", id])
        let t = try flowd.terminal(["run", "hostile"], environment: ["NO_COLOR": ""])
        #expect(t.waitFor("Boxes"))
        #expect(t.waitFor("> "))
        t.type("3")
        #expect(t.waitFor("must be even"))
        #expect(t.waitFor("> "))
        t.type("4")
        #expect(t.waitFor("> "))
        t.type("")
        #expect(t.waitFor("> "))
        t.type("")
        #expect(t.waitFor("R-1"), "the receipt's reference at the end")
        #expect(t.wait() == .exited(0), "\(t.text)")
        let raw = t.rawText
        for forbidden in ["\u{1B}[2J", "\u{1B}]0;", "\u{07}", "\u{9B}", "\u{1B}[31m\u{07}"] {
            #expect(!raw.contains(forbidden), "\(forbidden.debugDescription) reached the terminal")
        }
        #expect(raw.contains("\u{1B}[1m"), "flowctl's own bold is still there")
        let submitted = try flowd.flowctl(["sessions", "-q"]).standardOutput.trimmingCharacters(in: .newlines)
        let receipt = try flowd.flowctl(["show", submitted])
        #expect(receipt.standardOutput.contains("R-1"))
        #expect(hasNoControls(receipt.standardOutput), "\(receipt.standardOutput.debugDescription)")
    }
}
