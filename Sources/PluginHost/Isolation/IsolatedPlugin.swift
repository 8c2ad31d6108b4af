import FlowKit
import FlowdSystem
import Synchronization

/// How an administrator isolates one plugin (`[Plugin NAME]` in flowd.conf).
package struct IsolationSettings: Sendable, Hashable {
    /// The most memory its process may map (`RLIMIT_DATA`), in bytes; nil: no limit.
    package var memoryLimit: UInt64?
    /// Whether it may open network sockets; otherwise only `AF_UNIX` ones.
    package var network: Bool

    /// The default limit: 512 MiB, far above what a validator or an action
    /// needs (the helper with the Swift runtime and a loaded plugin maps
    /// some 30 MiB), far below what would hurt the machine.
    package static let defaultMemoryLimit: UInt64 = 512 << 20

    package init(memoryLimit: UInt64? = IsolationSettings.defaultMemoryLimit, network: Bool = false) {
        self.memoryLimit = memoryLimit
        self.network = network
    }
}

/// What happened to an isolated plugin's process, for the daemon's journal
/// and store (PluginHost itself never logs).
package enum IsolationEvent: Sendable {
    /// The plugin's own code crashed its process (a fault signal flowd did
    /// not send): it is quarantined as a plugin that crashed flowd is. Keep
    /// the quarantine (the store) so the next start disables it too.
    case crashed(PluginQuarantine)
    /// A call ran past its time limit: the process was killed (SIGKILL) and
    /// is started again.
    case killedAfterTimeout(plugin: String, capability: String)
    /// The process ended otherwise (an exit, a kill from outside); `restarted`
    /// says whether it was started again at once.
    case ended(plugin: String, how: String, restarted: Bool)
    /// It could not be started again: calls fail until a later call tries again.
    case restartFailed(plugin: String, reason: String)
}

