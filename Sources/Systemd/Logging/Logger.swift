/// One log entry as a backend receives it.
public struct LogRecord: Sendable, Hashable {
    /// How severe the entry is.
    public var level: LogLevel
    /// The finished message text.
    public var message: String
    /// The `MESSAGE_ID=` of a key event, if this is one.
    public var messageID: MessageID?
    /// The logger's metadata merged with the call's (the call's wins).
    public var metadata: LogMetadata
    /// `SYSLOG_IDENTIFIER=`, normally `flowd`.
    public var identifier: String
    /// The source file of the log call (`#fileID`).
    public var file: String
    /// The function of the log call (`#function`).
    public var function: String
    /// The line of the log call (`#line`).
    public var line: UInt

    /// A record with every part given.
    public init(
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

/// Where log entries go. Backends are values; writing must be safe from
/// any thread and must never throw (a backend that cannot write falls back
/// or drops the entry).
public protocol LogBackend: Sendable {
    func write(_ record: LogRecord)
}

/// A value-type logger: a minimum level, metadata attached to every entry,
/// and a backend. Copy it and add metadata to make a logger for one
/// session or plugin.
///
/// Messages are ``LogMessage``s and metadata values are ``LogValue``s, so
/// values that may be secret (answers) cannot be logged by accident; see
/// ``LogValue``.
public struct Logger: Sendable {
    /// `SYSLOG_IDENTIFIER=` and the stderr prefix.
    public var identifier: String
    /// Entries below this level are dropped before their message is built.
    public var minimumLevel: LogLevel
    /// Fields added to every entry.
    public var metadata: LogMetadata
    /// Where entries go.
    public var backend: any LogBackend

    /// A logger writing entries at `minimumLevel` or above to `backend`.
    public init(identifier: String, minimumLevel: LogLevel = .info, metadata: LogMetadata = [:], backend: any LogBackend) {
        self.identifier = identifier
        self.minimumLevel = minimumLevel
        self.metadata = metadata
        self.backend = backend
    }

    /// A logger whose backend is chosen as ``automaticBackend()`` chooses.
    public static func automatic(identifier: String, minimumLevel: LogLevel = .info) -> Logger {
        Logger(identifier: identifier, minimumLevel: minimumLevel, backend: automaticBackend())
    }

    /// The journal when stderr is connected to it, plain stderr lines otherwise.
    ///
    /// systemd sets `$JOURNAL_STREAM` to `device:inode` of the stream it
    /// connects stdout and stderr to; stderr is the journal only when its
    /// own `fstat` matches (the variable is inherited by children whose
    /// stderr may have been redirected since). That is the check
    /// `sd_journal_stream_fd(3)` documents.
    public static func automaticBackend() -> any LogBackend {
        if JournalStream.stderrIsJournal(
            environment: LibSystemd.environment("JOURNAL_STREAM"), stderr: LibSystemd.deviceAndInode(of: 2))
        {
            return JournalBackend()
        }
        return StderrBackend()
    }

    /// This logger with `field` set on every entry.
    public func with(_ field: LogField, _ value: some LogValue) -> Logger {
        var copy = self
        copy.metadata[field] = value
        return copy
    }

    /// True when entries at `level` are written.
    public func isEnabled(_ level: LogLevel) -> Bool {
        level >= minimumLevel
    }

    /// Writes an entry at `level`. `message` and `metadata` are only
    /// evaluated when the level is enabled.
    public func log(
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
    public func debug(
        _ message: @autoclosure () -> LogMessage, id messageID: MessageID? = nil,
        metadata: @autoclosure () -> LogMetadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(.debug, message(), id: messageID, metadata: metadata(), file: file, function: function, line: line)
    }

    /// Writes an ``LogLevel/info`` entry.
    public func info(
        _ message: @autoclosure () -> LogMessage, id messageID: MessageID? = nil,
        metadata: @autoclosure () -> LogMetadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(.info, message(), id: messageID, metadata: metadata(), file: file, function: function, line: line)
    }

    /// Writes a ``LogLevel/notice`` entry.
    public func notice(
        _ message: @autoclosure () -> LogMessage, id messageID: MessageID? = nil,
        metadata: @autoclosure () -> LogMetadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(.notice, message(), id: messageID, metadata: metadata(), file: file, function: function, line: line)
    }

    /// Writes a ``LogLevel/warning`` entry.
    public func warning(
        _ message: @autoclosure () -> LogMessage, id messageID: MessageID? = nil,
        metadata: @autoclosure () -> LogMetadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(.warning, message(), id: messageID, metadata: metadata(), file: file, function: function, line: line)
    }

    /// Writes an ``LogLevel/error`` entry.
    public func error(
        _ message: @autoclosure () -> LogMessage, id messageID: MessageID? = nil,
        metadata: @autoclosure () -> LogMetadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(.error, message(), id: messageID, metadata: metadata(), file: file, function: function, line: line)
    }

    /// Writes a ``LogLevel/critical`` entry.
    public func critical(
        _ message: @autoclosure () -> LogMessage, id messageID: MessageID? = nil,
        metadata: @autoclosure () -> LogMetadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(.critical, message(), id: messageID, metadata: metadata(), file: file, function: function, line: line)
    }
}

/// The `$JOURNAL_STREAM` check.
public enum JournalStream {
    /// True when `environment` (the value of `$JOURNAL_STREAM`, `device:inode`
    /// in decimal) names the same device and inode as `stderr`.
    public static func stderrIsJournal(environment: String?, stderr: (device: UInt64, inode: UInt64)?) -> Bool {
        guard let environment, let stderr else { return false }
        let parts = environment.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        return device == stderr.device && inode == stderr.inode
    }
}
