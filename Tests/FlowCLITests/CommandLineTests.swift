import DBus
import FlowCLI
import FlowClient
import FlowProtocol
import Testing

@Suite("Command line")
struct CommandLineTests {
    private func parsed(_ arguments: [String]) throws -> ParsedCommand {
        guard case .run(let command) = try FlowctlCommandLine.parse(arguments) else {
            Issue.record("\(arguments) did not parse to a command")
            throw CLIError.usage("not a command")
        }
        return command
    }

    private func usageError(_ arguments: [String]) -> CLIError? {
        do {
            _ = try FlowctlCommandLine.parse(arguments)
            return nil
        } catch {
            return error
        }
    }

    @Test("global options go before or after the command")
    func globalOptionsAnywhere() throws {
        let before = try parsed(["--system", "--json", "show", "abcd"])
        let after = try parsed(["show", "abcd", "--json", "--system"])
        #expect(before == after)
        #expect(before.global.bus == .system)
        #expect(before.global.json)
        #expect(before.arguments == ["abcd"])
    }

    @Test("--no-ask-password turns asking for a password off, anywhere on the line; it takes no value")
    func noAskPassword() throws {
        #expect(try parsed(["--system", "sessions"]).global.askPassword)
        #expect(try !parsed(["--no-ask-password", "--system", "sessions"]).global.askPassword)
        #expect(try !parsed(["close", "abcd", "--no-ask-password"]).global.askPassword)
        #expect(usageError(["--no-ask-password=yes", "sessions"])?.message.contains("takes no value") == true)
    }

    @Test("sessions --user with a value is the owner filter; alone, --user is still the bus")
    func sessionsUserFilterOrBus() throws {
        let filter = try parsed(["sessions", "--user", "alice", "--flow", "plain", "--state=submitted", "--older-than", "7d"])
        #expect(filter.options == ["user": "alice", "flow": "plain", "state": "submitted", "older-than": "7d"])
        #expect(filter.global.bus == .user)
        let system = try parsed(["--system", "sessions", "--user=0"])
        #expect(system.global.bus == .system)
        #expect(system.options["user"] == "0")
        let bus = try parsed(["sessions", "--user"])
        #expect(bus.options["user"] == nil)
        #expect(bus.global.bus == .user)
        let beforeAnOption = try parsed(["sessions", "--user", "-q"])
        #expect(beforeAnOption.options == ["quiet": ""])
        // Elsewhere --user takes no value: the next word stays an argument.
        #expect(try parsed(["show", "--user", "abcd"]).arguments == ["abcd"])
        #expect(usageError(["--system", "sessions", "--user"])?.message.contains("conflicts") == true)
        #expect(usageError(["sessions", "--flow"])?.message == "option --flow needs a value FLOW (see 'flowctl sessions --help')")
        #expect(usageError(["flows", "--state", "editing"]) != nil, "the filters are sessions' own")
    }

