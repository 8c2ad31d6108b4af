import Reactor

/// The calls a connection flowd reads itself sent and still awaits replies
/// to, keyed by their serial (docs/performance.md, R3): what libdbus'
/// pending calls are on a connection it reads. A reply or error reply is
/// matched by its reply serial; a call whose timeout passes on the loop is
/// answered `NoReply` with libdbus' text, and a reply that comes after that
/// finds no entry and is dropped; when the connection goes, every call still
/// waiting is answered `Disconnected`. Loop thread only (or one thread, not
/// attached).
final class ReplyTable: @unchecked Sendable {
    typealias Handler = @Sendable (Result<Message, DBusError>) -> Void

    /// The error of a call whose timeout passed (libdbus' own wording).
    static let timedOut = DBusError(
        .noReply,
        "Did not receive a reply. Possible causes include: the remote application did not send a reply, "
            + "the message bus security policy blocked the reply, the reply timeout expired, "
            + "or the network connection was broken.")

    private var entries: [UInt32: (handler: Handler, timer: TimerHandle?)] = [:]

    /// How many calls wait.
    var count: Int { entries.count }

    /// True when a call with `serial` waits.
    func contains(_ serial: UInt32) -> Bool { entries[serial] != nil }

    /// Waits for the reply to the call sent with `serial`; after `timeout`
    /// (on `loop`; none without a loop or for `Duration.max`-like values past
    /// libdbus' "infinite") `handler` gets ``timedOut``.
    func add(serial: UInt32, timeout: Duration, loop: (any EventLoopProtocol)?, handler: @escaping Handler) {
        var timer: TimerHandle?
        if let loop, timeout.libdbusMilliseconds < Int32.max {
            timer = loop.schedule(after: timeout) { [weak self] in self?.expire(serial) }
        }
        entries[serial] = (handler, timer)
    }

    /// Stops waiting for `serial` without answering (the caller cancelled).
    func remove(_ serial: UInt32) {
        entries.removeValue(forKey: serial)?.timer?.cancel()
    }

    /// Hands `reply` (a method return or an error) to the call it answers;
    /// false when no call waits for it (it timed out, was cancelled, or
    /// was never sent: dropped, as libdbus drops it).
    func complete(with reply: Message) -> Bool {
        guard let entry = entries.removeValue(forKey: reply.replySerial) else { return false }
        entry.timer?.cancel()
        if let error = reply.error {
            entry.handler(.failure(error))
        } else {
            entry.handler(.success(reply))
        }
        return true
    }

    /// A timeout passed: the call gets ``timedOut``.
    func expire(_ serial: UInt32) {
        guard let entry = entries.removeValue(forKey: serial) else { return }
        entry.handler(.failure(Self.timedOut))
    }

    /// Answers every waiting call with `error`, in the order they were sent.
    func failAll(_ error: DBusError) {
        let waiting = entries.sorted { $0.key < $1.key }
        entries = [:]
        for (_, entry) in waiting {
            entry.timer?.cancel()
            entry.handler(.failure(error))
        }
    }
}
