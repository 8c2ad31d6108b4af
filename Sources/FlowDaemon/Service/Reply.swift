/// Where the answer to one call goes. The service answers through it exactly
/// once: at once (the fast path: no plugin call, no task), or later, when
/// the plugin calls the answer waits for have ended (a deferred reply).
///
/// The bus front end makes one per call: it replies on the bus, then emits
/// what the call caused. Tests make their own.
struct Reply<Value: Sendable>: Sendable {
    private let answer: @Sendable (Result<Value, FlowdError>) -> Void
    private let later: @Sendable () -> Void

    /// A reply that calls `answer` with the outcome, and `deferring` each
    /// time the service is about to wait for plugins (``deferring()``).
    init(
        deferring: @escaping @Sendable () -> Void = {},
        _ answer: @escaping @Sendable (Result<Value, FlowdError>) -> Void
    ) {
        self.answer = answer
        self.later = deferring
    }

    /// Answers the call.
    func callAsFunction(_ result: Result<Value, FlowdError>) {
        answer(result)
    }

    /// The answer waits for plugins: the events queued so far go out now,
    /// so that a watcher sees a change (`State` `submitting`, say) when it
    /// happens rather than when the plugin ends.
    func deferring() {
        later()
    }

    /// The same call, answered with a value of another type.
    func adapting<Other: Sendable>(_ transform: @escaping @Sendable (Other) -> Value) -> Reply<Other> {
        let answer = self.answer
        return Reply<Other>(deferring: later) { result in answer(result.map(transform)) }
    }
}
