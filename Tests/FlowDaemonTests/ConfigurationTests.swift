import Foundation
import FlowdSystem
import PluginHost
import Testing
@testable import FlowDaemon

@Suite struct CommandLineParsing {
    @Test func defaultsToRunWithNothingSet() throws {
        #expect(try DaemonCommandLine.parse([]) == .run(DaemonOptions()))
    }

    @Test func readsEveryOption() throws {
        let command = try DaemonCommandLine.parse([
            "--address", "unix:path=/tmp/bus", "--flows-dir", "/a", "--flows-dir=/b", "--plugin-dir", "/p",
            "--state-dir", "/s", "--config=/etc/x.conf", "--verbose",
        ])
        var expected = DaemonOptions()
        expected.bus = .address("unix:path=/tmp/bus")
        expected.flowDirectories = ["/a", "/b"]
        expected.pluginDirectories = ["/p"]
        expected.stateDirectory = "/s"
        expected.configFile = "/etc/x.conf"
        expected.verbose = true
        #expect(command == .run(expected))
    }

    @Test func checkConfigKeepsTheOtherOptions() throws {
        var expected = DaemonOptions()
        expected.bus = .system
        expected.configFile = "/etc/x.conf"
        #expect(try DaemonCommandLine.parse(["--check-config", "--system", "--config", "/etc/x.conf"]) == .checkConfig(expected))
        #expect(try DaemonCommandLine.parse(["--check-config", "--version"]) == .version)
        #expect(throws: UsageError.self) { try DaemonCommandLine.parse(["--check-config=yes"]) }
    }

    @Test func helpAndVersionWin() throws {
        #expect(try DaemonCommandLine.parse(["--system", "--help"]) == .help)
        #expect(try DaemonCommandLine.parse(["-h"]) == .help)
        #expect(try DaemonCommandLine.parse(["--version"]) == .version)
    }

    @Test(arguments: [
        (["--bogus"], "unknown option --bogus"),
        (["--flows-dir"], "needs a value"),
        (["--flows-dir", "--system"], "needs a value"),
        (["--system", "--session"], "conflicts"),
        (["--system=yes"], "takes no value"),
        (["stray"], "unexpected argument"),
        (["--state-dir="], "needs a value"),
    ])
    func badCommandLinesGiveOneClearLine(arguments: [String], fragment: String) {
        #expect {
            _ = try DaemonCommandLine.parse(arguments)
        } throws: { error in
            guard let usage = error as? UsageError else { return false }
            return usage.message.contains(fragment) && !usage.message.contains("\n") && usage.message.hasPrefix("flowd: ")
        }
    }

    @Test func sameBusTwiceIsFine() throws {
        var expected = DaemonOptions()
        expected.bus = .system
        #expect(try DaemonCommandLine.parse(["--system", "--system"]) == .run(expected))
    }
}

@Suite struct InstallLayouts {
    @Test func usrPrefixUsesEtcAndVar() {
        let layout = InstallLayout.derived(fromExecutable: "/usr/libexec/flowd")
        #expect(layout.prefix == "/usr")
        #expect(layout.sysconfDirectory == "/etc")
        #expect(layout.localStateDirectory == "/var")
        #expect(layout.libDirectory == "/usr/lib")
        #expect(layout.dataDirectory == "/usr/share")
    }

    @Test func otherPrefixesKeepEverythingInside() {
        let layout = InstallLayout.derived(fromExecutable: "/opt/flowd/bin/flowctl")
        #expect(layout.prefix == "/opt/flowd")
        #expect(layout.sysconfDirectory == "/opt/flowd/etc")
        #expect(layout.localStateDirectory == "/opt/flowd/var")
        #expect(DaemonConfiguration(layout: layout).pluginDirectories == ["/opt/flowd/lib/flowd/plugins"])
        #expect(DaemonConfiguration(layout: layout).flowDirectories == ["/opt/flowd/etc/flowd/flows", "/opt/flowd/share/flowd/flows"])
    }
}

