// flowd.command: runs a configured program with the submission as JSON on its
// standard input. No shell, a cleaned environment, a timeout.
import FlowKit
import FlowdPluginSupport
import FlowdSystem
import Foundation

/// `flowd.command`.
///
/// Options:
/// - `path` (absolute path, required): the program. It is run directly
///   (`execve`), never through a shell.
/// - `args` (array of strings): its arguments after `argv[0]` (which is `path`).
/// - `timeoutSeconds` (0.1–3600, default 30): then SIGTERM to its process
///   group, and SIGKILL two seconds later. The flow's own `timeoutSeconds`
///   bounds the whole submit as well: the program's limit is cut to what the
///   call's deadline leaves (less the two seconds), so the person is told the
///   program took too long rather than only that the submit timed out.
/// - `includeSecure` (bool, default false): put secure answers in the JSON.
///
/// The program gets an environment of its own, nothing inherited:
/// `PATH=/usr/bin:/bin`, `LANG` from the session locale (`pt-BR` →
/// `pt_BR.UTF-8`, `de` → `de_DE.UTF-8`, unknown → `C.UTF-8`), `FLOWD_LOCALE`
/// (the locale as the session has it), `FLOWD_FLOW`, `FLOWD_SESSION`,
/// `FLOWD_IDEMPOTENCY_KEY` (the same on every attempt to submit the same
/// answers, also after flowd was killed during one: use it to drop a repeat)
/// and `FLOWD_SUBMISSION` (the same value, its older name). Its standard input is the submission JSON; every file
/// descriptor above 2 is closed; signals are reset to their defaults and
/// unblocked; it leads a process group of its own.
///
/// Exit status 0 is success: when the last non-empty line of standard output is
/// a JSON object, it becomes the receipt (keep secrets out of it). Any other
/// status fails the submit with the last non-empty line of standard error as
/// the message the person sees, so write it for people, in `$LANG`. When the
/// program leaves processes behind in its group, they are killed. The program
/// dies with flowd (SIGKILL when the daemon's process ends, however it ends),
/// so a submit interrupted by a crash or `kill -9` is not still running when
/// the person retries it.
struct CommandAction: SubmitAction, DeclaresOptions {
    static let name = "flowd.command"
    static let declaredOptions = [
        PluginOption(name: "path", type: .string, required: true),
        PluginOption(name: "args", type: .strings),
        PluginOption(name: "timeoutSeconds", type: .number),
        PluginOption(name: "includeSecure", type: .bool),
    ]

    func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt {
        let options = try PluginOptions(context.options, capability: Self.name, declared: Self.declaredOptions)
        guard let path = try options.string("path") else {
            throw PluginConfigurationError(Self.name, "option \"path\" is required")
        }
        guard path.hasPrefix("/") else {
            throw PluginConfigurationError(Self.name, "option \"path\" must be an absolute path")
        }
        let arguments = try options.strings("args") ?? []
        // SIGKILL follows SIGTERM after two seconds: leave those and a little more.
        let timeout = context.timeLimit(
            try options.number("timeoutSeconds", in: 0.1...3600) ?? 30, margin: 2.5, floor: 0.1)
        let input = try SubmissionDocument(submission, includeSecure: try options.bool("includeSecure") ?? false)
            .encoded()
        let environment = [
            "PATH": "/usr/bin:/bin",
            "LANG": Self.posixLocale(context.locale),
            "FLOWD_LOCALE": Self.sanitizedLocale(context.locale),
            "FLOWD_FLOW": context.flowID,
            "FLOWD_SESSION": context.sessionID,
            "FLOWD_IDEMPOTENCY_KEY": submission.idempotencyKey,
            "FLOWD_SUBMISSION": submission.idempotencyKey,
        ]

        try Task.checkCancellation()
        let run = try await CommandRun.run(
            path: path, arguments: arguments, environment: environment, input: Array(input), timeout: timeout)
        switch run.ending {
        case .cancelled:
            throw CancellationError()
        case .timedOut:
            throw LocalizedFailure(CommandMessages.timedOut(context.locale))
        case .ended(.signaled(let signal)):
            throw CommandError("\(path) was killed by signal \(signal.rawValue)")
        case .ended(.exited(0)):
            return SubmitReceipt(Self.receipt(fromOutput: run.child.standardOutputBytes))
        case .ended(.exited(let status)):
            if let line = Self.lastLine(run.child.standardErrorBytes) {
                throw LocalizedFailure(line)
            }
            throw CommandError("\(path) exited with status \(status) and said nothing on standard error")
        }
    }

