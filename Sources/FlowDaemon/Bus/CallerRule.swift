import DBus
import FlowEngine
import FlowProtocol

/// Who may make a call: the rule the registrations' authorizers run
/// (``BusFrontEnd/authorize(_:_:_:)``) before any handler, for the
/// interface's own members and for `Properties`. The rules other than
/// ``anyUser`` become an ``AuthorizationPolicy/Requirement``, which may ask
/// polkit (on the system bus), asynchronously as the uid lookup is.
///
/// A Manager method's rule goes in ``manager(_:)``; the default is any
/// caller whose uid the bus can tell. Every Session member needs the
/// session's owner, root, or polkit's `manage-sessions`.
enum CallerRule: Sendable {
    /// Any caller whose uid the bus can tell.
    case anyUser
    /// `Reload`: root, or polkit's `reload`.
    case reload
    /// The owner of session `id`, root, or polkit's `manage-sessions`.
    case sessionOwner(String)
    /// Starting flow `id`, which names polkit `action` (`StartSession`
    /// authorizes it once the flow is known, not before the handler).
    case startFlow(String, AuthorizationAction)
    /// Listing every user's sessions: root, or polkit's `manage-sessions`
    /// without interaction (`ListSessions` falls back to the caller's own).
    case everySession

    /// The rule of Manager member `member`.
    static func manager(_ member: MemberName) -> CallerRule {
        switch member {
        case FlowMember.Manager.reload: return .reload
        default: return .anyUser
        }
    }
}
