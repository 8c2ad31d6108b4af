import FlowProtocol
import Logging
import Reactor
import Systemd

/// What the daemon tells systemd, and its timers: `READY=1` once it serves,
/// `STATUS=` with live counts, `WATCHDOG=1`, `RELOADING=1` around a reload,
/// `STOPPING=1`, and idle expiry.
///
/// It gets what it needs as values: the idle timeout, where the live counts
/// come from and what expiry does. It holds no other part of the daemon.
final class Lifecycle: DaemonComponent {
    /// The live counts of the status line.
    struct Status: Equatable {
        var version: String
        var sessions: Int
        var flows: Int
        /// Flow files refused at the last load.
        var refusedFlows: Int
        /// Plugins loaded (a failed one is not).
        var plugins: Int
        /// Plugins that failed to load.
        var failedPlugins: Int
        var submits: Int

        /// The `STATUS=` text: `flowd 0.1.1: 3 sessions, 5 flows (1 refused),
        /// 4 plugins (1 failed)`, then the running submits if any.
        var text: String {
            var text = "flowd \(version): \(sessions) sessions, \(flows) flows"
            if refusedFlows > 0 { text += " (\(refusedFlows) refused)" }
            text += ", \(plugins) plugins"
            if failedPlugins > 0 { text += " (\(failedPlugins) failed)" }
            if submits > 0 { text += "; \(submits) submits running" }
            return text
        }
    }

    let loop: any EventLoopProtocol
    let logger: Logger
    private let notifier = SystemdNotifier()
    private let idleTimeout: Duration
    private let status: () -> Status
    /// Deletes the idle sessions; returns how many went.
    private let expire: () -> Int
    private var timers: [TimerHandle] = []
    private var lastStatus = ""

    init(
        loop: any EventLoopProtocol, logger: Logger, idleTimeout: Duration, status: @escaping () -> Status,
        expire: @escaping () -> Int
    ) {
        self.loop = loop
        self.logger = logger
        self.idleTimeout = idleTimeout
        self.status = status
        self.expire = expire
    }

    /// The name is owned: tell systemd, and start the timers.
    func start() {
        notify { try $0.ready() }
        let now = status()
        logger.notice(
            "serving \(now.sessions) sessions and \(now.flows) flows on \(FlowBus.name.rawValue)", id: .daemonStarted)
        updateStatus()
        let lifecycle = LoopBound(self, loop: loop)
        do {
            if let interval = try notifier.watchdogInterval() {
                let half = interval / 2
                timers.append(loop.schedule(after: half, repeating: half) { lifecycle.value.notify { try $0.watchdog() } })
            }
        } catch {
            logger.error("WATCHDOG_USEC is malformed: \(error.description); not sending watchdog pings")
        }
        timers.append(loop.schedule(after: .seconds(2), repeating: .seconds(2)) { lifecycle.value.updateStatus() })
        // Look for idle sessions twice per idle time, at most once a minute
        // and at least once a second.
        let every = min(max(idleTimeout / 2, .seconds(1)), .seconds(60))
        timers.append(loop.schedule(after: .seconds(1), repeating: every) { lifecycle.value.expireIdleSessions() })
    }

    /// `STOPPING=1`; the timers stop.
    func stop() {
        notify { try $0.stopping() }
        for timer in timers { timer.cancel() }
        timers.removeAll()
    }

    /// Runs `reload` between `RELOADING=1` and `READY=1`, and sends the
    /// status it leaves.
    func reloading<T>(_ reload: () -> T) -> T {
        notify { try $0.reloading() }
        defer {
            notify { try $0.ready() }
            updateStatus()
        }
        return reload()
    }

    private func expireIdleSessions() {
        if expire() > 0 { updateStatus() }
    }

    /// `STATUS=` with live counts, sent when it changed.
    private func updateStatus() {
        let text = status().text
        guard text != lastStatus else { return }
        lastStatus = text
        notify { try $0.status(text) }
    }

    /// Sends one notification; a failure is logged, never fatal.
    private func notify(_ send: (SystemdNotifier) throws -> Bool) {
        do {
            _ = try send(notifier)
        } catch {
            logger.warning("cannot notify systemd: \(String(describing: error))")
        }
    }
}