/// An isolated plugin: the helper process (`flowd-plugin-host`) it runs in,
/// started at load and again whenever it dies, and the calls in flight.
///
/// Every call is one frame out and one frame back on a socketpair (see
/// `IsolationWire.swift`); one reader thread per process takes the results
/// and resumes the waiting calls. A call that outlives its deadline gets
/// the process killed (SIGKILL) and started again; when the process dies,
/// every call in flight fails at once with the plugin's failure, never hangs.
/// A fault signal in the process is the plugin's crash: it is quarantined
/// and not started again.
package final class IsolatedPlugin: Sendable {
    /// The plugin file, for messages and the quarantine.
    package let path: String
    /// The file's identity when it was checked.
    package let file: FileIdentity
    private let descriptor: FileDescriptor
    private let helper: String
    private let settings: IsolationSettings
    private let events: @Sendable (IsolationEvent) -> Void
    private let state = LockedValue(State())

    private struct State {
        var connection: HelperConnection?
        var registration: WireRegistration?
        var quarantine: String?
        var starts: [MonotonicClock.Instant] = []
    }
    private let nextCall = Atomic<UInt64>(1)

    /// Starts allowed within a minute; past that the process stays down
    /// until the minute has passed (a plugin that exits as it starts cannot
    /// keep flowd busy starting it).
    static let startsPerMinute = 5
    /// How long after a call's deadline its process is killed.
    static let killGrace: Duration = .milliseconds(200)
    /// How long loading may take in the helper before it is killed.
    static let loadTimeout: Duration = .seconds(20)

    private init(
        path: String, file: FileIdentity, descriptor: FileDescriptor, helper: String, settings: IsolationSettings,
        events: @escaping @Sendable (IsolationEvent) -> Void
    ) {
        self.path = path
        self.file = file
        self.descriptor = descriptor
        self.helper = helper
        self.settings = settings
        self.events = events
    }

    /// How starting an isolated plugin at load went.
    package enum LoadOutcome {
        case loaded(IsolatedPlugin, WireRegistration)
        /// Refused, with the one-line reason; a quarantine when its process crashed.
        case refused(String, PluginQuarantine?)
    }

    /// Starts the helper for the checked plugin file `descriptor` (kept open
    /// for the restarts: each process loads the file that was checked) and
    /// waits for its registration.
    package static func load(
        path: String, file: FileIdentity, descriptor: FileDescriptor, helper: String, settings: IsolationSettings,
        events: @escaping @Sendable (IsolationEvent) -> Void
    ) -> LoadOutcome {
        let kept: FileDescriptor
        do {
            kept = try descriptor.duplicate(minimum: 10)
        } catch {
            return .refused("cannot keep its file open for its process: \(error.errno)", nil)
        }
        let plugin = IsolatedPlugin(
            path: path, file: file, descriptor: kept, helper: helper, settings: settings, events: events)
        switch plugin.spawn() {
        case .success(let (connection, registration)):
            plugin.state.withLock { s in
                s.connection = connection
                s.registration = registration
                s.starts.append(MonotonicClock.now())
            }
            connection.startReading(for: plugin)
            return .loaded(plugin, registration)
        case .failure(let failure):
            if let signal = failure.crash {
                let reason = "crashed its isolated process while loading (\(signal)); disabled until its file changes"
                return .refused(reason, PluginQuarantine(path: path, name: "", reason: reason, file: file))
            }
            return .refused(failure.reason, nil)
        }
    }

    // MARK: calls

    /// Runs `call` (given its id) in the plugin's process and returns its
    /// outcome: the process's answer, or the plugin's failure when the
    /// process dies, is killed at `deadline` or cannot be started.
    /// The lines the plugin logs during the call go to `log` (the context's
    /// log flowd gave the call).
    package func run(
        deadline: ContinuousClock.Instant?, log: PluginLogger, _ makeCall: (UInt64) -> WireCall
    ) async -> WireOutcome {
        let connection: HelperConnection
        switch current() {
        case .failure(let failure): return .failure(message: nil, detail: failure.reason)
        case .success(let c): connection = c
        }
        let id = nextCall.wrappingAdd(1, ordering: .relaxed).oldValue
        let call = makeCall(id)
        let frame: [UInt8]
        do {
            frame = try WireFrames.encode(HostRequest.call(call))
        } catch {
            return .failure(message: nil, detail: "its call cannot be sent to its process: \(error)")
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<WireOutcome, Never>) in
                guard connection.register(id, capability: call.capability, log: log, continuation) else { return }
                let timer = deadline.map { deadline in
                    // A moment after the caller's own timer (on the same timer
                    // thread), so the call ends as a timeout, not as the kill.
                    DeadlineTimer.shared.schedule(after: max(.zero, ContinuousClock.now.duration(to: deadline)) + Self.killGrace) {
                        guard connection.isPending(id) else { return }
                        connection.kill()
                        self.events(.killedAfterTimeout(plugin: self.pluginName, capability: call.capability))
                    }
                }
                connection.onResolve(id) { if let timer { DeadlineTimer.shared.cancel(timer) } }
                connection.send(frame, for: id)
            }
        } onCancel: {
            // Cancelled because its time is up: the kill timer ends it (a
            // cancel would let the helper answer while the plugin's code
            // still runs). Cancelled before (a Cancel on a submit): the
            // helper cancels the plugin's task.
            if let deadline, ContinuousClock.now >= deadline { return }
            if let frame = try? WireFrames.encode(HostRequest.cancel(id)) { connection.send(frame, for: nil) }
        }
    }

    /// The running process, started again if it is down and may be.
    private func current() -> Result<HelperConnection, IsolationFailure> {
        let decision = state.withLock { s -> Result<HelperConnection, IsolationFailure>? in
            if let reason = s.quarantine { return .failure(IsolationFailure("is disabled: it \(reason)")) }
            // A process killed after a timeout may not have been reaped yet:
            // a call must not go to it.
            if let c = s.connection, c.isOpen, !c.wasKilled { return .success(c) }
            let now = MonotonicClock.now()
            s.starts.removeAll { now.duration(since: $0) > .seconds(60) }
            if s.starts.count >= Self.startsPerMinute {
                return .failure(
                    IsolationFailure("its process ended \(Self.startsPerMinute) times within a minute; it is not started again until the minute has passed"))
            }
            s.starts.append(now)
            return nil
        }
        if let decision { return decision }
        return restart()
    }

    /// Starts a new process; its registration must be the one flowd registered.
    private func restart() -> Result<HelperConnection, IsolationFailure> {
        switch spawn() {
        case .failure(let failure):
            if let signal = failure.crash {
                quarantine("crashed its isolated process while loading (\(signal))")
            } else {
                events(.restartFailed(plugin: pluginName, reason: failure.reason))
            }
            return .failure(failure)
        case .success(let (connection, registration)):
            let same = state.withLock { s -> Bool in
                guard s.registration == registration, s.quarantine == nil else { return false }
                s.connection?.close()
                s.connection = connection
                return true
            }
            guard same else {
                connection.kill()
                let failure = IsolationFailure("its process registered other capabilities than at load")
                events(.restartFailed(plugin: pluginName, reason: failure.reason))
                return .failure(failure)
            }
            connection.startReading(for: self)
            return .success(connection)
        }
    }

    /// The process id of its running process, if one runs.
    package var processID: Int32? {
        state.withLock { s in s.connection.flatMap { $0.isOpen ? $0.child.pid : nil } }
    }

    /// Kills its process for good: no call starts it again. Returns once
    /// the process has been reaped (at most a few seconds), so that flowd
    /// stopping leaves no process of its own behind: under systemd one
    /// still in the unit's cgroup as flowd exits is waited for, and on a
    /// cgroup v1 host in a container possibly until the stop times out.
    package func stop() {
        let running = state.withLock { s -> HelperConnection? in
            s.quarantine = s.quarantine ?? "was stopped"
            defer { s.connection = nil }
            return s.connection
        }
        guard let running else { return }
        running.close()
        _ = running.child.wait(timeout: .seconds(5))
    }

    /// The plugin's registered name (the file's stem before it has one).
    package var pluginName: String {
        state.withLock { $0.registration?.name } ?? String(path.split(separator: "/").last ?? "").replacingSuffix(".so")
    }

    // MARK: the process

    private func spawn() -> Result<(HelperConnection, WireRegistration), IsolationFailure> {
        let ours: FileDescriptor
        let theirs: FileDescriptor
        let plugin: FileDescriptor
        do {
            let (a, b) = try FileDescriptor.socketPair()
            ours = a
            // Numbers above the child's 3 and 4, so that moving one into place
            // cannot overwrite the other.
            theirs = try b.duplicate(minimum: 10)
            plugin = try descriptor.duplicate(minimum: 10)
        } catch {
            return .failure(IsolationFailure("cannot make a socket for its process: \(error.errno)"))
        }
        var arguments = ["--socket-fd", "3", "--plugin-fd", "4", "--path", path]
        if let limit = settings.memoryLimit { arguments += ["--memory-limit", String(limit)] }
        if settings.network { arguments.append("--network") }
        var environment = CurrentProcess.environment()
        for name in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"] {
            environment[name] = nil
        }
        // Two malloc arenas: each reserves address space a memory limit
        // would otherwise be spent on.
        environment["MALLOC_ARENA_MAX"] = "2"
        var options = ChildProcess.Options(helper, arguments, environment: environment)
        options.argument0 = "flowd-plugin-host"
        options.standardOutput = .inherit
        options.standardError = .inherit
        options.extraDescriptors = [3: theirs, 4: plugin]
        let child: ChildProcess
        do {
            child = try ChildProcess(options)
        } catch {
            return .failure(IsolationFailure("cannot start \(helper): \(error)"))
        }
        theirs.close()
        plugin.close()
        // Loading runs the plugin's constructors and entry points: bounded.
        let timer = DeadlineTimer.shared.schedule(after: Self.loadTimeout) { child.send(.kill) }
        defer { DeadlineTimer.shared.cancel(timer) }
        let first: HostMessage?
        do {
            first = try WireFrames.read(from: ours).map { body throws(WireError) in
                try WireFrames.decode(HostMessage.self, from: body)
            }
        } catch {
            child.send(.kill)
            _ = child.wait(timeout: .seconds(10))
            return .failure(IsolationFailure("its process did not answer as flowd-plugin-host does: \(error)"))
        }
        switch first {
        case .ready(let registration):
            return .success((HelperConnection(child: child, socket: ours), registration))
        case .refused(let reason):
            _ = child.wait(timeout: .seconds(10))
            return .failure(IsolationFailure(reason))
        case .result, .log, nil:
            child.send(.kill)
            let ended = child.wait(timeout: .seconds(10))
            if case .signaled(let signal) = ended, Self.faultSignals.contains(signal) {
                return .failure(IsolationFailure("its process crashed while loading (\(signal))", crash: signal))
            }
            return .failure(IsolationFailure("its process ended while loading (\(ended?.description ?? "still running"))"))
        }
    }

    /// The signals that mean the process's own code faulted (the crash
    /// guard's list): not sent by flowd, which only ever sends SIGKILL.
    static let faultSignals: Set<Signal> = [
        .segmentationFault, .busError, .illegalInstruction, .floatingPointError, .abort, .trap, .badSystemCall,
    ]

    /// The reader saw `connection` end, `ended` being how its process ended,
    /// before it fails the calls in flight: a crash quarantines the plugin
    /// first, so no later call starts it again. Returns what to do once those
    /// calls are failed (nil: nothing).
    fileprivate func ended(_ connection: HelperConnection, _ ended: Termination?, inFlight: [String]) -> (@Sendable () -> Void)? {
        let killedOnPurpose = connection.wasKilled
        if !killedOnPurpose, case .signaled(let signal) = ended, Self.faultSignals.contains(signal) {
            let during = inFlight.isEmpty ? "" : " during a call to \(inFlight.sorted().joined(separator: ", "))"
            quarantine("crashed its isolated process\(during) (\(signal))")
            return nil
        }
        let stillCurrent = state.withLock { s -> Bool in
            guard s.connection === connection else { return false }
            s.connection = nil
            return s.quarantine == nil
        }
        guard stillCurrent else { return nil }
        let how = ended?.description ?? "closed its connection"
        return { [self] in
            // At once, within the start limit; otherwise at the next call.
            let restarted: Bool
            if case .success = current() { restarted = true } else { restarted = false }
            if !killedOnPurpose { events(.ended(plugin: pluginName, how: how, restarted: restarted)) }
        }
    }

    private func quarantine(_ what: String) {
        let reason = "\(what); disabled until its file changes"
        let first = state.withLock { s -> Bool in
            guard s.quarantine == nil else { return false }
            s.quarantine = reason
            s.connection?.close()
            s.connection = nil
            return true
        }
        if first {
            let name = state.withLock { $0.registration?.name } ?? ""
            events(.crashed(PluginQuarantine(path: path, name: name, reason: reason, file: file)))
        }
    }
}

