import FlowdSystem
import Logging

/// Writes structured entries to the journal with `sd_journal_sendv`.
///
/// Each entry carries `MESSAGE=`, `PRIORITY=`, `SYSLOG_IDENTIFIER=`,
/// `CODE_FILE=`, `CODE_LINE=`, `CODE_FUNC=`, `MESSAGE_ID=` for key events,
/// and every metadata field under its ``LogField`` name. Values are sent
/// as they are: the journal protocol carries newlines and any byte.
///
/// When `sd_journal_sendv` reports an error (a full socket buffer, say), the
/// entry goes to the fallback backend instead of being lost. Note that
/// libsystemd itself drops entries silently when no journald listens at
/// all (`ENOENT`); ``JournalBackend/automatic(hiddenFieldPrefix:)`` therefore
/// picks this backend only when stderr is connected to the journal.
package struct JournalBackend: LogBackend {
    /// Where entries go when `sd_journal_sendv` fails; nil drops them.
    package var fallback: StderrBackend?

    /// A journal backend falling back to `fallback` (stderr by default).
    package init(fallback: StderrBackend? = StderrBackend()) {
        self.fallback = fallback
    }

    package func write(_ record: LogRecord) {
        write(record, sender: Self.send)
    }

    /// ``write(_:)`` with the sending step passed in, so tests can make it fail.
    func write(_ record: LogRecord, sender: ([[UInt8]]) throws(SystemdError) -> Void) {
        do {
            try sender(Self.fields(for: record))
        } catch {
            fallback?.write(record)
        }
    }

    /// The journal fields of `record`, each `NAME=value` as bytes: exactly
    /// what ``write(_:)`` hands to `sd_journal_sendv`.
    package static func fields(for record: LogRecord) -> [[UInt8]] {
        var fields: [[UInt8]] = []
        fields.reserveCapacity(7 + record.metadata.count)
        func add(_ name: String, _ value: String) {
            fields.append(Array("\(name)=".utf8) + Array(value.utf8))
        }
        add("MESSAGE", record.message)
        add("PRIORITY", String(record.level.syslogPriority))
        add("SYSLOG_IDENTIFIER", record.identifier)
        if let messageID = record.messageID { add("MESSAGE_ID", messageID.rawValue) }
        add("CODE_FILE", record.file)
        add("CODE_LINE", String(record.line))
        add("CODE_FUNC", record.function)
        for (field, text) in record.metadata {
            add(field.name, text)
        }
        return fields
    }

    /// Sends one entry made of `fields` (`NAME=value` each) with
    /// `sd_journal_sendv`. A field without `=` or with an empty name is
    /// refused (`EINVAL`).
    package static func send(_ fields: [[UInt8]]) throws(SystemdError) {
        let rc = LibSystemd.journalSend(fields)
        if rc < 0 { throw .journalFailed(Errno(rawValue: -rc)) }
    }
}

extension JournalBackend {
    /// The journal when stderr is connected to it, plain stderr lines
    /// (without `hiddenFieldPrefix` in field names) otherwise.
    ///
    /// systemd sets `$JOURNAL_STREAM` to `device:inode` of the stream it
    /// connects stdout and stderr to; stderr is the journal only when its
    /// own `fstat` matches (the variable is inherited by children whose
    /// stderr may have been redirected since). That is the check
    /// `sd_journal_stream_fd(3)` documents.
    package static func automatic(hiddenFieldPrefix: String = "") -> any LogBackend {
        let stderr = StderrBackend(hiddenFieldPrefix: hiddenFieldPrefix)
        return JournalStream.stderrIsJournal() ? JournalBackend(fallback: stderr) : stderr
    }

    /// Plain stderr lines, with the syslog priority in front when stderr is
    /// the journal: for the last words of a process about to exit.
    ///
    /// journald files an `sd_journal_sendv` entry under a unit by looking the
    /// sender's pid up in /proc, and a process that exits right after sending
    /// is often gone by then: the entry lands without `_SYSTEMD_UNIT=`, so
    /// neither `journalctl -u` nor `systemctl status` shows it. The stream
    /// systemd connected stderr to names the unit from the start.
    package static func lastWords(hiddenFieldPrefix: String = "") -> StderrBackend {
        StderrBackend(hiddenFieldPrefix: hiddenFieldPrefix, levelPrefix: JournalStream.stderrIsJournal())
    }
}

/// The stream systemd connects a service's stderr to: the `$JOURNAL_STREAM`
/// check, and keeping the entries of a short-lived process under its unit.
///
/// journald finds an entry's unit (`_SYSTEMD_UNIT=`, what `journalctl -u`
/// and `systemctl status` select) in the sender's /proc/PID/cgroup when it
/// processes the entry, and caches what it found per PID for a second. An
/// `sd_journal_sendv` entry that it processes after PID 1 reaped the sender
/// gets no unit, and the cache then withholds the unit from that process's
/// stderr lines too: a start that fails at once (an unopenable database)
/// left nothing under the unit, not even its reason. A stream names its unit
/// itself, and journald looks its process up at the stream's first line and
/// keeps that for as long as the stream is connected. So a daemon writes an
/// empty line at start (``attachUnit(stderr:)``, which journald records as
/// nothing) and, before it exits, waits until journald has read its stream
/// (``waitUntilRead(stderr:timeout:)``): then journald looked the process up
/// while it was alive, and every entry it sent, by either way, is the unit's.
package enum JournalStream {
    /// Writes the empty line that makes journald look this process up, when
    /// `stderr` is the journal stream `journalStream` names (`$JOURNAL_STREAM`);
    /// returns whether it did.
    @discardableResult
    package static func attachUnit(
        stderr: Int32 = 2, journalStream: String? = CurrentProcess.environmentVariable("JOURNAL_STREAM")
    ) -> Bool {
        guard isJournal(stderr, journalStream: journalStream) else { return false }
        return (try? FileDescriptor.writeAll(stderr, [UInt8(ascii: "\n")])) != nil
    }

    /// Waits until the reader of socket `stderr` has read everything written
    /// to it, at most `timeout` (journald may be stalled; an exit must not
    /// hang on it). Returns true when all was read, or when `stderr` is no
    /// socket (there is nothing to wait for); false after the timeout.
    @discardableResult
    package static func waitUntilRead(stderr: Int32 = 2, timeout: Duration) -> Bool {
        let deadline = MonotonicClock.now().advanced(by: timeout)
        while true {
            guard let unread = try? FileDescriptor.unreadByPeer(stderr), unread > 0 else { return true }
            if MonotonicClock.now() >= deadline { return false }
            MonotonicClock.sleep(for: .milliseconds(2))
        }
    }

    /// True when this process's stderr is the journal stream systemd set up.
    package static func stderrIsJournal() -> Bool {
        isJournal(2, journalStream: CurrentProcess.environmentVariable("JOURNAL_STREAM"))
    }

    /// True when descriptor `fd` is the stream `journalStream` names.
    static func isJournal(_ fd: Int32, journalStream: String?) -> Bool {
        let status = try? FileDescriptor.status(of: fd)
        return stderrIsJournal(
            environment: journalStream, stderr: status.map { ($0.identity.device, $0.identity.inode) })
    }

    /// True when `environment` (the value of `$JOURNAL_STREAM`, `device:inode`
    /// in decimal) names the same device and inode as `stderr`.
    package static func stderrIsJournal(environment: String?, stderr: (device: UInt64, inode: UInt64)?) -> Bool {
        guard let environment, let stderr else { return false }
        let parts = environment.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        return device == stderr.device && inode == stderr.inode
    }
}
