import FlowClient
import FlowEngine

/// `flowd-gtk`'s command line.
package struct Options: Sendable, Equatable {
    /// `FLOW`: start this flow at once.
    package var flow: String?
    /// `--resume ID`: open this session.
    package var resume: String?
    /// `--system`, `--user` (the default) or `--address ADDRESS`, as in flowctl.
    package var bus: BusChoice = .user
    /// `--locale TAG`: the language of the window and of a new session.
    package var locale: String?
    package var help = false

    package init() {}

    package static let usage = """
        Usage: flowd-gtk [FLOW | --resume ID] [--system | --user | --address ADDRESS] [--locale TAG]

        Opens flowd's forms in a window: the start page, or FLOW started at once,
        or the unfinished session ID.

          --system           use the system bus (the system service)
          --user             use the session bus (the per-user service; the default)
          --address ADDRESS  use the bus at ADDRESS
          --locale TAG       the language (default: LC_ALL, LC_MESSAGES, LANG)
          --help             show this help

        Exit status: 0 when the window closes (with the form given on the
        command line sent), 1 when it closes with that form unfinished (its
        answers are kept), 69 when flowd could not be reached.
        """

    /// A command line that cannot be used, with the reason in a sentence.
    package struct UsageError: Error, Equatable, CustomStringConvertible {
        package let description: String
    }

    /// Parses the arguments after the program name.
    package static func parse(_ arguments: [String]) throws(UsageError) -> Options {
        var options = Options()
        var busOption: String?
        var rest = arguments[...]
        func value(_ name: String) throws(UsageError) -> String {
            guard let v = rest.popFirst(), !v.hasPrefix("--") else {
                throw UsageError(description: "\(name) needs a value")
            }
            return v
        }
        func setBus(_ bus: BusChoice, _ option: String) throws(UsageError) {
            if let earlier = busOption, earlier != option {
                throw UsageError(description: "\(option) conflicts with \(earlier); choose one of --system, --user, --address")
            }
            busOption = option
            options.bus = bus
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--resume": options.resume = try value(argument)
            case "--system": try setBus(.system, argument)
            case "--user": try setBus(.user, argument)
            case "--address": try setBus(.address(try value(argument)), argument)
            case "--locale":
                let tag = try value(argument)
                guard LocaleFallback.isWellFormed(tag) else {
                    throw UsageError(description: "--locale: '\(tag)' is not a language tag such as de or pt-BR")
                }
                options.locale = tag
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
        return options
    }
}
