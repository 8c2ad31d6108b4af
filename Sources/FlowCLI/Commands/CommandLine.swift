import FlowClient
import FlowEngine
import FlowProtocol

/// One option a command accepts.
package struct OptionSpec: Sendable, Hashable {
    /// The long name without dashes (`locale` for `--locale`).
    package var long: String
    /// A one-letter short form (`q` for `-q`), if any.
    package var short: Character?
    /// The value's name in help (`L`), nil for a flag.
    package var valueName: String?
    /// One line of help.
    package var help: String

    /// An option.
    package init(_ long: String, short: Character? = nil, value: String? = nil, help: String) {
        self.long = long
        self.short = short
        self.valueName = value
        self.help = help
    }
}

/// The groups commands are listed in by `flowctl --help`.
package enum CommandGroup: String, Sendable, CaseIterable {
    /// Listing flows and sessions, starting and closing sessions.
    case flows = "Flows and sessions"
    /// Commands on one session's steps.
    case steps = "Working on a session"
    /// The wizard.
    case interactive = "Interactive"
    /// About the daemon itself.
    case daemon = "The daemon"
    /// Commands that need no daemon.
    case offline = "Offline"
}

/// One command: its name, arguments, help and options.
package struct CommandSpec: Sendable, Hashable {
    /// The command word.
    package var name: String
    /// The argument synopsis (`SESSION FIELD=VALUE...`).
    package var arguments: String
    /// One line for the command list.
    package var summary: String
    /// The paragraph `flowctl COMMAND --help` shows.
    package var details: String
    /// The command's own options (the global ones are always accepted).
    package var options: [OptionSpec]
    /// The fewest positional arguments.
    package var minArguments: Int
    /// The most positional arguments; nil for any number.
    package var maxArguments: Int?
    /// Its group in the list.
    package var group: CommandGroup
    /// `--json` is meaningful (interactive commands refuse it).
    package var acceptsJSON: Bool = true
    /// It talks to the daemon (so the bus options matter).
    package var needsDaemon: Bool = true
}

/// The options every command accepts.
package struct GlobalOptions: Sendable, Hashable {
    /// The bus: `--system`, `--user` or `--address`.
    package var bus: BusChoice = .user
    /// `--json`.
    package var json = false
    /// `--color`.
    package var color: ColorOption = .auto
    /// False with `--no-ask-password`: calls never let polkit ask for a
    /// password (on a terminal they do by default).
    package var askPassword = true
    /// Which bus option was given, to refuse a second, different one.
    var busOption: String?

    /// The defaults: the session bus, human output, colour on a terminal.
    package init() {}
}

/// A command line, understood.
package enum Invocation: Sendable, Hashable {
    /// `--help`, `help` or `COMMAND --help`: the topic is a command name, or nil for the overview.
    case help(String?)
    /// `--version`.
    case version
    /// Run a command.
    case run(ParsedCommand)
}

/// A command with its options and arguments.
package struct ParsedCommand: Sendable, Hashable {
    /// The command.
    package var spec: CommandSpec
    /// The global options.
    package var global: GlobalOptions
    /// The command's own options: long name → value ("" for a flag).
    package var options: [String: String]
    /// The positional arguments.
    package var arguments: [String]

    /// True when flag `long` was given.
    package func flag(_ long: String) -> Bool { options[long] != nil }
}

