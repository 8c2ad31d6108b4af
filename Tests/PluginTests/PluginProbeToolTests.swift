// flowd-plugin-probe, the installed tool, run as a person runs it: on one
// file next to others, with flowd's loader and checks.
import FlowKit
import Foundation
import PluginHost
import PluginTestSupport
import Testing

@Suite("flowd-plugin-probe")
struct PluginProbeToolTests {
    static var tool: String { BuildProducts.directory + "/flowd-plugin-probe" }

    @Test("lists one plugin's capabilities, leaving the other files of its directory alone")
    func lists() throws {
        let temp = try TemporaryDirectory()
        // The crashing plugin beside it would kill the probe if it were loaded.
        let dir = try PluginFiles.directory(["FixtureTestPlugin", "FixtureCrashOnLoadPlugin"], in: temp)
        let out = try Subprocess.run(Self.tool, [dir + "/FixtureTestPlugin.so"])
        #expect(out.exitCode == 0, "\(out.standardError)")
        #expect(out.lines.first == "test 1.0: loaded from \(dir)/FixtureTestPlugin.so", "\(out.lines)")
        #expect(out.lines.contains("  field-validator\ttest.even"), "\(out.lines)")
        #expect(out.lines.contains("  options-provider\ttest.options"), "\(out.lines)")
    }

    @Test("lists the options each capability declares under it")
    func listsDeclaredOptions() throws {
        let temp = try TemporaryDirectory()
        let dir = try PluginFiles.directory(["CommandPlugin"], in: temp)
        let out = try Subprocess.run(Self.tool, [dir + "/CommandPlugin.so"])
        #expect(out.exitCode == 0, "\(out.standardError)")
        #expect(
            out.lines.suffix(5) == [
                "  submit-action\tflowd.command", "    option\tpath\tstring\trequired", "    option\targs\tstrings",
                "    option\ttimeoutSeconds\tnumber", "    option\tincludeSecure\tbool",
            ], "\(out.lines)")
    }

    @Test("refuses what flowd refuses, with flowd's reason: another FlowKit, loose permissions, no file")
    func refuses() throws {
        let temp = try TemporaryDirectory()
        let dir = try PluginFiles.directory(["FixtureOtherFlowKitPlugin"], in: temp)
        let other = try Subprocess.run(Self.tool, [dir + "/FixtureOtherFlowKitPlugin.so"])
        #expect(other.exitCode == 65)
        #expect(other.standardOutput.contains("failed: built against FlowKit ABI 0x"), "\(other.standardOutput)")
        #expect(other.standardOutput.contains("(another FlowKit interface)"), "\(other.standardOutput)")
        try PluginFiles.install("FixtureTestPlugin", into: dir, as: "loose.so", mode: 0o666)
        let loose = try Subprocess.run(Self.tool, [dir + "/loose.so"])
        #expect(loose.exitCode == 65)
        #expect(loose.standardOutput.contains("is writable by group or others (mode 0666)"), "\(loose.standardOutput)")
        let missing = try Subprocess.run(Self.tool, [dir + "/none.so"])
        #expect(missing.exitCode == 66, "\(missing.standardError)")
        let usage = try Subprocess.run(Self.tool, ["not-a-plugin"])
        #expect(usage.exitCode == 64)
    }

    @Test("calls a validator, an options provider and a misbehaving one as flowd would")
    func calls() throws {
        let temp = try TemporaryDirectory()
        let dir = try PluginFiles.directory(["FixtureTestPlugin", "FixtureOddPlugin"], in: temp)
        let test = dir + "/FixtureTestPlugin.so"
        let odd = try Subprocess.run(
            Self.tool, [test, "call", "test.even", "--value", "3", "--type", "number"])
        #expect(odd.exitCode == 0)
        #expect(odd.lines.last == "rejected: Value must be even.", "\(odd.lines)")
        let even = try Subprocess.run(Self.tool, [test, "call", "test.even", "--value", "4", "--type", "number"])
        #expect(even.lines.last == "accepted", "\(even.lines)")
        let colours = try Subprocess.run(Self.tool, [test, "call", "test.options", "--locale", "de"])
        #expect(colours.lines.suffix(3) == ["red\tRot", "green\tGrün\temblem-default", "blue\tBlau"], "\(colours.lines)")
        let other = try Subprocess.run(Self.tool, [dir + "/FixtureOddPlugin.so", "call", "odd.other-option"])
        #expect(other.exitCode == 1)
        #expect(other.lines.last?.contains("reserved") == true, "\(other.lines)")
        let slow = try Subprocess.run(
            Self.tool, [dir + "/FixtureOddPlugin.so", "call", "odd.slow-field", "--value", "x", "--timeout", "0.2"])
        #expect(slow.lines.last == "timed out", "\(slow.lines)")
    }

    @Test("shows a validator's normalized value, and the plugin's log lines on stderr")
    func normalizedValueAndLog() throws {
        let temp = try TemporaryDirectory()
        let dir = try PluginFiles.directory(["FixtureTestPlugin"], in: temp)
        let vat = try Subprocess.run(Self.tool, [dir + "/FixtureTestPlugin.so", "call", "test.vat", "--value", "de 123.456.789"])
        #expect(vat.exitCode == 0, "\(vat.standardError)")
        #expect(vat.lines.suffix(2) == ["accepted", "normalized to: \"DE123456789\""], "\(vat.lines)")
        #expect(vat.standardError.contains("log: info: normalized a VAT id (country=DE length=11)"), "\(vat.standardError)")
        let wrong = try Subprocess.run(
            Self.tool, [dir + "/FixtureTestPlugin.so", "call", "test.vat", "--value", "nope", "--locale", "de_CH"])
        #expect(wrong.lines.last == "rejected: Value ist keine MWST-Nummer, z. B. CHE123456789.", "\(wrong.lines)")
    }
}
