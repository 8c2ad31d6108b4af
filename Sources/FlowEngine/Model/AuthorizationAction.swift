/// The id of a polkit action (`org.flowd.Flow1.reload`, or one an
/// administrator ships in a `.policy` file of their own), checked for form
/// only: whether polkit knows it is polkit's to say, per call.
///
/// The form: 1 to 255 characters, at least two components separated by
/// dots, each made of ASCII letters, digits and `-` and not starting with
/// `-` (reverse-DNS names such as polkit's own action ids and flowd's
/// `org.flowd.Flow1.start`).
package struct AuthorizationAction: Sendable, Hashable, CustomStringConvertible {
    package let id: String

    /// `id`, or nil when it does not have the form of an action id.
    package init?(_ id: String) {
        guard Self.isWellFormed(id) else { return nil }
        self.id = id
    }

    package var description: String { id }

    /// Starting a session of a flow that names this action (the default of
    /// no flow; a flow names its own or this one).
    package static let start = AuthorizationAction(trusted: "org.flowd.Flow1.start")
    /// Listing, reading and closing other users' sessions.
    package static let manageSessions = AuthorizationAction(trusted: "org.flowd.Flow1.manage-sessions")
    /// `Reload`.
    package static let reload = AuthorizationAction(trusted: "org.flowd.Flow1.reload")

    private init(trusted id: String) {
        self.id = id
    }

    /// True when `id` has the form described on the type.
    package static func isWellFormed(_ id: String) -> Bool {
        let components = id.unicodeScalars.split(separator: ".", omittingEmptySubsequences: false)
        return (1...255).contains(id.utf8.count) && components.count >= 2
            && components.allSatisfy { component in
                component.first.map { $0 != "-" } ?? false
                    && component.allSatisfy { isASCIILetter($0) || isASCIIDigit($0) || $0 == "-" }
            }
    }
}
