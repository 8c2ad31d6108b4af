/// One log entry as a backend receives it.
package struct LogRecord: Sendable, Hashable {
    /// How severe the entry is.
    package var level: LogLevel
    /// The finished message text.
    package var message: String
    /// The `MESSAGE_ID=` of a key event, if this is one.
    package var messageID: MessageID?
    /// The logger's metadata merged with the call's (the call's wins).
    package var metadata: LogMetadata
    /// `SYSLOG_IDENTIFIER=`: the program.
    package var identifier: String
    /// The source file of the log call (`#fileID`).
    package var file: String
    /// The function of the log call (`#function`).
    package var function: String
    /// The line of the log call (`#line`).
    package var line: UInt

    /// A record with every part given.
    package init(
        level: LogLevel, message: String, messageID: MessageID? = nil, metadata: LogMetadata = [:],
        identifier: String, file: String, function: String, line: UInt
    ) {
        self.level = level
        self.message = message
        self.messageID = messageID
        self.metadata = metadata
        self.identifier = identifier
        self.file = file
        self.function = function
        self.line = line
    }
}

/// Where log entries go (swift-log's `LogHandler`). Backends are values;
/// writing must be safe from any thread and must never throw (a backend that
/// cannot write falls back or drops the entry).
///
/// This module has the API and two backends: ``StderrBackend`` and
/// ``DiscardingBackend`` (the tests' `CapturingBackend` is in `TestSupport`).
/// The journal backend lives with the rest of systemd (the `Systemd`
/// module), and an application's own message ids and fields live in the
/// application. A library takes a ``Logger`` from its caller and never
/// makes its own.
package protocol LogBackend: Sendable {
    func write(_ record: LogRecord)
}

/// A value-type logger: a minimum level, metadata attached to every entry,
/// and a backend. Copy it and add metadata to make a logger for one
/// session or plugin.
///
/// Messages are ``LogMessage``s and metadata values are ``LogValue``s, so
/// values that may be secret (answers) cannot be logged by accident; see
/// ``LogValue``.
package struct Logger: Sendable {
    /// `SYSLOG_IDENTIFIER=` and the stderr prefix.
    package var identifier: String
    /// Entries below this level are dropped before their message is built.
    package var minimumLevel: LogLevel
    /// Fields added to every entry.
    package var metadata: LogMetadata
    /// Where entries go.
    package var backend: any LogBackend

    /// A logger writing entries at `minimumLevel` or above to `backend`.
    package init(identifier: String, minimumLevel: LogLevel = .info, metadata: LogMetadata = [:], backend: any LogBackend) {
        self.identifier = identifier
        self.minimumLevel = minimumLevel
        self.metadata = metadata
        self.backend = backend
    }

    /// A logger that writes nothing (for a client that has nobody to tell).
    package static let discard = Logger(identifier: "", minimumLevel: .critical, backend: DiscardingBackend())

    /// A logger writing plain lines to stderr (``StderrBackend``).
    package static func standardError(identifier: String, minimumLevel: LogLevel = .info) -> Logger {
        Logger(identifier: identifier, minimumLevel: minimumLevel, backend: StderrBackend())
    }

    /// This logger with `field` set on every entry.
    package func with(_ field: LogField, _ value: some LogValue) -> Logger {
        var copy = self
        copy.metadata[field] = value
        return copy
    }

    /// True when entries at `level` are written.
    package func isEnabled(_ level: LogLevel) -> Bool {
        level >= minimumLevel
    }

    /// Writes an entry at `level`. `message` and `metadata` are only
    /// evaluated when the level is enabled.
    package func log(
        _ level: LogLevel, _ message: @autoclosure () -> LogMessage, id messageID: MessageID? = nil,
        metadata: @autoclosure () -> LogMetadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        guard isEnabled(level) else { return }
        let callMetadata = metadata()
        backend.write(
            LogRecord(
                level: level, message: message().text, messageID: messageID,
                metadata: callMetadata.isEmpty ? self.metadata : self.metadata.merging(callMetadata),
                identifier: identifier, file: file, function: function, line: line))
    }

    /// Writes a ``LogLevel/debug`` entry.
    package func debug(
        _ message: @autoclosure () -> LogMessage, id messageID: MessageID? = nil,
        metadata: @autoclosure () -> LogMetadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(.debug, message(), id: messageID, metadata: metadata(), file: file, function: function, line: line)
    }

    /// Writes an ``LogLevel/info`` entry.
    package func info(
        _ message: @autoclosure () -> LogMessage, id messageID: MessageID? = nil,
        metadata: @autoclosure () -> LogMetadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(.info, message(), id: messageID, metadata: metadata(), file: file, function: function, line: line)
    }

    /// Writes a ``LogLevel/notice`` entry.
    package func notice(
        _ message: @autoclosure () -> LogMessage, id messageID: MessageID? = nil,
        metadata: @autoclosure () -> LogMetadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(.notice, message(), id: messageID, metadata: metadata(), file: file, function: function, line: line)
    }

    /// Writes a ``LogLevel/warning`` entry.
    package func warning(
        _ message: @autoclosure () -> LogMessage, id messageID: MessageID? = nil,
        metadata: @autoclosure () -> LogMetadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(.warning, message(), id: messageID, metadata: metadata(), file: file, function: function, line: line)
    }

    /// Writes an ``LogLevel/error`` entry.
    package func error(
        _ message: @autoclosure () -> LogMessage, id messageID: MessageID? = nil,
        metadata: @autoclosure () -> LogMetadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(.error, message(), id: messageID, metadata: metadata(), file: file, function: function, line: line)
    }

    /// Writes a ``LogLevel/critical`` entry.
    package func critical(
        _ message: @autoclosure () -> LogMessage, id messageID: MessageID? = nil,
        metadata: @autoclosure () -> LogMetadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(.critical, message(), id: messageID, metadata: metadata(), file: file, function: function, line: line)
    }
}
