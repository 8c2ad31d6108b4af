import DBus
import FlowProtocol

/// Who may make a call: the rule the registrations' authorizers run
/// (``BusFrontEnd/authorize(_:_:_:)``) before any handler, for the
/// interface's own members and for `Properties`.
///
/// A Manager method's rule goes in ``manager(_:)``; the default is any
/// caller whose uid the bus can tell. Every Session member needs the
/// session's owner or root. A rule decided by polkit would be a new case,
/// decided asynchronously as the uid lookup already is.
enum CallerRule: Sendable {
    /// Any caller whose uid the bus can tell.
    case anyUser
    /// Root only; the refusal says why.
    case root(String)
    /// The owner of session `id`, or root.
    case sessionOwner(String)

    /// The rule of Manager member `member`.
    static func manager(_ member: MemberName) -> CallerRule {
        switch member {
        case FlowMember.Manager.reload: return .root("only root may reload flowd")
        default: return .anyUser
        }
    }
}