/// Why an isolated plugin could not be reached.
struct IsolationFailure: Error, CustomStringConvertible {
    var reason: String
    /// The fault signal its process died of, when it crashed.
    var crash: Signal?
    init(_ reason: String, crash: Signal? = nil) {
        self.reason = reason
        self.crash = crash
    }
    var description: String { reason }
}

/// One helper process and the calls waiting for it.
private final class HelperConnection: Sendable {
    let child: ChildProcess
    let socket: FileDescriptor
    private let writeLock = Lock()
    private let state = LockedValue(ConnectionState())

    private struct ConnectionState {
        var open = true
        var killed = false
        var pending: [UInt64: PendingCall] = [:]
    }

    /// A call sent and not answered yet.
    private struct PendingCall {
        var continuation: CheckedContinuation<WireOutcome, Never>
        var capability: String
        /// The call's own log in flowd.
        var log: PluginLogger
        var onResolve: (@Sendable () -> Void)?
    }

    init(child: ChildProcess, socket: FileDescriptor) {
        self.child = child
        self.socket = socket
    }

    var isOpen: Bool { state.withLock { $0.open } }
    var wasKilled: Bool { state.withLock { $0.killed } }

    func isPending(_ id: UInt64) -> Bool { state.withLock { $0.pending[id] != nil } }

