import FlowProtocol
import FlowdSystem
import Logging
import Reactor
import Systemd

/// What the daemon tells systemd and does on signals and timers: `READY=1`,
/// `STATUS=`, `WATCHDOG=1`, `STOPPING=1`, `RELOADING=1`, idle expiry.
///
/// Loop-confined: every method runs on the event loop thread (signal and timer
/// handlers are called there).
final class Lifecycle: @unchecked Sendable {
    let loop: EventLoop
    let logger: Logger
    private let notifier = SystemdNotifier()
    private var front: BusFrontEnd?
    private var loader: ConfigurationLoader?
    private var options = DaemonOptions()
    private var pluginCount = 0
    private var timers: [TimerHandle] = []
    private var lastStatus = ""
    /// Runs on the loop just before it stops.
    var beforeStop: (() -> Void)?
    /// What `DaemonMain` returns once the loop stops.
    private(set) var exitStatus: SysExits = .ok

    init(loop: EventLoop, logger: Logger) {
        self.loop = loop
        self.logger = logger
    }

    func configure(front: BusFrontEnd, loader: ConfigurationLoader, options: DaemonOptions, plugins: Int) {
        self.front = front
        self.loader = loader
        self.options = options
        self.pluginCount = plugins
    }

    /// The name is owned: tell systemd, and start the timers.
    func started(sessions: Int, flows: Int) {
        notify(.ready)
        logger.notice(
            "serving \(sessions) sessions and \(flows) flows on \(FlowBus.name.rawValue)", id: .daemonStarted)
        updateStatus()
        do {
            if let interval = try notifier.watchdogInterval() {
                let half = interval / 2
                timers.append(loop.schedule(after: half, repeating: half) { [weak self] in self?.notify(.watchdog) })
            }
        } catch {
            logger.error("WATCHDOG_USEC is malformed: \(error.description); not sending watchdog pings")
        }
        timers.append(loop.schedule(after: .seconds(2), repeating: .seconds(2)) { [weak self] in self?.updateStatus() })
        // Look for idle sessions twice per idle time, at most once a minute
        // and at least once a second.
        let idle = front?.service.assumeIsolated { $0.configuration.limits.idleTimeout } ?? .seconds(120)
        let every = min(max(idle / 2, .seconds(1)), .seconds(60))
        timers.append(loop.schedule(after: .seconds(1), repeating: every) { [weak self] in self?.expire() })
    }

    /// Start-up failed: log why, stop the loop and exit with `status`.
    func fail(_ status: SysExits, _ reason: LogMessage) {
        exitStatus = DaemonMain.exit(status, reason)
        loop.stop()
    }

    /// SIGTERM or SIGINT: a clean stop.
    func stop(signal: Signal) {
        notify(.stopping)
        logger.notice("stopping on \(signal.description)")
        for timer in timers { timer.cancel() }
        beforeStop?()
        loop.stop()
    }

    /// The bus connection is gone: nothing more can be served.
    func busLost() {
        loop.execute { [self] in
            logger.error("lost the connection to the bus; stopping")
            exitStatus = .failure
            notify(.stopping)
            beforeStop?()
            loop.stop()
        }
    }

    /// SIGHUP.
    func reload() {
        _ = reloadNow()
    }

    /// Re-reads the configuration and the flows (SIGHUP, `Reload`). A bad
    /// configuration leaves the running one in place.
    func reloadNow() -> Result<Void, FlowdError> {
        guard let front, let loader else { return .failure(FlowdError(.invalidState, "flowd is still starting")) }
        notify(.reloading)
        defer { notify(.ready) }
        let configuration: DaemonConfiguration
        do {
            configuration = try loader.load(options)
        } catch {
            // The caller of Reload gets the reason too, but `systemctl reload`
            // prints only "Job failed": the journal is where it is read.
            logger.error("reload failed, the running configuration stays: \(error.description)", id: .reloadFailed)
            return .failure(FlowdError(.failed, "the configuration has an error, nothing was changed: \(error.description)"))
        }
        let catalog = front.service.assumeIsolated { $0.reload(configuration) }
        // Sessions that moved to a changed flow announce their new values
        // now, also when the reload came from SIGHUP rather than a call.
        front.flush()
        DaemonMain.report(catalog, logger: logger)
        logger.notice("reloaded: \(catalog.flows.count) flows; \(FlowdLog.filesRead(configuration.files))")
        updateStatus()
        return .success(())
    }

    private func expire() {
        guard let front else { return }
        let removed = front.service.assumeIsolated { $0.expireIdleSessions() }
        if removed > 0 {
            logger.info("\(removed) idle sessions expired")
            front.flush()
            updateStatus()
        }
    }

    /// `STATUS=` with live counts, sent when it changed.
    private func updateStatus() {
        guard let front else { return }
        let (sessions, flows, submits) = front.service.assumeIsolated {
            ($0.sessionCount, $0.catalog.flows.count, $0.runningSubmitCount)
        }
        var text = "Serving \(sessions) sessions, \(flows) flows, \(pluginCount) plugins"
        if submits > 0 { text += "; \(submits) submits running" }
        guard text != lastStatus else { return }
        lastStatus = text
        notify(.status(text))
    }

    private enum Notice {
        case ready, stopping, reloading, watchdog
        case status(String)
    }

    private func notify(_ notice: Notice) {
        do {
            switch notice {
            case .ready: _ = try notifier.ready()
            case .stopping: _ = try notifier.stopping()
            case .reloading: _ = try notifier.reloading()
            case .watchdog: _ = try notifier.watchdog()
            case .status(let text): _ = try notifier.status(text)
            }
        } catch {
            logger.warning("cannot notify systemd: \(error.description)")
        }
    }
}