    @Test("--address takes a value, separate or after =; --user and --session mean the session bus")
    func busOptions() throws {
        #expect(try parsed(["--address", "unix:path=/run/x", "flows"]).global.bus == .address("unix:path=/run/x"))
        #expect(try parsed(["flows", "--address=unix:path=/run/y"]).global.bus == .address("unix:path=/run/y"))
        #expect(try parsed(["--user", "flows"]).global.bus == .user)
        #expect(try parsed(["--session", "flows"]).global.bus == .user)
        #expect(try parsed(["flows"]).global.bus == .user)
        // The same bus twice is fine; two different ones are not.
        #expect(try parsed(["--system", "--system", "flows"]).global.bus == .system)
        let conflict = usageError(["--system", "--address", "unix:path=/x", "flows"])
        #expect(conflict?.code == .usage)
        #expect(conflict?.message.contains("conflicts") == true)
        let twice = usageError(["--address", "unix:path=/a", "flows", "--address=unix:path=/b"])
        #expect(twice?.code == .usage)
        #expect(twice?.message == "--address was given twice; give it once")
        #expect(try parsed(["--address", "unix:path=/a", "--address", "unix:path=/a", "flows"]).global.bus
            == .address("unix:path=/a"), "the same address twice is fine")
    }

    @Test("command options: --locale with a value, -q as a flag, bundles of short flags")
    func commandOptions() throws {
        let start = try parsed(["start", "consultation", "--locale", "de"])
        #expect(start.options["locale"] == "de")
        #expect(try parsed(["start", "--locale=pt-BR", "survey"]).options["locale"] == "pt-BR")
        #expect(try parsed(["flows", "-q"]).flag("quiet"))
        #expect(try parsed(["sessions", "--quiet"]).flag("quiet"))
        #expect(try FlowctlCommandLine.parse(["flows", "-qh"]) == .help("flows"))
    }

    @Test("FIELD=VALUE arguments that look like options after -- stay positional")
    func doubleDash() throws {
        let command = try parsed(["set", "abcd", "--", "--weird=1", "n=-5"])
        #expect(command.arguments == ["abcd", "--weird=1", "n=-5"])
        #expect(try parsed(["set", "abcd", "n=-5"]).arguments == ["abcd", "n=-5"])
    }

    @Test("help: --help, -h, help COMMAND, COMMAND --help; --version")
    func helpAndVersion() throws {
        #expect(try FlowctlCommandLine.parse(["--help"]) == .help(nil))
        #expect(try FlowctlCommandLine.parse(["-h"]) == .help(nil))
        #expect(try FlowctlCommandLine.parse(["help"]) == .help(nil))
        #expect(try FlowctlCommandLine.parse(["help", "set"]) == .help("set"))
        #expect(try FlowctlCommandLine.parse(["set", "--help"]) == .help("set"))
        // --help wins over missing arguments: asking for help is never a usage error.
        #expect(try FlowctlCommandLine.parse(["goto", "-h"]) == .help("goto"))
        #expect(try FlowctlCommandLine.parse(["--version"]) == .version)
        #expect(usageError(["help", "nosuch"])?.code == .usage)
    }

    @Test("every command has help that names its arguments and options", arguments: FlowctlCommandLine.commands)
    func everyCommandHasHelp(_ spec: CommandSpec) {
        let help = FlowctlCommandLine.help(for: spec)
        #expect(help.hasPrefix("Usage: flowctl [OPTIONS] \(spec.name)"))
        if !spec.arguments.isEmpty { #expect(help.contains(spec.arguments)) }
        for option in spec.options { #expect(help.contains("--" + option.long)) }
        #expect(help.contains("--json") == (spec.acceptsJSON && spec.name != "help"))
        #expect(FlowctlCommandLine.overview().contains(spec.summary))
    }

    @Test("usage errors are one line and never the help", arguments: [
        ([], "no command given"),
        (["shw", "x"], "did you mean 'show'"),
        (["frobnicate"], "unknown command \"frobnicate\""),
        (["show"], "'show' needs SESSION"),
        (["goto", "abcd"], "'goto' needs STEP"),
        (["set", "abcd"], "'set' needs FIELD=VALUE"),
        (["flows", "extra"], "unexpected argument \"extra\" for 'flows' (usage: flowctl flows)"),
        (["sessions", "x"], "(usage: flowctl sessions)"),
        (["plugins", "x"], "(usage: flowctl plugins)"),
        (["show", "a", "b"], "(usage: flowctl show SESSION)"),
        (["flows", "--bogus"], "unknown option '--bogus'"),
        (["flows", "-z"], "unknown option '-z'"),
        (["--locale", "de", "start", "x"], "goes after the command"),
        (["start", "x", "--locale"], "needs a value L"),
        (["--address"], "needs a value ADDR"),
        (["flows", "--json=yes"], "takes no value"),
        (["flows", "--color", "sometimes"], "auto, always or never"),
        (["--json", "run", "survey"], "interactive"),
        (["check"], "'check' needs FILE"),
    ] as [([String], String)])
    func usageErrors(_ arguments: [String], _ expected: String) {
        let error = usageError(arguments)
        #expect(error?.code == .usage, "\(arguments)")
        #expect(error?.message.contains(expected) == true, "\(arguments): \(error?.message ?? "no error")")
        #expect(error?.message.contains("\n") == false)
    }

    @Test("the binary's contract for usage errors: exit 64, one line on stderr, nothing on stdout")
    func usageExitStatus() throws {
        let service = try EngineService()
        for arguments in [["show"], ["nosuch"], ["flows", "--nope"], []] {
            let run = flowctl(arguments, service: service)
            #expect(run.status == 64)
            #expect(run.stdout.isEmpty)
            #expect(run.stderr.hasPrefix("flowctl: "))
            #expect(run.stderr.filter { $0 == "\n" }.count == 1)
        }
        #expect(service.calls.isEmpty, "a usage error never reaches the daemon")
    }

    @Test("did you mean: only for a close name")
    func editDistance() {
        #expect(usageError(["sesions"])?.message.contains("did you mean 'sessions'") == true)
        #expect(usageError(["xyzzy"])?.message.contains("did you mean") == false)
    }

    @Test("the exit codes are the documented sysexits values")
    func exitCodes() {
        #expect(ExitCode.success.rawValue == 0)
        #expect(ExitCode.failure.rawValue == 1)
        #expect(ExitCode.usage.rawValue == 64)
        #expect(ExitCode.dataError.rawValue == 65)
        #expect(ExitCode.notFound.rawValue == 66)
        #expect(ExitCode.unavailable.rawValue == 69)
        #expect(ExitCode.software.rawValue == 70)
        #expect(ExitCode.ioError.rawValue == 74)
        #expect(ExitCode.accessDenied.rawValue == 77)
        #expect(ExitCode.interrupted.rawValue == 130)
    }

    @Test("D-Bus error kinds map to exit codes")
    func serviceErrorMapping() {
        // Every error name of the contract, as flowd sends it.
        let expected: [FlowErrorName: ExitCode] = [
            .notFound: .notFound, .invalidArgs: .dataError, .accessDenied: .accessDenied, .invalidState: .failure,
            .validationFailed: .failure, .limitExceeded: .failure, .submitFailed: .failure, .pluginFailed: .unavailable,
            .timeout: .failure, .cancelled: .failure, .failed: .failure,
        ]
        for name in FlowErrorName.allCases {
            let error = FlowClientError(DBusError(name: name.errorName, message: "message"), member: "GetStep")
            #expect(error.kind == .flowd(name))
            let cli = CLIError(error, bus: .user, locale: "en", flowd: "/x/flowd")
            #expect(cli.code == expected[name], "\(name)")
            if name == .submitFailed {
                // Its message is the person's text (also in LastError).
                #expect(cli.message == "message")
            } else {
                // flowd's message is English for programs and logs; a person reads flowctl's sentence.
                #expect(cli.message != "message", "\(name)")
                let german = CLIError(error, bus: .user, locale: "de", flowd: "/x/flowd").message
                #expect(german != cli.message, "\(name) is said in German: \(german)")
            }
        }
        #expect(FlowErrorName.notFound.errorName.rawValue == "org.flowd.Flow1.Error.NotFound")
        // What the bus or the client says: flowd unavailable, a reply it does not understand, any other error.
        let others: [(ErrorName, ExitCode)] = [
            (.serviceUnknown, .unavailable), (.nameHasNoOwner, .unavailable), (.noReply, .unavailable),
            (.disconnected, .unavailable), ("org.freedesktop.DBus.Error.Spawn.ChildExited", .unavailable),
            ("org.freedesktop.DBus.Error.TimedOut", .unavailable),
            (.unknownMethod, .software), (.accessDenied, .accessDenied), (.invalidArgs, .dataError),
            (.unknownObject, .notFound), (.limitsExceeded, .failure),
        ]
        for (name, code) in others {
            let error = FlowClientError(DBusError(name: name, message: "message"), member: "GetStep")
            #expect(CLIError(error, bus: .user, locale: "en", flowd: "/x/flowd").code == code, "\(name)")
        }
        let unreachable = FlowClientError(.cannotConnect, "cannot connect", underlying: .disconnected("no socket"))
        #expect(CLIError(unreachable, bus: .address("unix:path=/b"), locale: "en", flowd: "/x/flowd").message
                == "cannot connect to the bus at unix:path=/b: no socket")
        let mismatch = FlowClientError(.protocolMismatch, "flowd's GetStep reply does not match the API")
        #expect(CLIError(mismatch, bus: .user, locale: "en", flowd: "/x/flowd").code == .software)
    }

    @Test("the start hint runs flowd by a path that works: beside flowctl, in the prefix's libexec, else /usr/libexec")
    func flowdLocation() {
        let build = "/src/flowd/.build/debug"
        #expect(FlowdLocation.find(executable: build + "/flowctl") { $0 == build + "/flowd" } == build + "/flowd")
        let local = "/usr/local/libexec/flowd"
        #expect(FlowdLocation.find(executable: "/usr/local/bin/flowctl") { $0 == local } == local)
        #expect(FlowdLocation.find(executable: "/usr/bin/flowctl") { $0 == "/usr/libexec/flowd" } == "/usr/libexec/flowd")
        #expect(FlowdLocation.find(executable: "/opt/x/flowctl") { _ in false } == "/usr/libexec/flowd")
        #expect(FlowdLocation.find(executable: nil) { _ in true } == "/usr/libexec/flowd")

        #expect(BusChoice.address("unix:path=/run/b").startCommand() == "/usr/libexec/flowd --address unix:path=/run/b")
        #expect(BusChoice.address("unix:path=/run/b").startCommand(flowd: "/my builds/flowd")
            == "'/my builds/flowd' --address unix:path=/run/b")
        #expect(BusChoice.system.startCommand(flowd: "/x/flowd") == "systemctl start flowd")
        #expect(BusChoice.user.startCommand() == "systemctl --user start flowd")
    }

    @Test("the language asked for: LC_ALL, then LC_MESSAGES, then LANG; C, POSIX and non-tags ask for none")
    func requestedLocale() {
        func locale(_ environment: [String: String]) -> String? { RequestedLocale.fromEnvironment { environment[$0] } }
        #expect(locale(["LC_ALL": "", "LC_MESSAGES": "fr_FR.UTF-8", "LANG": "de_DE.UTF-8"]) == "fr-FR")
        #expect(locale(["LC_ALL": "it_IT", "LANG": "de"]) == "it-IT")
        #expect(locale(["LANG": "pt_BR.UTF-8@euro"]) == "pt-BR")
        #expect(locale(["LANG": "C.UTF-8"]) == nil && locale(["LC_ALL": "POSIX", "LANG": "de"]) == nil)
        #expect(locale(["LANG": "!!"]) == nil && locale([:]) == nil)
    }

    @Test("polkit's text agent: a fallback inside a logind session (a desktop's agent asks first), the process's own outside one")
    func authenticationAgentArguments() {
        #expect(AuthenticationAgent.arguments(inLoginSession: true) == ["--notify-fd", "3", "--fallback"])
        #expect(AuthenticationAgent.arguments(inLoginSession: false) == ["--notify-fd", "3"])
    }
}

extension CommandSpec: CustomTestStringConvertible {
    package var testDescription: String { name }
}