@Suite struct ConfigurationFiles {
    /// An in-memory file system for the loader.
    static func loader(_ files: [String: String], environment: [String: String] = [:]) -> ConfigurationLoader {
        ConfigurationLoader(
            layout: InstallLayout(prefix: "/usr"), environment: environment,
            readFile: { path throws(ConfigurationError) in files[path] },
            listDirectory: { dir in
                let names = files.keys.filter { $0.hasPrefix(dir + "/") }.map { String($0.dropFirst(dir.count + 1)) }
                return names.isEmpty ? nil : names
            })
    }

    @Test func everyKeyIsRead() throws {
        let text = """
            # comment
            [Daemon]
            Bus=system
            FlowsDirectory=/srv/flows
            PluginDirectory=/srv/plugins
            StateDirectory=/srv/state
            Durability=power
            Verbose=yes
            ; another comment
            [Limits]
            MaxStringLength=100
            MaxAnswersPerCall=5
            MaxListLength=7
            MaxSessionsPerUser=3
            MaxSessions=9
            IdleTimeout=1h 30min
            SettledRetention=2d
            [Plugins]
            CallTimeout=250ms
            Disable=flowd.webhook flowd.command
            """
        let config = try Self.loader(["/etc/flowd/flowd.conf": text]).load(DaemonOptions())
        #expect(config.limits.settledRetention == .seconds(172_800))
        #expect(config.bus == .system)
        #expect(config.flowDirectories == ["/srv/flows"])
        #expect(config.pluginDirectories == ["/srv/plugins"])
        #expect(config.stateDirectory == "/srv/state")
        #expect(config.durability == .power)
        #expect(config.verbose)
        #expect(config.limits.maxStringLength == 100)
        #expect(config.limits.maxAnswersPerCall == 5)
        #expect(config.limits.maxListLength == 7)
        #expect(config.limits.maxSessionsPerUser == 3)
        #expect(config.limits.maxSessions == 9)
        #expect(config.limits.idleTimeout == .seconds(5400))
        #expect(config.pluginCallTimeout == .milliseconds(250))
        #expect(config.disabledPlugins == ["flowd.webhook", "flowd.command"])
    }

    @Test func dropInsApplyInOrderAndEmptyAssignmentResetsALists() throws {
        let files = [
            "/etc/flowd/flowd.conf": "[Daemon]\nFlowsDirectory=/one\nFlowsDirectory=/two\n[Limits]\nMaxSessions=10\n",
            "/etc/flowd/flowd.conf.d/20-b.conf": "[Daemon]\nFlowsDirectory=\nFlowsDirectory=/three\n",
            "/etc/flowd/flowd.conf.d/10-a.conf": "[Limits]\nMaxSessions=20\n",
            "/etc/flowd/flowd.conf.d/README": "[Nonsense\n",
        ]
        let config = try Self.loader(files).load(DaemonOptions())
        #expect(config.flowDirectories == ["/three"])
        #expect(config.limits.maxSessions == 20)
    }

    @Test func dropInsApplyWithoutTheMainFileAndTheFilesReadAreListed() throws {
        let files = [
            "/etc/flowd/flowd.conf.d/50-plugins.conf": "[Daemon]\nPluginDirectory=/srv/plugins\n",
            "/etc/flowd/flowd.conf.d/10-limits.conf": "[Limits]\nMaxSessions=20\n",
            "/etc/flowd/flowd.conf.d/notes.txt": "[Nonsense\n",
        ]
        let config = try Self.loader(files).load(DaemonOptions())
        #expect(config.pluginDirectories == ["/srv/plugins"])
        #expect(config.limits.maxSessions == 20)
        #expect(config.files == ["/etc/flowd/flowd.conf.d/10-limits.conf", "/etc/flowd/flowd.conf.d/50-plugins.conf"])

        var withMain = files
        withMain["/etc/flowd/flowd.conf"] = "[Limits]\nMaxSessions=5\n"
        let both = try Self.loader(withMain).load(DaemonOptions())
        #expect(both.limits.maxSessions == 20, "a drop-in wins over the main file")
        #expect(both.files.first == "/etc/flowd/flowd.conf")
        #expect(both.files.count == 3)

        #expect(try Self.loader([:]).load(DaemonOptions()).files.isEmpty)
    }

