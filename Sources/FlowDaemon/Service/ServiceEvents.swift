import FlowEngine
import FlowKit
import FlowProtocol
import Logging

/// Something that happened, for the bus front end to announce after it has
/// replied to the call that caused it.
enum ServiceEvent {
    case sessionNew(id: String)
    case sessionRemoved(id: String)
    case sessionCountChanged
    /// These properties of a session changed; the values are in `now`.
    case propertiesChanged(id: String, names: [SessionProperty], now: SessionProperties)
    /// Secure answers are already left out.
    case stepCompleted(id: String, step: String, answers: [String: AnswerValue])
    case submitted(id: String, receipt: [String: JSONValue])
    case submitFailed(id: String, message: String)
    case announcement(id: String, text: String)
    /// A log entry about the call, written after its reply like the signals:
    /// formatting and writing a line costs about as much as the rest of a
    /// `Continue`, and the caller need not wait for it.
    case log(DeferredLog)
}

/// A log entry kept until the reply is sent (``ServiceEvent/log(_:)``), with
/// the place that asked for it.
struct DeferredLog {
    var level: LogLevel
    var message: String
    var id: MessageID?
    var metadata: LogMetadata
    var file: String
    var function: String
    var line: UInt

    func write(to logger: Logger) {
        logger.log(level, "\(message)", id: id, metadata: metadata, file: file, function: function, line: line)
    }
}

/// Where a change of a session starts: the session as read and, when the
/// cache has them, its property values as last announced (clients were told
/// those). Computing them walks the path several times, so a change computes
/// them once (after) instead of twice.
struct ChangeStart {
    var session: FlowSession
    var properties: SessionProperties?
}

/// The events the service queued since the bus front end last took them,
/// oldest first.
///
/// A change of a session is queued as its two sides; its
/// `PropertiesChanged` and `Announcement` are worked out by ``take(keeping:)``,
/// which runs after the reply: taking the two property snapshots walks the
/// path and localizes labels, about a fifth of a `SetAnswers`.
struct ServiceEvents {
    private enum Queued {
        case event(ServiceEvent)
        case change(PendingChange)
    }

    /// A change of a session's properties, announced after the reply.
    private struct PendingChange {
        var start: ChangeStart
        /// The session after the change (a value: keeping it copies nothing).
        var current: FlowSession
        /// The cache version of `current` (``SessionCache/put(_:properties:)``).
        var version: UInt64
    }

    private var queued: [Queued] = []
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// Where the next event goes: a mark for ``insert(_:at:)``.
    var mark: Int { queued.count }

    mutating func append(_ event: ServiceEvent) {
        queued.append(.event(event))
    }

    /// Queues `event` ahead of the events queued since `mark`: `StepCompleted`
    /// goes before the next step's properties, so that clients hear what
    /// happened in the order it happened.
    mutating func insert(_ event: ServiceEvent, at mark: Int) {
        queued.insert(.event(event), at: min(max(mark, 0), queued.count))
    }

    /// Queues the change of a session from `start` to `current`.
    mutating func change(from start: ChangeStart, to current: FlowSession, version: UInt64) {
        queued.append(.change(PendingChange(start: start, current: current, version: version)))
    }

    /// Queues a log entry to be written with the events, after the reply;
    /// nothing is queued when the level is off.
    mutating func log(
        _ level: LogLevel, _ message: String, id: MessageID? = nil, metadata: LogMetadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        guard logger.isEnabled(level) else { return }
        append(.log(DeferredLog(
            level: level, message: message, id: id, metadata: metadata, file: file, function: function, line: line)))
    }

    /// Hands over the queued events, oldest first, with the property changes
    /// worked out. `keep` receives each changed session's new values and
    /// the cache version they belong to (the next change's "before").
    mutating func take(keeping keep: (_ id: String, SessionProperties, _ version: UInt64) -> Void) -> [ServiceEvent] {
        guard !queued.isEmpty else { return [] }
        var ready: [ServiceEvent] = []
        ready.reserveCapacity(queued.count + 1)
        for item in queued {
            switch item {
            case .event(let event):
                ready.append(event)
            case .change(let change):
                let after = SessionProperties(change.current)
                keep(change.current.record.id, after, change.version)
                ready += Self.differences(
                    of: change.current.record.id, from: change.start.properties ?? SessionProperties(change.start.session),
                    to: after, announced: change.current.announcementSequence != change.start.session.announcementSequence)
            }
        }
        queued.removeAll(keepingCapacity: true)
        return ready
    }

    /// What clients are told when session `id`'s properties go from `before`
    /// to `after`: `PropertiesChanged` with what differs, unless only
    /// `UpdatedAt` does (a keystroke-driven `SetAnswers` changes nothing a
    /// client shows; the new time is read with the next change or `Get`),
    /// and one `Announcement` when the engine made one (`announced`: its
    /// announcement count moved). A text that changed without a new
    /// announcement (`SetLocale` rewording it) is a property change only.
    static func differences(
        of id: String, from before: SessionProperties, to after: SessionProperties, announced: Bool
    ) -> [ServiceEvent] {
        var events: [ServiceEvent] = []
        let changed = after.changed(since: before)
        if !changed.isEmpty, changed != [.updatedAt] {
            events.append(.propertiesChanged(id: id, names: changed, now: after))
        }
        if announced { events.append(.announcement(id: id, text: after.announcement)) }
        return events
    }
}
