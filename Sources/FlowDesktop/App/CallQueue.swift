/// Runs the window's calls to flowd one after another, in the order they
/// were asked for, on the main actor: an answer set, a Continue and the
/// re-reads they cause never overtake each other. A call that may wait
/// long (a Submit) runs outside it, so reads go on while it waits.
@MainActor
final class CallQueue {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Runs `body` once every call queued before it has ended.
    func run(_ body: @MainActor () async -> Void) async {
        if busy {
            await withCheckedContinuation { waiting.append($0) }
        } else {
            busy = true
        }
        await body()
        if waiting.isEmpty {
            busy = false
        } else {
            // The next caller runs with `busy` still set: nobody can slip in between.
            waiting.removeFirst().resume()
        }
    }
}
