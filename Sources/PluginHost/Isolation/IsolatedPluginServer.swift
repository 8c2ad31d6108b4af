import FlowKit
import FlowdSystem

/// The helper's side (`flowd-plugin-host`): loads one plugin from the
/// descriptor flowd checked, sends its registration, then runs each call it
/// is sent through a ``PluginCaller`` of its own (its own thread pool, so a
/// plugin that blocks a thread holds only one of this process's), and sends
/// each outcome back as soon as it is there.
package enum IsolatedPluginServer {
    /// Serves until flowd closes the socket; the exit status.
    package static func run(plugin: FileDescriptor, socket: FileDescriptor) -> SysExits {
        let writer = FrameWriter(socket: socket)
        let registration: PluginRegistration
        let declarations: [[PluginOption]?]
        switch PluginLoader.loadChecked(file: plugin) {
        case .failure(let failure):
            writer.send(.refused(failure.reason))
            return .software
        case .success(let (r, d)):
            registration = r
            declarations = d
        }
        let identity = PluginIdentity(name: registration.name, path: "")
        let registered = zip(registration.capabilities, declarations).map { c, declared in
            RegisteredCapability(
                id: CapabilityID(kind: c.kind, name: c.name), plugin: identity, capability: c, declaredOptions: declared)
        }
        writer.send(
            .ready(
                WireRegistration(
                    name: registration.name, version: registration.version, abiVersion: registration.abiVersion,
                    capabilities: registered.map {
                        .init(kind: $0.id.kind, name: $0.id.name, options: $0.declaredOptions?.map(WireOption.init))
                    })))
        let caller = PluginCaller(
            registry: PluginRegistry(records: [], capabilities: registered), crashGuard: MemoryCrashGuard())
        let tasks = LockedValue<[UInt64: Task<Void, Never>]>([:])
        while true {
            let request: HostRequest
            do {
                guard let body = try WireFrames.read(from: socket) else { break }
                request = try WireFrames.decode(HostRequest.self, from: body)
            } catch {
                FileDescriptor.printError("flowd-plugin-host: \(error.description)")
                return .software
            }
            switch request {
            case .cancel(let id):
                tasks.withLock { $0[id] }?.cancel()
            case .call(let call):
                let task = Task {
                    let outcome = await perform(call, with: caller, log: PluginLogger(sink: CallLogSink(call: call.id, writer: writer)))
                    tasks.withLock { _ = $0.removeValue(forKey: call.id) }
                    writer.send(.result(call.id, outcome))
                }
                tasks.withLock { $0[call.id] = task }
            }
        }
        return .ok
    }

    /// Tells flowd the plugin cannot be served, with the one-line reason.
    package static func refuse(_ reason: String, on socket: FileDescriptor) {
        FrameWriter(socket: socket).send(.refused(reason))
    }

    /// Runs `call`. Its time limit here is flowd's plus a margin: flowd kills
    /// this process when the call's own limit passes, so a plugin that
    /// ignores it cannot keep a thread here.
    static func perform(_ call: WireCall, with caller: PluginCaller, log: PluginLogger) async -> WireOutcome {
        var context = call.context.context
        context.log = log
        let timeout = Duration.nanoseconds(call.timeoutNanoseconds) + .seconds(5)
        let name = call.capability
        switch call.request {
        case .review(let value, let field):
            return outcome(await caller.reviewField(name, value: value.value, field: field.field, context: context, timeout: timeout)) {
                .review($0.assessment, $0.normalizedValue.map(WireAnswer.init))
            }
        case .describeFieldRule(let field):
            return outcome(await caller.describeFieldRule(name, field: field.field, context: context, timeout: timeout)) { .text($0) }
        case .validateStep(let step):
            return outcome(await caller.validateStep(name, step: step.step, context: context, timeout: timeout)) {
                .issues($0.map { WireIssue(field: $0.field, message: $0.message, level: $0.level) })
            }
        case .describeStepRule(let step):
            return outcome(await caller.describeStepRule(name, step: step.step, context: context, timeout: timeout)) { .text($0) }
        case .submit(let submission):
            return outcome(await caller.submit(name, submission: submission.submission, context: context, timeout: timeout)) {
                .receipt($0.values.mapValues(WireJSON.init))
            }
        case .options(let field):
            return outcome(await caller.options(name, field: field.field, context: context, timeout: timeout)) { .options($0) }
        case .prefill(let field):
            return outcome(await caller.prefill(name, field: field.field, context: context, timeout: timeout)) {
                .prefill($0.map(WireAnswer.init))
            }
        }
    }

    private static func outcome<Value>(_ result: PluginCallResult<Value>, _ success: (Value) -> WireOutcome) -> WireOutcome {
        switch result {
        case .success(let v): return success(v)
        case .failure(let message, let detail): return .failure(message: message, detail: detail)
        case .timedOut, .busy: return .timedOut
        case .cancelled: return .cancelled
        case .unavailable: return .unavailable
        }
    }
}

/// A call's log in the helper: each line goes to flowd as a frame, before
/// the call's result, and flowd writes it to that call's log.
private struct CallLogSink: PluginLogSink {
    let call: UInt64
    let writer: FrameWriter

    func write(_ entry: PluginLogEntry) {
        writer.send(.log(call, entry))
    }
}

/// Writes whole frames from any thread, one at a time.
private final class FrameWriter: Sendable {
    let socket: FileDescriptor
    private let lock = Lock()

    init(socket: FileDescriptor) { self.socket = socket }

    /// Sends `message`; one that cannot be encoded (a value JSON cannot hold)
    /// goes as the call's failure instead. A socket that cannot be written
    /// means flowd is gone: this process ends.
    func send(_ message: HostMessage) {
        var frame: [UInt8]
        do {
            frame = try WireFrames.encode(message)
        } catch {
            guard case .result(let id, _) = message,
                let fallback = try? WireFrames.encode(
                    HostMessage.result(id, .failure(message: nil, detail: "its result cannot be sent to flowd: \(error)")))
            else { return }
            frame = fallback
        }
        do {
            try lock.withLock { () throws(SystemCallError) in try socket.writeAll(frame) }
        } catch {
            CurrentProcess.exitImmediately(SysExits.ok.rawValue)
        }
    }
}