    @Test func theEffectiveConfigurationReadsBackAsItself() throws {
        let text = """
            [Daemon]
            Bus=system
            FlowsDirectory=/srv/flows
            FlowsDirectory=/usr/share/flowd/flows
            StateDirectory=/srv/state
            Durability=power
            [Limits]
            MaxSessions=9
            IdleTimeout=1h 30min
            [Plugins]
            CallTimeout=250ms
            Disable=flowd.webhook flowd.command
            """
        let config = try Self.loader(["/etc/flowd/flowd.conf": text]).load(DaemonOptions())
        let rendered = config.fileLines.joined(separator: "\n") + "\n"
        #expect(rendered.contains("IdleTimeout=1h 30min\n"))
        #expect(rendered.contains("CallTimeout=250ms\n"))
        let again = try Self.loader(["/etc/flowd/flowd.conf": rendered]).load(DaemonOptions())
        #expect(again.fileLines == config.fileLines)
        #expect(again.limits == config.limits)
        #expect(again.flowDirectories == config.flowDirectories)
        #expect(again.disabledPlugins == config.disabledPlugins)
        #expect(again.pluginCallTimeout == config.pluginCallTimeout)

        var empty = DaemonConfiguration(layout: InstallLayout(prefix: "/usr"))
        empty.flowDirectories = []
        empty.stateDirectory = "/s"
        let emptyAgain = try Self.loader(["/etc/flowd/flowd.conf": empty.fileLines.joined(separator: "\n")]).load(DaemonOptions())
        #expect(emptyAgain.flowDirectories == [], "an emptied list stays empty")
        #expect(emptyAgain.fileLines == empty.fileLines)
    }

