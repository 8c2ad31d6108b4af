import FlowEngine
import FlowProtocol
import FlowdSystem

/// The filters of `flowctl sessions`: `--user`, `--flow`, `--state` and
/// `--older-than`, every one given must hold.
///
/// flowctl filters what `ListSessions` returned (root gets every session):
/// the bus API stays as it is, and the owner and the last change it needs
/// are the session properties the listing reads anyway for its table.
package struct SessionFilter: Sendable, Hashable {
    /// `--user`: the owner's uid.
    package var owner: UInt32?
    /// `--flow`: the flow id.
    package var flowID: String?
    /// `--state`.
    package var state: SessionState?
    /// `--older-than`: sessions last changed longer ago than this.
    package var olderThan: Duration?

    /// No filter: every session.
    package init(owner: UInt32? = nil, flowID: String? = nil, state: SessionState? = nil, olderThan: Duration? = nil) {
        self.owner = owner
        self.flowID = flowID
        self.state = state
        self.olderThan = olderThan
    }

    /// The filter `options` (long name → value) ask for. `userID` finds the
    /// uid of a user name (the user database; tests give their own).
    package static func parse(
        _ options: [String: String], userID: (String) -> UInt32? = Self.systemUserID
    ) throws(CLIError) -> SessionFilter {
        var filter = SessionFilter()
        if let user = options["user"] {
            guard let uid = UInt32(user) ?? userID(user) else {
                throw .usage("--user takes a uid or a user name; there is no user \(quote(user))")
            }
            filter.owner = uid
        }
        filter.flowID = options["flow"]
        if let state = options["state"] {
            guard let known = SessionState(rawValue: state) else {
                let names = SessionState.allCases.map(\.rawValue).joined(separator: ", ")
                throw .usage("--state takes one of \(names), not \(quote(state))")
            }
            filter.state = known
        }
        if let age = options["older-than"] {
            guard let span = TimeSpan.parse(age) else {
                throw .usage("--older-than takes a time span such as 30m, 2h or 7d, not \(quote(age))")
            }
            filter.olderThan = span
        }
        return filter
    }

    /// The uid of user `name` in the system's user database.
    package static func systemUserID(_ name: String) -> UInt32? {
        (try? UserDatabase.user(named: name))?.uid
    }

    /// True when a filter needs the session's properties (owner, last change),
    /// not only its listing.
    package var needsProperties: Bool { owner != nil || olderThan != nil }

    /// True when the session `listing` (with its `properties`, nil when flowd
    /// did not give them) passes every filter at `now` (µs since the epoch).
    /// A filter on the owner or the age refuses a session without properties.
    package func matches(_ listing: SessionListing, properties: SessionProperties?, now: UInt64) -> Bool {
        if let flowID, listing.flowID != flowID { return false }
        if let state, listing.state != state { return false }
        guard needsProperties else { return true }
        guard let properties else { return false }
        if let owner, properties.owner != owner { return false }
        if let olderThan {
            let age = now > properties.updatedAt ? now - properties.updatedAt : 0
            if Duration.microseconds(Int64(clamping: age)) <= olderThan { return false }
        }
        return true
    }
}