/// flowctl's commands and its command-line parser.
package enum FlowctlCommandLine {
    static let localeOption = OptionSpec(
        "locale", value: "L", help: "the session's language, a tag such as de or pt-BR (default: from LANG, else en)")
    static let quietOption = OptionSpec("quiet", short: "q", help: "print only the ids, one per line")

    /// Every command, in the order the overview lists them.
    package static let commands: [CommandSpec] = [
        CommandSpec(
            name: "flows", arguments: "", summary: "list the flows flowd serves",
            details: "Lists the flows the daemon serves: id, number of steps, whether it ends with Review, the languages it has, and its title.",
            options: [quietOption], minArguments: 0, maxArguments: 0, group: .flows),
        CommandSpec(
            name: "start", arguments: "FLOW", summary: "start a session and print its id",
            details: "Starts a session of FLOW and prints the new session's id (32 hex characters) alone on standard output, for scripts: id=$(flowctl start consultation).",
            options: [localeOption], minArguments: 1, maxArguments: 1, group: .flows),
        CommandSpec(
            name: "sessions", arguments: "", summary: "list your sessions",
            details: "Lists your sessions (every session when run as root, or with --system by a user polkit lets manage sessions without a password): id, the flow's title, state, when it last changed and the step it is on (\"Step 3 of 4 · Contact details\"). On a terminal each id is cut to the shortest beginning that tells it apart (at least 8 characters), which every command takes; -q and --json give whole ids. The filters --user, --flow, --state and --older-than combine: a session is listed when it passes all of them. --user with a value is the filter; alone, it still chooses your per-user service.",
            options: [
                quietOption,
                OptionSpec("user", value: "UID|NAME", help: "only the sessions of this user (root sees everyone's)"),
                OptionSpec("flow", value: "FLOW", help: "only the sessions of flow FLOW (its id)"),
                OptionSpec(
                    "state", value: "STATE", help: "only the sessions in STATE: editing, review, submitting, submitted, failed"),
                OptionSpec(
                    "older-than", value: "SPAN", help: "only the sessions last changed longer ago than SPAN (30m, 2h, 7d)"),
            ], minArguments: 0, maxArguments: 0, group: .flows),
        CommandSpec(
            name: "close", arguments: "SESSION", summary: "delete a session",
            details: "Deletes SESSION and everything stored for it.",
            options: [], minArguments: 1, maxArguments: 1, group: .flows),
        CommandSpec(
            name: "show", arguments: "SESSION", summary: "show the current step with its fields, values and errors",
            details: "Shows SESSION's current step: the progress line (Step N of M) with a bar, then each field with its id, type, value, options and error. On Review it shows the review; once submitted, the result.",
            options: [], minArguments: 1, maxArguments: 1, group: .steps),
        CommandSpec(
            name: "set", arguments: "SESSION FIELD=VALUE...", summary: "answer fields of the current step",
            details: """
                Stores answers for fields of SESSION's current step and prints the errors the daemon reports.
                Values are typed by the field's type: a toggle takes yes/no (y, true, 1, on / n, false, 0, off); a number \
                takes an integer or a decimal; a choice takes an option id or its label; a multiple choice takes ids \
                separated by commas; FIELD.other=TEXT is the free text of Other. FIELD= (empty) clears an answer. \
                FIELD=- reads the value from standard input, without echo on a terminal: use it for secure fields, \
                whose values on a command line can be seen by other users.
                """,
            options: [], minArguments: 2, maxArguments: nil, group: .steps),
        CommandSpec(
            name: "continue", arguments: "SESSION", summary: "go on to the next step",
            details: "Continues from the current step. When the step has errors the session stays and the errors are printed (exit status 1); otherwise the new step is shown. On the last step of a flow without Review this submits.",
            options: [], minArguments: 1, maxArguments: 1, group: .steps),
        CommandSpec(
            name: "back", arguments: "SESSION", summary: "go back along the path taken",
            details: "Goes back to the previous step on the path actually taken and shows it.",
            options: [], minArguments: 1, maxArguments: 1, group: .steps),
        CommandSpec(
            name: "goto", arguments: "SESSION STEP", summary: "go to a visited step, or to review",
            details: "Goes to STEP, a step already visited (this is Review's Edit), or to review once every step before it is done.",
            options: [], minArguments: 2, maxArguments: 2, group: .steps),
        CommandSpec(
            name: "review", arguments: "SESSION", summary: "show every answer, step by step",
            details: "Shows the review of SESSION: one group per step on the path with its answers, \"Not given\" for empty ones and \"Not finished\" for steps that need attention, then the flow's note.",
            options: [], minArguments: 1, maxArguments: 1, group: .steps),
        CommandSpec(
            name: "answers", arguments: "SESSION", summary: "print the answers on the path",
            details: "Prints the answers on the path, field by field. Secure fields are never sent by the daemon.",
            options: [], minArguments: 1, maxArguments: 1, group: .steps),
        CommandSpec(
            name: "submit", arguments: "SESSION", summary: "submit the answers and wait for the result",
            details: "Runs the flow's submit action and waits for it, with a spinner on a terminal. Exits 0 when submitted; on failure prints the message and exits 1 (the answers are kept and submit may be retried). A flow without Review is submitted by 'flowctl continue' on its last step.",
            options: [], minArguments: 1, maxArguments: 1, group: .steps),
        CommandSpec(
            name: "cancel", arguments: "SESSION", summary: "cancel a running submit",
            details: "Stops a submit that is running; the session returns to Review with its answers.",
            options: [], minArguments: 1, maxArguments: 1, group: .steps),
        CommandSpec(
            name: "watch", arguments: "SESSION", summary: "follow a session's changes live",
            details: "Prints SESSION's signals as they come (property changes, completed steps, announcements, submit results) until it is submitted or removed, or Ctrl-C. With --json, one JSON object per line.",
            options: [], minArguments: 1, maxArguments: 1, group: .steps),
        CommandSpec(
            name: "run", arguments: "FLOW", summary: "fill in a flow step by step in the terminal",
            details: """
                Starts a session of FLOW and walks through it interactively: one step at a time, a prompt for each field, errors shown as they come back, Back, Review with Edit, and Submit. Ctrl-C leaves the session saved; resume it with 'flowctl resume SESSION'.
                With --answers FILE it runs without a person: FILE is JSON, field id → value, as 'flowctl answers' prints it in JSON (or a submission the spool plugin wrote). flowd follows the branches the answers choose and stops at the first step that does not validate: its errors are printed, the exit status is 1, and the session stays for 'flowctl resume'. When every step passed the session waits on Review; --submit sends it, --dry-run closes it and sends nothing.
                """,
            options: [
                localeOption,
                OptionSpec("answers", value: "FILE", help: "drive the session with the answers in FILE (JSON), without prompts"),
                OptionSpec("submit", help: "with --answers: submit once every step passed, and wait for the result"),
                OptionSpec("dry-run", help: "with --answers: check every step on the path, then close the session; submit nothing"),
            ], minArguments: 1, maxArguments: 1, group: .interactive, acceptsJSON: false),
        CommandSpec(
            name: "resume", arguments: "SESSION", summary: "continue a session interactively",
            details: "Continues SESSION interactively where it was left, in the session's language.",
            options: [], minArguments: 1, maxArguments: 1, group: .interactive, acceptsJSON: false),
        CommandSpec(
            name: "plugins", arguments: "", summary: "list the plugins with their status",
            details: "Lists the plugins flowd knows: name, kinds, version, status (loaded, failed or disabled) and the reason it is not loaded.",
            options: [], minArguments: 0, maxArguments: 0, group: .daemon),
        CommandSpec(
            name: "status", arguments: "", summary: "show the daemon's version, uptime, sessions, flows, plugins and limits",
            details: "Shows what flowd reports about itself (GetStatus): its version and uptime, the sessions by state (of every user), the flows served and the files refused with why, the plugins loaded, failed (with why) and disabled, the configured limits, and the state directory with the space it takes.",
            options: [], minArguments: 0, maxArguments: 0, group: .daemon),
        CommandSpec(
            name: "reload", arguments: "", summary: "make flowd re-read its configuration and flows",
            details: "Asks flowd to re-read its configuration and its flow files (as 'systemctl reload flowd' does), then shows what it serves now: the flows, those added and those gone, and each flow file it refused with why (exit 0: refused files do not stop the others). Sessions of a changed flow go on with the new version. When the configuration has an error nothing changes: the error names the file and line (exit 1). Root may reload, and the user who runs a per-user flowd; on the system service (--system) also a user polkit authorizes for org.flowd.Flow1.reload, by default after an administrator's password, which flowctl on a terminal lets polkit ask for (see --no-ask-password).",
            options: [], minArguments: 0, maxArguments: 0, group: .daemon),
        CommandSpec(
            name: "check", arguments: "FILE...", summary: "lint flow files, without the daemon",
            details: "Checks flow files with the daemon's own loader, offline. Prints 'FILE: ok' for a good file and 'FILE: PATH: MESSAGE' for each problem; exits 1 when any file is bad. Without --plugin-dir the file alone is checked: plugin validators and actions it names are assumed present, and are checked when flowd loads the flow, which refuses it if no plugin provides one or its options do not fit ('flowctl flows' then lacks it and the journal says why). With --plugin-dir DIR the plugins in DIR are loaded as flowd loads them (same checks; their code runs in flowctl) and the names and options the flow gives them are checked too; a plugin DIR refuses is reported on standard error.",
            options: [
                OptionSpec("plugin-dir", value: "DIR", help: "check plugin names and options against the plugins in DIR, loaded as flowd loads them")
            ], minArguments: 1, maxArguments: nil, group: .offline, needsDaemon: false),
        CommandSpec(
            name: "help", arguments: "[COMMAND]", summary: "show the help of flowctl or of a command",
            details: "Shows the overview, or the help of COMMAND.",
            options: [], minArguments: 0, maxArguments: 1, group: .offline, acceptsJSON: false, needsDaemon: false),
    ]

    /// The options every command accepts.
    package static let globalOptions: [OptionSpec] = [
        OptionSpec("system", help: "talk to the system service (the system bus)"),
        OptionSpec("user", help: "talk to your per-user service (the session bus; the default)"),
        OptionSpec("address", value: "ADDR", help: "talk to flowd on the bus at the D-Bus address ADDR"),
        OptionSpec("json", help: "print data as JSON (shapes in flowctl(1) and docs/flowctl.md)"),
        OptionSpec("color", value: "WHEN", help: "colour: auto (on a terminal, unless NO_COLOR is set), always, never"),
        OptionSpec("no-ask-password", help: "never ask for a password when the system service needs authentication (polkit); such a call fails instead"),
        OptionSpec("help", short: "h", help: "show help"),
        OptionSpec("version", help: "show flowctl's version"),
    ]

    /// Commands for programs, not listed in the help: `__complete KIND [SESSION [FIELD]]`
    /// prints candidates for shell completion, one per line (completions/flowctl.bash).
    package static let hiddenCommands: [CommandSpec] = [
        CommandSpec(
            name: "__complete", arguments: "KIND [SESSION [FIELD]]", summary: "candidates for shell completion",
            details: "KIND is flows, sessions, fields SESSION, steps SESSION or values SESSION FIELD. Prints nothing when flowd cannot be asked.",
            options: [], minArguments: 1, maxArguments: 3, group: .offline, acceptsJSON: false),
    ]

    /// The command named `name`.
    package static func command(_ name: String) -> CommandSpec? {
        commands.first { $0.name == name } ?? hiddenCommands.first { $0.name == name }
    }

    /// Understands `arguments` (without the program name).
    package static func parse(_ arguments: [String]) throws(CLIError) -> Invocation {
        var global = GlobalOptions()
        var spec: CommandSpec?
        var options: [String: String] = [:]
        var positionals: [String] = []
        var wantsHelp = false
        var wantsVersion = false
        var index = 0
        var onlyPositionals = false

        func commandHint() -> String {
            spec.map { "see 'flowctl \($0.name) --help'" } ?? "see 'flowctl --help'"
        }

        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
                if spec == nil {
                    guard let found = command(argument) else { throw unknownCommand(argument) }
                    spec = found
                } else {
                    positionals.append(argument)
                }
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            // One option, or a bundle of short flags (-qh).
            var names: [(name: String, inline: String?, display: String)] = []
            if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                if let eq = body.firstIndex(of: "=") {
                    names.append((String(body[..<eq]), String(body[body.index(after: eq)...]), "--" + body[..<eq]))
                } else {
                    names.append((String(body), nil, argument))
                }
            } else {
                for letter in argument.dropFirst() {
                    guard let long = (globalOptions + (spec?.options ?? [])).first(where: { $0.short == letter })?.long else {
                        throw .usage("unknown option '-\(letter)' (\(commandHint()))")
                    }
                    names.append((long, nil, "-\(letter)"))
                }
            }
            for (name, inline, display) in names {
                let globalOption = globalOptions.first { $0.long == name }
                let own = spec?.options.first { $0.long == name }
                // A command's own option with a value shadows the global flag of
                // its name when a value is given (`sessions --user alice`); alone,
                // the name is still the global flag (`sessions --user`).
                let valueFollows = inline != nil || (index < arguments.count && !arguments[index].hasPrefix("-"))
                let known = own?.valueName != nil && valueFollows ? own : globalOption ?? own
                let alias = name == "session" ? globalOptions.first { $0.long == "user" } : nil
                guard let option = known ?? alias else {
                    if spec == nil, commands.contains(where: { $0.options.contains { $0.long == name } }) {
                        throw .usage("option \(display) goes after the command (\(commandHint()))")
                    }
                    throw .usage("unknown option '\(display)' (\(commandHint()))")
                }
                var value: String?
                if let valueName = option.valueName {
                    if let inline {
                        value = inline
                    } else if index < arguments.count, !arguments[index].hasPrefix("-") {
                        value = arguments[index]
                        index += 1
                    }
                    guard let value, !value.isEmpty else {
                        throw .usage("option \(display) needs a value \(valueName) (\(commandHint()))")
                    }
                } else if inline != nil {
                    throw .usage("option \(display) takes no value (\(commandHint()))")
                }
                // The command's own option, even where a global one has its name.
                if let own, option == own {
                    options[option.long] = value ?? ""
                    continue
                }
                switch option.long {
                case "help": wantsHelp = true
                case "version": wantsVersion = true
                case "system": try setBus(&global, .system, display)
                case "user": try setBus(&global, .user, display)
                case "address": try setBus(&global, .address(value ?? ""), display)
                case "json": global.json = true
                case "no-ask-password": global.askPassword = false
                case "color":
                    guard let choice = ColorOption(rawValue: value ?? "") else {
                        throw .usage("--color takes auto, always or never, not \(quote(value ?? ""))")
                    }
                    global.color = choice
                default: options[option.long] = value ?? ""
                }
            }
        }

        if wantsHelp { return .help(spec?.name == "help" ? positionals.first : spec?.name) }
        if wantsVersion { return .version }
        guard let spec else { throw .usage("no command given (see 'flowctl --help')") }
        if spec.name == "help" {
            if let topic = positionals.first, command(topic) == nil { throw unknownCommand(topic) }
            guard positionals.count <= 1 else { throw .usage("help takes one command name at most") }
            return .help(positionals.first)
        }
        if global.json && !spec.acceptsJSON {
            throw .usage("'\(spec.name)' is interactive and has no --json output")
        }
        if positionals.count < spec.minArguments {
            let missing = spec.arguments.split(separator: " ").dropFirst(positionals.count).first.map(String.init) ?? "an argument"
            throw .usage("'\(spec.name)' needs \(missing.trimmingEllipsis) (usage: \(synopsis(spec)))")
        }
        if let max = spec.maxArguments, positionals.count > max {
            let extra = positionals[max]
            throw .usage("unexpected argument \(quote(extra)) for '\(spec.name)' (usage: \(synopsis(spec)))")
        }
        return .run(ParsedCommand(spec: spec, global: global, options: options, arguments: positionals))
    }

    /// "flowctl NAME ARGUMENTS", without a trailing space for a command that takes none.
    static func synopsis(_ spec: CommandSpec) -> String {
        spec.arguments.isEmpty ? "flowctl \(spec.name)" : "flowctl \(spec.name) \(spec.arguments)"
    }

    private static func setBus(_ global: inout GlobalOptions, _ bus: BusChoice, _ option: String) throws(CLIError) {
        if let earlier = global.busOption, global.bus != bus {
            if earlier == option { throw .usage("\(option) was given twice; give it once") }
            throw .usage("\(option) conflicts with \(earlier); choose one of --system, --user, --address")
        }
        global.bus = bus
        global.busOption = option
    }

    private static func unknownCommand(_ name: String) -> CLIError {
        if let close = nearest(name, in: commands.map(\.name)) {
            return .usage("unknown command \(quote(name)); did you mean '\(close)'? (see 'flowctl --help')")
        }
        return .usage("unknown command \(quote(name)) (see 'flowctl --help')")
    }

    // MARK: help

    /// `flowctl --help`.
    package static func overview() -> String {
        var text = """
            Usage: flowctl [OPTIONS] COMMAND [ARGUMENTS]
            Drive flowd's multi-step form flows from the command line (D-Bus service \(FlowBus.name)).

            """
        // One column width for every group, so the summaries line up.
        let width = commands.map { ($0.name + " " + $0.arguments).count }.max() ?? 0
        for group in CommandGroup.allCases {
            text += "\n\(group.rawValue):\n"
            for command in commands where command.group == group {
                let synopsis = command.arguments.isEmpty ? command.name : command.name + " " + command.arguments
                text += "  " + padded(synopsis, to: width) + "  " + command.summary + "\n"
            }
        }
        text += "\nOptions:\n" + optionLines(globalOptions)
        text += """

            SESSION is a session id, or a unique beginning of one.
            'flowctl COMMAND --help' shows a command's help; flowctl(1) has the whole manual.
            Exit status: 0 ok, 1 failed, 64 usage, 65 bad value, 66 not found, 69 flowd unavailable,
            77 access denied, 130 interrupted (see flowctl(1)).

            """
        return text
    }

    /// `flowctl COMMAND --help`.
    package static func help(for spec: CommandSpec) -> String {
        var text = "Usage: flowctl [OPTIONS] \(spec.name)"
        if !spec.arguments.isEmpty { text += " " + spec.arguments }
        text += "\n\(spec.summary.capitalizedFirst).\n\n"
        text += wrapped(spec.details, width: 78) + "\n"
        var own = spec.options
        if spec.acceptsJSON && spec.name != "help" {
            own.append(OptionSpec("json", help: "print the result as JSON"))
        }
        if !own.isEmpty {
            text += "\nOptions:\n" + optionLines(own)
        }
        if spec.needsDaemon {
            text += "\nBus: --system, --user (default), --address ADDR. Other options: --color WHEN, -h/--help.\n"
        }
        return text
    }

    private static func optionLines(_ options: [OptionSpec]) -> String {
        let rendered = options.map { option -> (String, String) in
            var left = option.short.map { "-\($0), " } ?? "    "
            left += "--" + option.long
            if let value = option.valueName { left += " " + value }
            return (left, option.help)
        }
        let width = rendered.map { $0.0.count }.max() ?? 0
        return rendered.map { "  " + padded($0.0, to: width) + "  " + $0.1 + "\n" }.joined()
    }
}

extension String {
    fileprivate var capitalizedFirst: String {
        guard let first else { return self }
        return first.uppercased() + dropFirst()
    }

    fileprivate var trimmingEllipsis: String {
        hasSuffix("...") ? String(dropLast(3)) : self
    }
}
