import DBus
import FlowEngine

/// Who may do what on flowd's bus, decided without I/O: the table that
/// docs/admin.md ("Authorization") describes. The front end asks
/// ``decide(_:caller:polkit:)`` first; when the answer is to ask polkit, it
/// asks (``PolkitAuthority``) and hands the answer to
/// ``conclude(_:_:)``.
///
/// Owners use their own sessions and root may do everything, without polkit
/// being asked. Anyone else needs polkit's yes, on the system bus only; the
/// per-user flowd on the session bus never asks polkit. Polkit that is
/// missing, slow or confused refuses (fail closed).
enum AuthorizationPolicy {
    /// What a call needs beyond being a caller whose uid the bus can tell.
    enum Requirement: Sendable, Hashable {
        /// Using session `id`, which belongs to `owner`: the owner, root, or
        /// `org.flowd.Flow1.manage-sessions`.
        case session(id: String, owner: UInt32)
        /// `Reload`: root, or `org.flowd.Flow1.reload`.
        case reload
        /// Starting a session of flow `id`, which names `action`: root, or
        /// the action. On the session bus every caller may.
        case startFlow(id: String, action: AuthorizationAction)
        /// `ListSessions` listing every user's sessions, not only the
        /// caller's: root, or `org.flowd.Flow1.manage-sessions` granted
        /// without asking anyone. A listing never prompts for a password:
        /// the flag is not passed on, and a refusal only narrows the list
        /// to the caller's own sessions.
        case everySession
    }

    /// The caller: their uid, and whether they allowed interactive
    /// authorization on this call (the message flag).
    struct Caller: Sendable, Hashable {
        var uid: UInt32
        var allowsInteraction: Bool
    }

    /// A question for polkit.
    struct Query: Sendable, Hashable {
        var action: AuthorizationAction
        /// Polkit may ask an authentication agent (`AllowUserInteraction`).
        var interactive: Bool
        /// What the caller wanted, for refusals ("reload flowd").
        var purpose: String
    }

    /// What polkit said, or why it said nothing.
    enum PolkitAnswer: Sendable, Hashable {
        case authorized
        /// Authentication would authorize the caller, but it did not happen.
        case challenge
        case notAuthorized
        /// No polkit on the bus (or the bus refused to start it).
        case unavailable(String)
        /// Polkit did not answer within the time given.
        case timedOut(Duration)
        /// Polkit answered with an error or a reply flowd does not understand.
        case failed(String)
    }

    /// The first step of a decision.
    enum Step: Sendable, Hashable {
        case allow
        case refuse(Refusal)
        case ask(Query)
    }

    /// A refusal, as the caller receives it.
    enum Refusal: Error, Sendable, Hashable {
        /// `org.flowd.Flow1.Error.AccessDenied`.
        case accessDenied(String)
        /// `org.freedesktop.DBus.Error.InteractiveAuthorizationRequired`: the
        /// call could succeed after authentication.
        case interactiveAuthorizationRequired(String)

        var message: String {
            switch self {
            case .accessDenied(let message), .interactiveAuthorizationRequired(let message): return message
            }
        }

        var dbusError: DBusError {
            switch self {
            case .accessDenied(let message): return FlowdError.accessDenied(message).dbusError
            case .interactiveAuthorizationRequired(let message): return DBusError(.interactiveAuthorizationRequired, message)
            }
        }
    }

    /// Decides `requirement` for `caller`: at once, or by asking polkit when
    /// `polkit` is true (the system bus). `serviceUID` is the uid flowd runs
    /// as: on the session bus that user may reload their own flowd (they
    /// could signal it anyway).
    static func decide(_ requirement: Requirement, caller: Caller, polkit: Bool, serviceUID: UInt32? = nil) -> Step {
        if caller.uid == 0 { return .allow }
        let action: AuthorizationAction
        let purpose: String
        switch requirement {
        case .session(let id, let owner):
            if caller.uid == owner { return .allow }
            guard polkit else { return .refuse(.accessDenied("session \(id) belongs to another user")) }
            action = .manageSessions
            purpose = "use session \(id), which belongs to another user"
        case .reload:
            guard polkit else {
                if caller.uid == serviceUID { return .allow }
                return .refuse(.accessDenied("only root and the user it runs as may reload flowd"))
            }
            action = .reload
            purpose = "reload flowd"
        case .startFlow(let id, let flowAction):
            guard polkit else { return .allow }
            action = flowAction
            purpose = "start flow \(id)"
        case .everySession:
            guard polkit else { return .refuse(.accessDenied("only root lists every user's sessions")) }
            return .ask(Query(action: .manageSessions, interactive: false, purpose: "list every user's sessions"))
        }
        return .ask(Query(action: action, interactive: caller.allowsInteraction, purpose: purpose))
    }

    /// What a listing of sessions (`ListSessions`, `GetManagedObjects`)
    /// shows a caller, before polkit is asked anything.
    enum Listing<Row: Sendable>: Sendable {
        /// These rows, decided without polkit.
        case show([Row])
        /// Someone else has a session: every row if polkit grants
        /// ``Requirement/everySession``, else only the caller's own.
        case ask(every: [Row], own: [Row])
    }

    /// The listing of `every` session for the caller `uid`: root sees every
    /// one; anyone else their own, and polkit is asked only when there is
    /// someone else's session to show (a caller alone with theirs costs
    /// polkit nothing).
    static func listing<Row: Sendable>(_ every: [Row], caller uid: UInt32, owner: (Row) -> UInt32) -> Listing<Row> {
        if uid == 0 { return .show(every) }
        let own = every.filter { owner($0) == uid }
        return own.count < every.count ? .ask(every: every, own: own) : .show(own)
    }

    /// The end of a decision: polkit's `answer` to `query`.
    static func conclude(_ query: Query, _ answer: PolkitAnswer) -> Result<Void, Refusal> {
        let what = "\(query.purpose) (polkit action \(query.action))"
        switch answer {
        case .authorized:
            return .success(())
        case .challenge where query.interactive:
            return .failure(.interactiveAuthorizationRequired(
                "authentication is required to \(what), and no authentication agent could ask for it"))
        case .challenge:
            return .failure(.interactiveAuthorizationRequired(
                "authentication is required to \(what): call again allowing interactive authorization"))
        case .notAuthorized:
            return .failure(.accessDenied("not authorized to \(what)"))
        case .unavailable(let why):
            return .failure(.accessDenied("cannot \(what): polkit is not available (\(why)), so only root may"))
        case .timedOut(let limit):
            return .failure(.accessDenied("cannot \(what): polkit did not answer within \(limit), so only root may"))
        case .failed(let why):
            return .failure(.accessDenied("cannot \(what): polkit could not decide (\(why)), so only root may"))
        }
    }
}
