import FlowEngine
import Testing
import TestSupport

@testable import FlowDesktop

@Suite("flowd-gtk command line")
struct OptionsTests {
    @Test("FLOW, --resume, the bus and the locale")
    func parses() throws {
        let start = try Options.parse(["consultation", "--locale", "de", "--system"])
        #expect(start.flow == "consultation")
        #expect(start.locale == "de")
        #expect(start.systemBus)
        let resume = try Options.parse(["--resume", "5f0c8e2a9b7d4c1e8f3a6b2d9c0e7f41", "--address", "unix:path=/tmp/bus"])
        #expect(resume.resume == "5f0c8e2a9b7d4c1e8f3a6b2d9c0e7f41")
        #expect(resume.address == "unix:path=/tmp/bus")
        #expect(try Options.parse(["--fixture", "tour"]).fixture == "tour")
        #expect(try Options.parse([]) == Options())
    }

    @Test("each unusable command line is refused with a sentence")
    func refuses() {
        let cases: [([String], String)] = [
            (["--bogus"], "unknown option --bogus"),
            (["--resume"], "--resume needs a value"),
            (["--locale", "--system"], "--locale needs a value"),
            (["--locale", "not a tag"], "--locale: 'not a tag' is not a language tag such as de or pt-BR"),
            (["a", "b"], "only one FLOW can be opened, got a second: b"),
            (["a", "--resume", "x"], "give either FLOW or --resume ID, not both"),
            (["--system", "--address", "unix:path=/x"], "give either --system or --address, not both"),
        ]
        for (arguments, message) in cases {
            #expect(throws: Options.UsageError(description: message), "\(arguments)") { try Options.parse(arguments) }
        }
    }
}

/// The built flowd-gtk, for what it does before it opens a window (no display needed).
@Suite("flowd-gtk executable")
struct ExecutableTests {
    static let binary = BuildProducts.executable("flowd-gtk")

    @Test("--list-fixtures names every fixture; --help prints the usage")
    func listsAndHelps() throws {
        let list = try ChildProcess.run(Self.binary, ["--list-fixtures"])
        #expect(list.status == .exited(0))
        for name in Fixtures.catalog.map(\.name) { #expect(list.standardOutput.contains(name + "\t")) }
        let help = try ChildProcess.run(Self.binary, ["--help"])
        #expect(help.status == .exited(0))
        #expect(help.standardOutput.contains("Usage: flowd-gtk"))
    }

    @Test("without --fixture it says the window is not wired to flowd yet; bad input is refused")
    func refusesWhatItCannotDo() throws {
        let flow = try ChildProcess.run(Self.binary, ["consultation"])
        #expect(flow.status == .exited(2))
        #expect(flow.standardError.contains("shows built-in example screens only"))
        let unknown = try ChildProcess.run(Self.binary, ["--fixture", "nope"])
        #expect(unknown.status == .exited(2))
        #expect(unknown.standardError.contains("no fixture named 'nope'"))
        let bad = try ChildProcess.run(Self.binary, ["--resume"])
        #expect(bad.status == .exited(2))
        #expect(bad.standardError.contains("--resume needs a value"))
    }
}

@Suite("fixtures")
struct FixtureTests {
    @Test("every fixture in the catalog has a first screen, in English and German")
    func everyFixtureHasAScreen() {
        for locale in ["en", "de"] {
            let fixtures = Fixtures(locale: locale, now: 1_750_000_000_000_000)
            for (name, _) in Fixtures.catalog { #expect(fixtures.screen(name) != nil, "\(name) in \(locale)") }
            #expect(fixtures.screen("nope") == nil)
        }
    }

    @Test("the every-field fixture has every field type and both choice styles")
    func everyFieldType() {
        guard case .step(let step) = Fixtures(locale: "en", now: 0).screen("every-field") else {
            Issue.record("every-field is not a step")
            return
        }
        #expect(Set(step.fields.map(\.type)) == Set(FieldType.allCases))
        let styles = step.fields.filter(\.type.isChoice).map(ChoiceStyle.of)
        #expect(styles.contains(.rows) && styles.contains(.chips))
        #expect(step.fields.contains { $0.other != nil && ChoiceStyle.of($0) == .rows })
        #expect(step.fields.contains { $0.other != nil && ChoiceStyle.of($0) == .chips })
    }
}
