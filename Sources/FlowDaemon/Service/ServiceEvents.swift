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
    /// These properties of a session changed; their values are in `now`
    /// (which holds at least those).
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
    /// Made with the rule that keeps secrets out of logs (``LogValue``).
    var message: LogMessage
    var id: MessageID?
    var metadata: LogMetadata
    var file: String
    var function: String
    var line: UInt

    func write(to logger: Logger) {
        logger.log(level, message, id: id, metadata: metadata, file: file, function: function, line: line)
    }
}

/// Where a change of a session starts: the digests of its property values
/// as last announced (clients were told those, or could read them) or, when
/// the cache has none, the session as read, to work the values out from
/// after the change. Computing them walks the path, so a change computes
/// them once (after) instead of twice; and a change that knows them does
/// not keep a copy of the session it started from.
struct ChangeStart {
    enum Before {
        case announced(PropertyDigests)
        case session(FlowSession)
    }

    var before: Before
    /// The session's ``SessionRecord/revision`` as read.
    var revision: UInt64
    /// Its ``FlowSession/announcementSequence`` as read.
    var announcementSequence: UInt64

    /// `session` is borrowed: copied (some twenty references) only when
    /// the digests are not known, not for every change.
    init(_ session: borrowing FlowSession, announced: PropertyDigests?) {
        if let announced {
            before = .announced(announced)
        } else {
            before = .session(copy session)
        }
        revision = session.record.revision
        announcementSequence = session.announcementSequence
    }
}

/// What a change of a session can have changed, as its call declares it:
/// only these properties are worked out again and compared after it (the
/// rest keep the values they had), so a call declares every property it
/// can move (``SessionPropertySet``; a test compares with a full snapshot).
struct ChangeScope {
    /// The properties the call can change.
    var properties: SessionPropertySet
    /// ``FlowSession/canContinue`` after the change, when the call worked it
    /// out (``SetAnswersResult/canContinue``).
    var canContinue: Bool?
    /// A step the call knows to be finished (``FlowSession/isFinished``):
    /// the one Continue accepted and left, so the path's statuses after it
    /// do not check that step again.
    var finishedStep: String?

    /// Any property: a change that says nothing narrower.
    static let anything = ChangeScope(properties: .all)
    /// A change of answers (``SessionPropertySet/changedByAnswers``).
    static func answers(canContinue: Bool? = nil) -> ChangeScope {
        ChangeScope(properties: .changedByAnswers, canContinue: canContinue)
    }
    /// `SetAnswers`' change of the current step's answers, whose checks
    /// gave `canContinue`: on a flow where an answer's effects stay on its
    /// step (``FlowDefinition/answersStayOnTheirStep``) nothing that follows
    /// the path can move but `CanContinue`, so no path is walked after it
    /// (``SessionPropertySet/changedByAnswersOnTheirStep``).
    static func answers(canContinue: Bool, onTheCurrentStepOf flow: FlowDefinition) -> ChangeScope {
        ChangeScope(
            properties: flow.answersStayOnTheirStep ? .changedByAnswersOnTheirStep : .changedByAnswers,
            canContinue: canContinue)
    }
    /// A move (``SessionPropertySet/changedByMoves``).
    static let move = ChangeScope(properties: .changedByMoves)
    /// Continue's move from `step`, which it accepted: finished now.
    static func move(finishing step: String) -> ChangeScope {
        ChangeScope(properties: .changedByMoves, finishedStep: step)
    }
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

    /// A change of a session's properties, announced after the reply. A
    /// class: taking it out of the queue moves one reference, not the two
    /// sessions' worth of references (and the digests) it holds.
    private final class PendingChange {
        let start: ChangeStart
        /// The session after the change (a value: keeping it copies nothing).
        let current: FlowSession
        let scope: ChangeScope
        /// The cache version of `current` (``SessionCache/put(_:announced:)``).
        let version: UInt64

        init(start: consuming ChangeStart, current: consuming FlowSession, scope: ChangeScope, version: UInt64) {
            self.start = start
            self.current = current
            self.scope = scope
            self.version = version
        }
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