    /// Waits for call `id`; false (having resumed it with the failure) when
    /// the process is already gone.
    func register(
        _ id: UInt64, capability: String, log: PluginLogger, _ continuation: CheckedContinuation<WireOutcome, Never>
    ) -> Bool {
        let open = state.withLock { s -> Bool in
            guard s.open else { return false }
            s.pending[id] = PendingCall(continuation: continuation, capability: capability, log: log)
            return true
        }
        if !open { continuation.resume(returning: .failure(message: nil, detail: "its process ended")) }
        return open
    }

    func onResolve(_ id: UInt64, _ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { s -> Bool in
            guard s.pending[id] != nil else { return true }
            s.pending[id]?.onResolve = action
            return false
        }
        if now { action() }
    }

    /// Sends a frame; a failed write ends the connection (the reader then
    /// fails every call in flight).
    func send(_ frame: [UInt8], for id: UInt64?) {
        do {
            try writeLock.withLock { () throws(SystemCallError) in try socket.writeAll(frame) }
        } catch {
            if let id { resolve(id, .failure(message: nil, detail: "its process cannot be written to: \(error.errno)")) }
            kill()
        }
    }

    func resolve(_ id: UInt64, _ outcome: WireOutcome) {
        let call = state.withLock { $0.pending.removeValue(forKey: id) }
        call?.onResolve?()
        call?.continuation.resume(returning: outcome)
    }