    /// etc/flowd.conf, the sample installed as /etc/flowd/flowd.conf, names
    /// every key with its built-in default: uncommented, it changes nothing.
    @Test func theSampleFileListsEveryKeyWithItsDefault() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let sample = try String(contentsOf: repository.appendingPathComponent("etc/flowd.conf"), encoding: .utf8)
        let uncommented = sample.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("#") && line.dropFirst().first?.isUppercase == true ? String(line.dropFirst()) : String(line)
        }.joined(separator: "\n")
        let config = try Self.loader(["/etc/flowd/flowd.conf": uncommented]).load(DaemonOptions())
        var defaults = try Self.loader([:]).load(DaemonOptions())
        defaults.stateDirectory = "/var/lib/flowd"
        #expect(config.fileLines == defaults.fileLines)
        let keys = defaults.fileLines.compactMap { $0.split(separator: "=").first.map(String.init) }.filter { !$0.hasPrefix("[") }
        for key in keys {
            #expect(sample.contains("\n#\(key)="), "etc/flowd.conf does not show \(key)")
        }
    }

    @Test func pluginSectionsIsolatePluginsByFileName() throws {
        let config = try Self.loader([
            "/etc/flowd/flowd.conf": "[Plugin webhook.so]\nIsolated=yes\nNetwork=yes\n[Plugin vat]\nIsolated=yes\nMemoryLimit=1G\n",
            "/etc/flowd/flowd.conf.d/50-more.conf": "[Plugin vat]\nMemoryLimit=infinity\n[Plugin spool]\nIsolated=no\n",
        ]).load(DaemonOptions())
        #expect(config.isolatedPlugins["webhook"] == IsolationSettings(memoryLimit: 512 << 20, network: true))
        #expect(config.isolatedPlugins["vat"] == IsolationSettings(memoryLimit: nil, network: false), "a drop-in wins key by key")
        #expect(config.isolatedPlugins["spool"] == nil, "Isolated=no is in-process")
        #expect(config.plugins.count == 3)
        // The effective configuration reads back to the same.
        let again = try Self.loader(["/etc/flowd/flowd.conf": config.fileLines.joined(separator: "\n")]).load(DaemonOptions())
        #expect(again.plugins == config.plugins)
        #expect(config.fileLines.contains("[Plugin vat]") && config.fileLines.contains("MemoryLimit=infinity"))
    }

    @Test func commandLineWinsOverFiles() throws {
        var options = DaemonOptions()
        options.bus = .address("unix:path=/x")
        options.flowDirectories = ["/cli"]
        options.stateDirectory = "/cli-state"
        let config = try Self.loader(["/etc/flowd/flowd.conf": "[Daemon]\nBus=system\nFlowsDirectory=/file\nStateDirectory=/st\n"])
            .load(options)
        #expect(config.bus == .address("unix:path=/x"))
        #expect(config.flowDirectories == ["/cli"])
        #expect(config.stateDirectory == "/cli-state")
    }

    @Test func stateDirectoryFollowsTheEnvironment() throws {
        var system = DaemonOptions()
        system.bus = .system
        #expect(try Self.loader([:]).load(system).stateDirectory == "/var/lib/flowd")
        #expect(try Self.loader([:], environment: ["STATE_DIRECTORY": "/run/x:/run/y"]).load(system).stateDirectory == "/run/x")
        #expect(try Self.loader([:], environment: ["HOME": "/home/u"]).load(DaemonOptions()).stateDirectory == "/home/u/.local/state/flowd")
        #expect(try Self.loader([:], environment: ["XDG_STATE_HOME": "/xdg"]).load(DaemonOptions()).stateDirectory == "/xdg/flowd")
    }

    @Test func missingExplicitConfigIsAnError() {
        var options = DaemonOptions()
        options.configFile = "/nope.conf"
        #expect(throws: ConfigurationError.self) { try Self.loader([:]).load(options) }
    }

    @Test(arguments: [
        ("[Daemon]\nBus=bogus\n", "flowd.conf:2: [Daemon] Bus: expected system, session or a D-Bus address"),
        ("[Daemon]\nBus=unix:path\n", "flowd.conf:2: [Daemon] Bus: \"unix:path\" is not a D-Bus address"),
        ("[Daemon]\nFlowsDirectory=relative\n", "flowd.conf:2: [Daemon] FlowsDirectory: expected an absolute path"),
        ("[Limits]\nMaxSessions=-1\n", "flowd.conf:2: [Limits] MaxSessions: expected a positive whole number"),
        ("[Limits]\nMaxSessions=0\n", "expected a positive whole number"),
        ("[Limits]\nIdleTimeout=soon\n", "expected a time span"),
        ("[Limits]\nMaxSesions=3\n", "unknown key \"MaxSesions\" in [Limits]"),
        ("[Deamon]\nBus=system\n", "unknown section [Deamon]"),
        ("Bus=system\n", "assignment before any [Section] header"),
        ("[Daemon]\nBus system\n", "expected Key=Value"),
        ("[Daemon\n", "malformed section header"),
    ])
    func badFilesNameTheFileAndLine(text: String, fragment: String) {
        #expect {
            _ = try Self.loader(["/etc/flowd/flowd.conf": text]).load(DaemonOptions())
        } throws: { error in
            String(describing: error).contains(fragment)
        }
    }

    @Test func timeSpansAreWrittenInTheLargestUnits() {
        #expect(TimeSpan.text(.seconds(7 * 86400)) == "7d")
        #expect(TimeSpan.text(.seconds(5400)) == "1h 30min")
        #expect(TimeSpan.text(.milliseconds(1500)) == "1s 500ms")
        #expect(TimeSpan.text(.zero) == "0s")
        for span in [Duration.seconds(1), .milliseconds(61_001), .seconds(90061)] {
            #expect(TimeSpan.parse(TimeSpan.text(span)) == span)
        }
    }

    @Test func timeSpans() {
        #expect(TimeSpan.parse("30") == .seconds(30))
        #expect(TimeSpan.parse("2d") == .seconds(172_800))
        #expect(TimeSpan.parse("1.5s") == .milliseconds(1500))
        #expect(TimeSpan.parse("5 parsecs") == nil)
        #expect(TimeSpan.parse("") == nil)
        #expect(TimeSpan.parse("99999999999999d") == nil)
    }
}