    /// Queues the change of a session from `start` to `current`, which can
    /// have changed what `scope` says.
    mutating func change(from start: consuming ChangeStart, to current: consuming FlowSession, scope: ChangeScope, version: UInt64) {
        queued.append(.change(PendingChange(start: start, current: current, scope: scope, version: version)))
    }

    /// Queues a log entry to be written with the events, after the reply;
    /// nothing is queued, and neither the message nor the metadata is made,
    /// when the level is off.
    mutating func log(
        _ level: LogLevel, _ message: @autoclosure () -> LogMessage, id: MessageID? = nil,
        metadata: @autoclosure () -> LogMetadata = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        guard logger.isEnabled(level) else { return }
        append(.log(DeferredLog(
            level: level, message: message(), id: id, metadata: metadata(), file: file, function: function, line: line)))
    }

    /// Hands over the queued events, oldest first, with the property changes
    /// worked out. `keep` receives the digests of each changed session's new
    /// values and the cache version they belong to (the next change's
    /// "before").
    mutating func take(keeping keep: (_ id: String, PropertyDigests, _ version: UInt64) -> Void) -> [ServiceEvent] {
        guard !queued.isEmpty else { return [] }
        var ready: [ServiceEvent] = []
        ready.reserveCapacity(queued.count + 1)
        // Taken out of the queue one by one, oldest first, so that each is
        // released once it is worked out (reversed in place through a
        // buffer, which moves the items: an array's `reverse()` copies and
        // destroys each one it swaps).
        var items: [Queued] = []
        swap(&items, &queued)
        items.withUnsafeMutableBufferPointer { $0.reverse() }
        while let item = items.popLast() {
            // Consumed: an event is moved into `ready`, not copied.
            switch consume item {
            case .event(let event):
                ready.append(event)
            case .change(let change):
                let scope = change.scope
                let id = change.current.record.id
                // Only what the call can change is worked out again and
                // compared with what was announced; the rest keeps its
                // digests. When those are not known, the values before are
                // worked out from the session as read (all of them after,
                // to know every digest from now on).
                let now: SessionProperties
                var announced: PropertyDigests
                let changed: [SessionProperty]
                switch change.start.before {
                case .announced(let known):
                    now = SessionProperties(
                        change.current, only: scope.properties, canContinue: scope.canContinue, finishedStep: scope.finishedStep)
                    announced = known
                    changed = announced.update(scope.properties, to: now)
                case .session(let start):
                    now = SessionProperties(change.current, canContinue: scope.canContinue, finishedStep: scope.finishedStep)
                    var before = now
                    before.update(scope.properties, from: start)
                    changed = now.changed(since: before, among: scope.properties)
                    announced = PropertyDigests(now)
                }
                keep(id, announced, change.version)
                Self.differences(
                    of: id, changed: changed, now: consume now,
                    announcement: change.current.announcementSequence != change.start.announcementSequence
                        ? change.current.announcement : nil,
                    into: &ready)
            }
        }
        queued = items
        return ready
    }

    /// Appends what clients are told when session `id`'s properties `changed` to
    /// the values `now`: `PropertiesChanged` with them, unless only
    /// `UpdatedAt` did (a keystroke-driven `SetAnswers` changes nothing a
    /// client shows; the new time is read with the next change or `Get`),
    /// and one `Announcement` with `announcement`'s text when the engine
    /// made one (its announcement count moved). A text that changed without
    /// a new announcement (`SetLocale` rewording it) is a property change only.
    /// `now` is consumed: the event takes it without a copy (a snapshot is
    /// some fifteen references).
    static func differences(
        of id: String, changed: [SessionProperty], now: consuming SessionProperties, announcement: String?,
        into events: inout [ServiceEvent]
    ) {
        if !changed.isEmpty, changed != [.updatedAt] {
            events.append(.propertiesChanged(id: id, names: changed, now: consume now))
        }
        if let announcement { events.append(.announcement(id: id, text: announcement)) }
    }
}
