import FlowKit
import FlowdSystem
import Logging
import Synchronization

/// How many log lines each plugin may write: at most ``linesPerWindow``
/// in any ``window``; the rest are dropped and counted, and the count is
/// written once ("suppressed N lines"), so a plugin that logs in a loop
/// cannot flood the journal. Shared by every call of every plugin, in
/// process or isolated (an isolated plugin's lines are fed in here by the
/// host that carries them).
final class PluginLogGate: Sendable {
    /// What a line may do now.
    enum Admission: Equatable {
        /// Write it; first say that `suppressedBefore` lines were dropped
        /// (when more than zero), in a window that has ended.
        case write(suppressedBefore: Int)
        /// Drop it (it is counted).
        case drop
    }

    /// The lines one plugin may write in one ``window``.
    let linesPerWindow: Int
    /// How long a window lasts.
    let window: Duration
    private let clock: @Sendable () -> MonotonicClock.Instant
    private let plugins = Mutex<[String: Window]>([:])

    private struct Window {
        var start: MonotonicClock.Instant
        var written = 0
        var suppressed = 0
        /// Whether this window's drops were already reported once.
        var reported = false
    }

    /// The daemon's limits: 100 lines per plugin in 10 s.
    init(
        linesPerWindow: Int = 100, window: Duration = .seconds(10),
        clock: @escaping @Sendable () -> MonotonicClock.Instant = { MonotonicClock.now() }
    ) {
        self.linesPerWindow = linesPerWindow
        self.window = window
        self.clock = clock
    }

    /// Whether a line of `plugin` may be written now.
    func admit(_ plugin: String) -> Admission {
        let now = clock()
        return plugins.withLock { all in
            var w = all[plugin] ?? Window(start: now)
            var carried = 0
            if now >= w.start.advanced(by: window) {
                carried = w.suppressed
                w = Window(start: now)
            }
            let admission: Admission
            if w.written < linesPerWindow {
                w.written += 1
                admission = .write(suppressedBefore: carried)
            } else {
                w.suppressed += 1
                admission = .drop
            }
            all[plugin] = w
            return admission
        }
    }

    /// The lines of `plugin` dropped and not yet reported, once per window:
    /// what the end of a call reports, so the count is written even when
    /// the plugin logs nothing more. Zero when there are none or this
    /// window's were reported already (the rest are reported with the next
    /// window's first line).
    func takeUnreported(_ plugin: String) -> Int {
        plugins.withLock { all in
            guard var w = all[plugin], w.suppressed > 0, !w.reported else { return 0 }
            let count = w.suppressed
            w.suppressed = 0
            w.reported = true
            all[plugin] = w
            return count
        }
    }
}

/// The log of one plugin call: what the plugin writes through
/// `context.log`, into flowd's log with the call's fields (`FLOWD_PLUGIN`,
/// `FLOWD_CAPABILITY`, `FLOWD_FLOW`, `FLOWD_SESSION`) and the line's own as
/// `PLUGIN_<NAME>`, through the plugin's ``PluginLogGate``. Text is cut to
/// a bounded length, control characters become spaces, and the secure
/// values the call was given are blanked out, should a plugin log one.
struct PluginCallLog: PluginLogSink {
    /// flowd's logger with the call's fields.
    let logger: Logger
    /// The plugin's registered name: the gate's key.
    let plugin: String
    let gate: PluginLogGate
    /// Secure values the call was given (a secure field's value, a
    /// submission's secure answers): never written.
    let secrets: [String]

    /// The most characters of a message, and of a field's value.
    static let messageLimit = 2048
    static let valueLimit = 512
    /// The most fields of one line.
    static let fieldLimit = 16

    func write(_ entry: PluginLogEntry) {
        // A plugin's levels are a subset of the journal's, by the same names.
        let level = LogLevel(name: entry.level.rawValue) ?? .info
        guard logger.isEnabled(level) else { return }
        switch gate.admit(plugin) {
        case .drop: return
        case .write(let suppressed): reportSuppressed(suppressed)
        }
        var metadata = LogMetadata()
        for (name, value) in entry.fields.sorted(by: { $0.key < $1.key }).prefix(Self.fieldLimit) {
            metadata[LogField(normalizing: "PLUGIN_" + name, prefix: "PLUGIN_")] = clean(value.description, Self.valueLimit)
        }
        logger.log(level, "\(clean(entry.message, Self.messageLimit))", metadata: metadata)
    }

    /// Says how many lines the gate dropped and has not said yet: at the
    /// end of each call.
    func finish() {
        reportSuppressed(gate.takeUnreported(plugin))
    }

    private func reportSuppressed(_ count: Int) {
        guard count > 0 else { return }
        logger.warning(
            "plugin \(plugin) logged too much: \(count) \(count == 1 ? "line" : "lines") suppressed (at most \(gate.linesPerWindow) in \(gate.window.description))")
    }

    /// `text` without control characters and secure values, at most
    /// `limit` characters. Secure values are blanked before the cut, so no
    /// prefix of one survives it.
    private func clean(_ text: String, _ limit: Int) -> String {
        var s = String(text.unicodeScalars.prefix(65536))
        for secret in secrets where !secret.isEmpty {
            s = s.replacing(secret, with: "(secure value)")
        }
        return String(s.unicodeScalars.prefix(limit).map { $0.properties.generalCategory == .control ? " " : Character($0) })
    }
}
