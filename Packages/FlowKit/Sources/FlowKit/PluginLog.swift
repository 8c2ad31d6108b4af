/// A plugin's log (since SDK 1.1), reached from every call's context:
///
/// ```swift
/// context.log.info("looked up \(count) records", ["server": "crm.example", "status": 200])
/// ```
///
/// flowd writes each line to its journal with the plugin's name in
/// `FLOWD_PLUGIN` (the field flowd's own lines about the plugin carry, so
/// `journalctl FLOWD_PLUGIN=example` shows both), the capability, the flow
/// and the session, and each of the line's fields as `PLUGIN_<NAME>`
/// (`PLUGIN_SERVER=crm.example`). Debug lines are written only when flowd
/// runs with `--verbose`. A plugin that logs too much is cut off for a
/// while (flowd then writes how many lines it suppressed), so a loop that
/// logs cannot flood the journal.
///
/// The shape keeps answers out by accident: the message is text built from
/// strings, numbers, flags, durations and errors only (an ``AnswerValue``,
/// a dictionary of answers or a ``Submission`` does not interpolate), and
/// fields are ``PluginLogValue``s, which have no way to be made from an
/// answer. Never log a secure answer (``Submission/secureAnswers``, or the
/// value of a `secure` field) or what a person typed; flowd also blanks
/// the secure values it passed to the call out of the call's lines, as a
/// last defence.
public struct PluginLogger: Sendable {
    /// Where the lines go; nil drops them.
    public let sink: (any PluginLogSink)?

    /// A logger writing to `sink` (a host's).
    public init(sink: (any PluginLogSink)?) {
        self.sink = sink
    }

    /// A logger that drops every line: what a context made by
    /// ``PluginContext/init(flowID:sessionID:locale:callerUID:answers:options:stateDirectory:)``
    /// has until a host sets its own.
    public static let discarding = PluginLogger(sink: nil)

    /// Writes a line at `level`.
    public func log(_ level: PluginLogLevel, _ message: PluginLogMessage, _ fields: [String: PluginLogValue] = [:]) {
        sink?.write(PluginLogEntry(level: level, message: message.text, fields: fields))
    }

    /// Details for finding a problem: written only when flowd runs with `--verbose`.
    public func debug(_ message: PluginLogMessage, _ fields: [String: PluginLogValue] = [:]) {
        log(.debug, message, fields)
    }

    /// Something that happened as expected: a record written, a request sent.
    public func info(_ message: PluginLogMessage, _ fields: [String: PluginLogValue] = [:]) {
        log(.info, message, fields)
    }

    /// Something an administrator may want to know: a fallback taken.
    public func notice(_ message: PluginLogMessage, _ fields: [String: PluginLogValue] = [:]) {
        log(.notice, message, fields)
    }

    /// Something went wrong but the call could go on: a retry, a slow server.
    public func warning(_ message: PluginLogMessage, _ fields: [String: PluginLogValue] = [:]) {
        log(.warning, message, fields)
    }

    /// The call failed: say why, for the administrator, in English.
    public func error(_ message: PluginLogMessage, _ fields: [String: PluginLogValue] = [:]) {
        log(.error, message, fields)
    }
}

/// Where a ``PluginLogger`` sends its lines: flowd's journal, the helper
/// process of an isolated plugin (which carries them to flowd), or a
/// test's recorder (FlowKitTesting's `TestLog`). Called on the plugin's
/// thread, possibly from several calls at once.
public protocol PluginLogSink: Sendable {
    func write(_ entry: PluginLogEntry)
}

/// How much a plugin's log line matters: the journal's priorities, from
/// least to most.
public enum PluginLogLevel: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    case debug, info, notice, warning, error

    public static func < (lhs: PluginLogLevel, rhs: PluginLogLevel) -> Bool {
        allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
    }
}

/// One line a plugin logged: plain values, so that a host can carry it
/// across a process boundary as it is.
public struct PluginLogEntry: Sendable, Hashable, Codable {
    /// How much the line matters.
    public var level: PluginLogLevel
    /// The text, in English, for the administrator.
    public var message: String
    /// Named values on the line (`["status": 503]`). Names are 1 to 32
    /// letters, digits, `_` or `-`; the journal gets them as `PLUGIN_<NAME>`.
    public var fields: [String: PluginLogValue]

    public init(level: PluginLogLevel, message: String, fields: [String: PluginLogValue] = [:]) {
        self.level = level
        self.message = message
        self.fields = fields
    }
}

/// The value of a field on a plugin's log line: text, a whole number, a
/// number or a flag. There is deliberately no initializer from an
/// ``AnswerValue``: what a person answered does not belong in a log.
public enum PluginLogValue: Sendable, Hashable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral
{
    case text(String)
    case integer(Int64)
    case number(Double)
    case bool(Bool)

    public init(stringLiteral value: String) { self = .text(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }

    /// The value as the journal stores it: `503`, `0.25`, `true`, the text.
    public var description: String {
        switch self {
        case .text(let s): return s
        case .integer(let i): return String(i)
        case .number(let d): return String(d)
        case .bool(let b): return b ? "true" : "false"
        }
    }
}

/// The message of a plugin's log line: a string literal, with
/// interpolations of text, numbers, flags, durations, log values and errors
/// only. Anything else — an ``AnswerValue``, the context's answers, a
/// ``Submission`` — does not compile, so an answer is never written by
/// accident. (A plain `String` variable goes in as `"\(text)"`.)
public struct PluginLogMessage: Sendable, ExpressibleByStringInterpolation {
    /// The finished text.
    public let text: String

    public init(stringLiteral value: String) {
        text = value
    }

    public init(stringInterpolation: StringInterpolation) {
        text = stringInterpolation.text
    }

    /// What a message may interpolate.
    public struct StringInterpolation: StringInterpolationProtocol {
        var text = ""

        public init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + 16 * interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) { text += literal }
        public mutating func appendInterpolation(_ value: String) { text += value }
        public mutating func appendInterpolation(_ value: Substring) { text += value }
        public mutating func appendInterpolation(_ value: some BinaryInteger) { text += String(value) }
        public mutating func appendInterpolation(_ value: Double) { text += String(value) }
        public mutating func appendInterpolation(_ value: Bool) { text += value ? "true" : "false" }
        public mutating func appendInterpolation(_ value: Duration) { text += value.description }
        public mutating func appendInterpolation(_ value: PluginLogValue) { text += value.description }
        /// An error as it describes itself (`ExplainedFailure` gives its detail).
        public mutating func appendInterpolation(_ error: any Error) { text += String(describing: error) }
    }
}