    /// SIGKILL, from flowd: not the plugin's crash.
    func kill() {
        state.withLock { $0.killed = true }
        child.send(.kill)
    }

    /// Stops using this connection (its process is killed).
    func close() {
        state.withLock { $0.open = false }
        kill()
    }

    /// Starts the reader thread: results to their calls until the stream
    /// ends, then the process's end to `plugin`.
    func startReading(for plugin: IsolatedPlugin) {
        do {
            try SystemThread.detach(name: "flowd-isolated") { [self] in read(for: plugin) }
        } catch {
            kill()
        }
    }

    private func read(for plugin: IsolatedPlugin) {
        var problem: String?
        while true {
            do {
                guard let body = try WireFrames.read(from: socket) else { break }
                switch try WireFrames.decode(HostMessage.self, from: body) {
                case .result(let id, let outcome):
                    resolve(id, outcome)
                case .log(let id, let entry):
                    // Into the call's own log in flowd (its fields, its
                    // limit, secure values blanked); a late line is dropped.
                    state.withLock { $0.pending[id]?.log }?.sink?.write(entry)
                case .ready, .refused:
                    problem = "its process sent a message out of turn"
                }
                if problem != nil { break }
            } catch {
                problem = error.description
                break
            }
        }
        if problem != nil { child.send(.kill) }
        let ended = child.wait(timeout: .seconds(10))
        let (waiting, killed) = state.withLock { s in
            s.open = false
            defer { s.pending = [:] }
            return (Array(s.pending.values), s.killed)
        }
        let detail: String
        if killed {
            detail = "its isolated process was killed: a call ran past its time limit"
        } else {
            detail = "its isolated process ended (\(ended?.description ?? "it closed its connection"))" + (problem.map { ": \($0)" } ?? "")
        }
        let then = plugin.ended(self, ended, inFlight: Array(Set(waiting.map(\.capability))))
        for call in waiting { call.onResolve?() }
        for call in waiting { call.continuation.resume(returning: .failure(message: nil, detail: detail)) }
        socket.close()
        then?()
    }
}

extension String {
    fileprivate func replacingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
