/// The submit actions that are running, at most one per session, each with
/// the reply of the call that started it (`Submit`, or the `Continue` that
/// reached the end of the flow).
///
/// A submit is known by its session id and a token: a submit that was
/// cancelled (`Cancel`, `Close`, expiry, a stop) and whose task still ends
/// later finds its token gone and changes nothing.
struct SubmitRunner {
    private struct Running {
        var token: UInt64
        var task: Task<Void, Never>
        var reply: Reply<Void>
    }

    private var running: [String: Running] = [:]
    private var lastToken: UInt64 = 0

    /// How many submits run.
    var count: Int { running.count }

    /// True while session `id`'s submit runs.
    func isRunning(_ id: String) -> Bool { running[id] != nil }

    /// Starts the submit of session `id`: `start` makes its task from the
    /// token that ``end(_:token:)`` will be given.
    mutating func start(_ id: String, reply: Reply<Void>, _ start: (_ token: UInt64) -> Task<Void, Never>) {
        lastToken &+= 1
        running[id] = Running(token: lastToken, task: start(lastToken), reply: reply)
    }

    /// The submit of session `id` with `token` ended: its reply, or nil when
    /// it was cancelled meanwhile.
    mutating func end(_ id: String, token: UInt64) -> Reply<Void>? {
        guard let submit = running[id], submit.token == token else { return nil }
        running[id] = nil
        return submit.reply
    }

    /// Cancels the submit of session `id`, if one runs; returns the reply
    /// its call waits for (answered by the caller, once this returned).
    mutating func cancel(_ id: String) -> Reply<Void>? {
        guard let submit = running.removeValue(forKey: id) else { return nil }
        submit.task.cancel()
        return submit.reply
    }

    /// Cancels every submit; returns the replies their calls wait for.
    mutating func cancelAll() -> [Reply<Void>] {
        running.keys.sorted().compactMap { cancel($0) }
    }
}
