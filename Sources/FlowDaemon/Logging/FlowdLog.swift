import Logging
import Systemd

/// flowd's own words in the journal: its `MESSAGE_ID`s and `FLOWD_*` fields,
/// and the logger the daemon starts with.

extension MessageID {
    // Generated once from /proc/sys/kernel/random/uuid; fixed forever. A new
    // kind of event gets a new id, never a reused one.

    /// A session was started (`StartSession`).
    package static let sessionStarted = MessageID(constant: "995f4e09ab32461ebef85cbb74068c45")
    /// A step was completed (`Continue` moved on).
    package static let stepCompleted = MessageID(constant: "5bf3bf7dec6f4958ae531c92e149be6c")
    /// A session was submitted successfully.
    package static let submitted = MessageID(constant: "783a16ba0f344c09bb5903b67606f38e")
    /// A submit action failed (or was interrupted by a restart).
    package static let submitFailed = MessageID(constant: "3550d87f29a447688ec07bdacf7f7164")
    /// A flow definition was refused at load.
    package static let flowRefused = MessageID(constant: "f346aa2184a54dc7a67c32c0c4e70457")
    /// A plugin was refused at load (ABI, ownership, mode, dlopen error).
    package static let pluginRefused = MessageID(constant: "2948f21f9e3f47b7a6cdad4ba6fd94fe")
    /// The crash guard disabled a plugin that was running when the daemon died.
    package static let pluginCrashed = MessageID(constant: "c126ad6741fd4a429855a3da02f6e5b8")
    /// The daemon started and is ready.
    package static let daemonStarted = MessageID(constant: "8f5ff471507e4dcda52d69e21fadea88")
    /// The daemon is stopping.
    package static let daemonStopping = MessageID(constant: "638b11f959d541dca7e58482982738a7")
    /// Sessions untouched for the idle time were removed.
    package static let sessionsExpired = MessageID(constant: "666cebdff9474bef9f5748ac67fade91")
    /// A limit refused a caller (sessions per user, sessions in all).
    package static let limitReached = MessageID(constant: "d8c9948098dc411b8c1f88ac55fd1485")
    /// A reload found an error in the configuration; the running one stays.
    package static let reloadFailed = MessageID(constant: "9524c4014e544befa3270898d07d6981")
    /// An administrative call was allowed: `Reload`, another user's session
    /// (read, changed or closed), a flow that names a polkit action; by root
    /// or by polkit's yes.
    package static let administrativeAccess = MessageID(constant: "bfd73dc32cdf4e0e9507311e6d4d8a15")
    /// A call that needed authorization was refused (polkit's no, a
    /// challenge, polkit missing or slow, or no polkit to ask).
    package static let authorizationRefused = MessageID(constant: "a85c241363b84631afb4644fae70f904")

    /// Every id above, for catalogs and tests.
    package static let flowd: [MessageID] = [
        sessionStarted, stepCompleted, submitted, submitFailed, flowRefused, pluginRefused, pluginCrashed,
        daemonStarted, daemonStopping, sessionsExpired, limitReached, reloadFailed, administrativeAccess,
        authorizationRefused,
    ]
}

extension LogField {
    /// `FLOWD_SESSION`: a session id.
    package static let session = LogField(constant: "FLOWD_SESSION")
    /// `FLOWD_FLOW`: a flow id.
    package static let flow = LogField(constant: "FLOWD_FLOW")
    /// `FLOWD_PLUGIN`: a plugin's registered name (`flowd.spool`), or the
    /// file name without `.so` of one that never registered. Never a
    /// capability's name: that is ``capability``.
    package static let plugin = LogField(constant: "FLOWD_PLUGIN")
    /// `FLOWD_CAPABILITY`: the capability a call was to (`test.even`).
    package static let capability = LogField(constant: "FLOWD_CAPABILITY")
    /// `FLOWD_STEP`: a step id (never an answer).
    package static let step = LogField(constant: "FLOWD_STEP")
    /// `FLOWD_FIELD`: a field id (never its value).
    package static let field = LogField(constant: "FLOWD_FIELD")
    /// `FLOWD_UID`: the uid of a caller or session owner.
    package static let uid = LogField(constant: "FLOWD_UID")
    /// `FLOWD_SENDER`: a D-Bus unique name.
    package static let sender = LogField(constant: "FLOWD_SENDER")
    /// `FLOWD_PATH`: a file path (a flow file, a plugin, the database).
    package static let path = LogField(constant: "FLOWD_PATH")
    /// `FLOWD_ERROR`: one of the contract's error names (`FlowErrorName.errorName`).
    package static let error = LogField(constant: "FLOWD_ERROR")
    /// `FLOWD_ACTION`: the polkit action a call was authorized or refused under.
    package static let action = LogField(constant: "FLOWD_ACTION")

    /// Every field above, for tests.
    package static let flowd: [LogField] = [
        session, flow, plugin, capability, step, field, uid, sender, path, error, action,
    ]
}

/// The daemon's logger.
enum FlowdLog {
    /// The prefix of flowd's own fields, left out of stderr lines (`session=`, not `flowd_session=`).
    static let fieldPrefix = "FLOWD_"

    /// `flowd`'s logger: the journal when stderr is connected to it, stderr
    /// lines otherwise; debug entries only when `verbose`.
    static func makeLogger(verbose: Bool) -> Logger {
        Logger(
            identifier: "flowd", minimumLevel: verbose ? .debug : .info,
            backend: JournalBackend.automatic(hiddenFieldPrefix: fieldPrefix))
    }

    /// The logger for why flowd exits (start-up failures): stderr, which the
    /// journal files under flowd.service at the entry's priority even when
    /// the process is gone before journald reads it (see
    /// ``JournalBackend/lastWords(hiddenFieldPrefix:)``), so the reason shows
    /// in `journalctl -u flowd -p err` and `systemctl status flowd`.
    static func makeExitLogger() -> Logger {
        Logger(identifier: "flowd", backend: JournalBackend.lastWords(hiddenFieldPrefix: fieldPrefix))
    }

    /// The journal's line about the configuration files read.
    static func filesRead(_ files: [String]) -> String {
        files.isEmpty
            ? "configuration read from no file (built-in defaults and the command line)"
            : "configuration read from \(files.joined(separator: ", "))"
    }
}
