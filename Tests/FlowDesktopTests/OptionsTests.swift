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
        #expect(start.bus == .system)
        let resume = try Options.parse(["--resume", "5f0c8e2a9b7d4c1e8f3a6b2d9c0e7f41", "--address", "unix:path=/tmp/bus"])
        #expect(resume.resume == "5f0c8e2a9b7d4c1e8f3a6b2d9c0e7f41")
        #expect(resume.bus == .address("unix:path=/tmp/bus"))
        #expect(try Options.parse(["--user"]).bus == .user)
        #expect(try Options.parse(["--system", "--system"]).bus == .system, "the same option twice is no conflict")
        #expect(try Options.parse([]) == Options())
        #expect(Options().bus == .user, "the session bus by default, as flowctl")
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
            (["--system", "--address", "unix:path=/x"], "--address conflicts with --system; choose one of --system, --user, --address"),
            (["--user", "--system"], "--system conflicts with --user; choose one of --system, --user, --address"),
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

    @Test("--help prints the usage")
    func helps() throws {
        let help = try ChildProcess.run(Self.binary, ["--help"])
        #expect(help.status == .exited(0))
        #expect(help.standardOutput.contains("Usage: flowd-gtk"))
        #expect(help.standardOutput.contains("--address ADDRESS"))
    }

    @Test("bad input is refused with status 64 and a sentence, before any window or bus")
    func refusesWhatItCannotDo() throws {
        let bad = try ChildProcess.run(Self.binary, ["--resume"])
        #expect(bad.status == .exited(64))
        #expect(bad.standardError.contains("--resume needs a value"))
        let notAnID = try ChildProcess.run(Self.binary, ["--resume", "../etc"])
        #expect(notAnID.status == .exited(64))
        #expect(notAnID.standardError.contains("'../etc' is not a session id"))
        let conflict = try ChildProcess.run(Self.binary, ["--system", "--address", "unix:path=/x"])
        #expect(conflict.status == .exited(64))
        #expect(conflict.standardError.contains("conflicts with --system"))
    }
}
