import DBus
import FlowProtocol
import Synchronization

/// Something flowd announced, or something that happened to the client's
/// view of it.
package enum FlowEvent: Sendable, Hashable {
    /// `SessionNew` or `SessionRemoved` from the Manager.
    case manager(ManagerSignal)
    /// The Manager's `SessionCount` changed.
    case sessionCount(UInt32)
    /// `PropertiesChanged` of a session: the new values of the properties
    /// that changed (apply them with ``SessionProperties/set(_:from:)``).
    case propertiesChanged(session: String, [SessionProperty: DBusValue])
    /// One of a session's signals.
    case session(String, SessionSignal)
    /// flowd left the bus, or the connection to the bus was lost. The
    /// client reconnects by itself; ``reconnected`` follows when flowd is back.
    case serviceLost
    /// flowd is reachable again after ``serviceLost`` (it restarted, or the
    /// connection to the bus was made anew): the watched sessions were
    /// subscribed again; re-read whatever is shown.
    case reconnected

    /// The session the event is about; nil for events about flowd itself
    /// (a session's stream gets these too, the session count excepted).
    package var sessionID: String? {
        switch self {
        case .manager(let signal): return signal.sessionID
        case .propertiesChanged(let id, _), .session(let id, _): return id
        case .sessionCount, .serviceLost, .reconnected: return nil
        }
    }
}

/// A stream of ``FlowEvent``s from ``FlowClient/events(for:)``, in the order
/// flowd sent them. Read it with `for await`, with ``next(timeout:)``, or
/// take what has arrived with ``drain()``. Events are kept until read, up
/// to ``limit`` (the oldest are dropped beyond it). ``cancel()`` (or the
/// last reference going away) stops the stream.
package final class FlowEvents: AsyncSequence, Sendable {
    package typealias Element = FlowEvent

    /// The most events kept unread.
    package let limit: Int
    private let state = Mutex(State())
    private let onCancel: @Sendable () -> Void

    fileprivate struct State {
        var buffer: [FlowEvent] = []
        var head = 0
        var waiters: [(id: UInt64, continuation: CheckedContinuation<FlowEvent?, Never>)] = []
        var nextWaiter: UInt64 = 0
        var finished = false
        var cancelled = false
    }

    /// An empty stream; `onCancel` runs once when it is cancelled.
    package init(limit: Int = 10_000, onCancel: @escaping @Sendable () -> Void = {}) {
        self.limit = Swift.max(1, limit)
        self.onCancel = onCancel
    }

    deinit {
        if !state.withLock({ $0.cancelled }) { onCancel() }
    }

    /// Hands `event` to the oldest waiting reader, or keeps it.
    package func yield(_ event: FlowEvent) {
        let waiter = state.withLock { state -> CheckedContinuation<FlowEvent?, Never>? in
            guard !state.finished else { return nil }
            if !state.waiters.isEmpty { return state.waiters.removeFirst().continuation }
            state.buffer.append(event)
            if state.buffer.count - state.head > limit { state.head += 1 }
            state.compact()
            return nil
        }
        waiter?.resume(returning: event)
    }

    /// Ends the stream: readers get what is kept, then nil.
    package func finish() {
        let waiters = state.withLock { state in
            state.finished = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: nil) }
    }

    /// Stops the stream: no more events arrive, and readers get nil.
    package func cancel() {
        finish()
        let first = state.withLock { state in
            state.buffer = []
            state.head = 0
            defer { state.cancelled = true }
            return !state.cancelled
        }
        if first { onCancel() }
    }

    /// True once the stream ended.
    package var isFinished: Bool { state.withLock { $0.finished } }

    /// Every event received and not yet read, oldest first, without waiting.
    package func drain() -> [FlowEvent] {
        state.withLock { state in
            defer {
                state.buffer = []
                state.head = 0
            }
            return Array(state.buffer[state.head...])
        }
    }

    /// The next event; nil once the stream ended, or when the task is cancelled.
    package func next() async -> FlowEvent? {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> FlowEvent?? in
                    if state.head < state.buffer.count {
                        let event = state.buffer[state.head]
                        state.head += 1
                        state.compact()
                        return .some(event)
                    }
                    if state.finished || Task.isCancelled { return .some(nil) }
                    state.waiters.append((id, continuation))
                    return .none
                }
                if case .some(let event) = ready { continuation.resume(returning: event) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<FlowEvent?, Never>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume(returning: nil)
        }
    }

    /// The next event, waiting at most `timeout`; nil when none came (or
    /// the stream ended). An event that arrives as the time runs out is
    /// returned, never lost.
    package func next(timeout: Duration) async -> FlowEvent? {
        await withTaskGroup(of: FlowEvent?.self) { group in
            group.addTask { await self.next() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            var found: FlowEvent?
            for await result in group {
                group.cancelAll()
                if let result { found = result }
            }
            return found
        }
    }

    package struct AsyncIterator: AsyncIteratorProtocol {
        let events: FlowEvents

        package mutating func next() async -> FlowEvent? {
            await events.next()
        }
    }

    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(events: self)
    }
}

extension FlowEvents.State {
    /// Drops the read part of the buffer once it is the larger half.
    fileprivate mutating func compact() {
        if head > 64 && head * 2 > buffer.count {
            buffer.removeFirst(head)
            head = 0
        }
    }
}