    /// The last non-empty line, trimmed and cut to 500 characters.
    static func lastLine(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let line = text.split(whereSeparator: \.isNewline).reversed()
            .map({ $0.trimmingCharacters(in: .whitespaces) }).first(where: { !$0.isEmpty })
        else { return nil }
        return line.count > 500 ? String(line.prefix(499)) + "…" : line
    }

    /// The receipt values from the last non-empty line of standard output, if
    /// that is a JSON object.
    static func receipt(fromOutput bytes: [UInt8]) -> [String: JSONValue] {
        guard let line = lastLine(bytes), line.hasPrefix("{"),
            let object = try? JSONDecoder().decode([String: JSONValue].self, from: Data(line.utf8))
        else { return [:] }
        return object
    }

    /// Keeps letters, digits, `-` and `_` of a locale tag (it goes into the
    /// environment).
    static func sanitizedLocale(_ locale: String) -> String {
        let kept = locale.unicodeScalars.prefix(35).filter {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_"
        }
        return kept.isEmpty ? "en" : String(String.UnicodeScalarView(kept))
    }

    /// The POSIX locale for a session locale: `pt-BR` → `pt_BR.UTF-8`, a bare
    /// language gets its most common region, anything unknown `C.UTF-8`.
    static func posixLocale(_ locale: String) -> String {
        // Only a well-formed tag is mapped: a language of 2–3 letters, then
        // parts of 2–8 letters or digits.
        let parts = locale.split(separator: "-", omittingEmptySubsequences: false)
            .flatMap { $0.split(separator: "_", omittingEmptySubsequences: false) }.map(String.init)
        func isASCIIAlphanumeric(_ c: Character) -> Bool { c.isASCII && (c.isLetter || c.isNumber) }
        guard let language = parts.first?.lowercased(), (2...3).contains(language.count),
            language.allSatisfy({ $0.isASCII && $0.isLetter }),
            parts.dropFirst().allSatisfy({ (2...8).contains($0.count) && $0.allSatisfy(isASCIIAlphanumeric) })
        else { return "C.UTF-8" }
        if parts.count >= 2 {
            let second = parts[1]
            if second.count == 2, second.allSatisfy(\.isLetter) { return "\(language)_\(second.uppercased()).UTF-8" }
            if second == "Hans" { return "zh_CN.UTF-8" }
            if second == "Hant" { return "zh_TW.UTF-8" }
        }
        let regions = [
            "en": "US", "de": "DE", "fr": "FR", "es": "ES", "it": "IT", "pt": "PT", "ja": "JP", "ko": "KR",
            "zh": "CN", "nl": "NL", "sv": "SE", "da": "DK", "nb": "NO", "fi": "FI", "pl": "PL", "cs": "CZ",
            "ru": "RU", "uk": "UA", "tr": "TR", "el": "GR", "hu": "HU", "ro": "RO",
        ]
        guard let region = regions[language] else { return "C.UTF-8" }
        return "\(language)_\(region).UTF-8"
    }
}

/// A failure of the command that is not meant for the person (they see the
/// daemon's generic message; this goes to the journal).
struct CommandError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = "\(CommandAction.name): \(description)" }
}

enum CommandMessages {
    static let timedOut = LocalizedMessage([
        "en": "This took too long. Please try again later.",
        "de": "Das hat zu lange gedauert. Bitte versuchen Sie es später noch einmal.",
        "fr": "Cela a pris trop de temps. Veuillez réessayer plus tard.",
        "es": "Esto tardó demasiado. Inténtelo de nuevo más tarde.",
        "ja": "時間がかかりすぎました。しばらくしてからもう一度お試しください。",
    ])
}

@_cdecl("flowd_plugin_abi_version")
public func flowdPluginABIVersion() -> UInt32 { FlowKitABI.version }

@_cdecl("flowd_plugin_register")
public func flowdPluginRegister() -> UnsafeMutableRawPointer? {
    PluginRegistration(
        name: "flowd.command", version: "1.0",
        capabilities: [.submitAction(CommandAction.name, CommandAction())]
    ).exportRetained()
}
