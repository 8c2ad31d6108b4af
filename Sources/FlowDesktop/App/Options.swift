import FlowEngine

/// `flowd-gtk`'s command line.
package struct Options: Sendable, Equatable {
    /// `FLOW`: start this flow at once.
    package var flow: String?
    /// `--resume ID`: open this session.
    package var resume: String?
    /// `--system`: the system bus instead of the session bus.
    package var systemBus = false
    /// `--address ADDRESS`: a private bus.
    package var address: String?
    /// `--locale TAG`: the language of the window and of a new session.
    package var locale: String?
    /// `--fixture NAME`: show built-in example screens instead of flowd's (tests, screenshots).
    package var fixture: String?
    package var listFixtures = false
    package var help = false

    package init() {}

    package static let usage = """
        Usage: flowd-gtk [FLOW | --resume ID] [--system | --address ADDRESS] [--locale TAG]
               flowd-gtk --fixture NAME [--locale TAG]
               flowd-gtk --list-fixtures

        Opens flowd's forms in a window: the start page, or FLOW started at once,
        or the unfinished session ID.

          --system           use the system bus (default: the session bus)
          --address ADDRESS  use the bus at ADDRESS
          --locale TAG       the language (default: LC_ALL, LC_MESSAGES, LANG)
          --fixture NAME     show built-in example screens (see --list-fixtures)
          --help             show this help
        """

    /// A command line that cannot be used, with the reason in a sentence.
    package struct UsageError: Error, Equatable, CustomStringConvertible {
        package let description: String
    }

    /// Parses the arguments after the program name.
    package static func parse(_ arguments: [String]) throws(UsageError) -> Options {
        var options = Options()
        var rest = arguments[...]
        func value(_ name: String) throws(UsageError) -> String {
            guard let v = rest.popFirst(), !v.hasPrefix("--") else {
                throw UsageError(description: "\(name) needs a value")
            }
            return v
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--resume": options.resume = try value(argument)
            case "--system": options.systemBus = true
            case "--address": options.address = try value(argument)
            case "--locale":
                let tag = try value(argument)
                guard LocaleFallback.isWellFormed(tag) else {
                    throw UsageError(description: "--locale: '\(tag)' is not a language tag such as de or pt-BR")
                }
                options.locale = tag
            case "--fixture": options.fixture = try value(argument)
            case "--list-fixtures": options.listFixtures = true
            case "--help", "-h": options.help = true
            default:
                if argument.hasPrefix("-") { throw UsageError(description: "unknown option \(argument)") }
                if options.flow != nil { throw UsageError(description: "only one FLOW can be opened, got a second: \(argument)") }
                options.flow = argument
            }
        }
        if options.flow != nil, options.resume != nil {
            throw UsageError(description: "give either FLOW or --resume ID, not both")
        }
        if options.systemBus, options.address != nil {
            throw UsageError(description: "give either --system or --address, not both")
        }
        return options
    }
}
