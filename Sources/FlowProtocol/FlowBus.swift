import DBus

/// The names of flowd's D-Bus API, version 1 (docs/dbus-api.md), written
/// here once for the daemon and every client. Every name derives from the
/// bus name.
package enum FlowBus {
    /// The bus name flowd owns.
    package static let name: BusName = "org.flowd.Flow1"

    /// The Manager object: the bus name as a path.
    package static let managerPath = ObjectPath(trusted: "/" + name.rawValue.split(separator: ".").joined(separator: "/"))
    /// The parent of every session object (`<manager>/session`).
    package static let sessionPrefix = ObjectPath(trusted: managerPath.rawValue + "/session")

    /// The Manager interface.
    package static let managerInterface = InterfaceName(trusted: name.rawValue + ".Manager")
    /// The Session interface.
    package static let sessionInterface = InterfaceName(trusted: name.rawValue + ".Session")

    /// What every error name of the contract starts with (`<bus name>.Error.`).
    package static let errorPrefix = name.rawValue + ".Error."

    /// The object path of session `id`; nil when `id` is not a session id
    /// (see ``SessionID/isValid(_:)``), so a path built here is always valid.
    package static func sessionPath(of id: String) -> ObjectPath? {
        SessionID.isValid(id) ? ObjectPath(trusted: sessionPathStart + id) : nil
    }

    /// ``sessionPrefix`` and the slash before an id, made once.
    private static let sessionPathStart = sessionPrefix.rawValue + "/"

    /// The bytes of ``sessionPathStart``, compared in place with a path's.
    private static let sessionPathStartBytes = Array(sessionPathStart.utf8)

    /// The session id of a session object's path; nil for any other path.
    /// Runs on every call to a session: one pass over the path's bytes, in
    /// place (a generic `elementsEqual` over a slice of the path and the
    /// prefix's string cost about 1 k per call: docs/performance.md, H4).
    package static func sessionID(of path: ObjectPath) -> String? {
        let start = sessionPathStartBytes
        var text = path.rawValue
        return text.withUTF8 { bytes in
            guard bytes.count == start.count + SessionID.length else { return nil }
            for index in start.indices where bytes[index] != start[index] { return nil }
            let id = UnsafeBufferPointer(rebasing: bytes[start.count...])
            return SessionID.isValid(utf8: id) ? String(decoding: id, as: UTF8.self) : nil
        }
    }
}

/// The method and signal names of the two interfaces.
package enum FlowMember {
    /// The Manager interface's members.
    package enum Manager {
        package static let listFlows: MemberName = "ListFlows"
        package static let startSession: MemberName = "StartSession"
        package static let listSessions: MemberName = "ListSessions"
        package static let getSession: MemberName = "GetSession"
        package static let listPlugins: MemberName = "ListPlugins"
        package static let reload: MemberName = "Reload"
        /// Since 1.1: `ListFlows` with options (`locale`).
        package static let listFlowsWithOptions: MemberName = "ListFlowsWithOptions"
        /// Since 1.2.
        package static let getStatus: MemberName = "GetStatus"
    }

    /// The Session interface's members.
    package enum Session {
        package static let getStep: MemberName = "GetStep"
        package static let setAnswers: MemberName = "SetAnswers"
        package static let continueStep: MemberName = "Continue"
        package static let back: MemberName = "Back"
        package static let goTo: MemberName = "GoTo"
        package static let getReview: MemberName = "GetReview"
        package static let getAnswers: MemberName = "GetAnswers"
        package static let submit: MemberName = "Submit"
        package static let cancel: MemberName = "Cancel"
        package static let close: MemberName = "Close"
        /// Since 1.1: `SetAnswers`' errors without storing or signalling.
        package static let checkAnswers: MemberName = "CheckAnswers"
        /// Since 1.1: changes the session's language.
        package static let setLocale: MemberName = "SetLocale"
        /// Since 1.1: `Submit` with options (`wait`: false returns once the
        /// submit started, its outcome arriving as signals and properties).
        package static let submitWithOptions: MemberName = "SubmitWithOptions"
    }

    /// The `org.freedesktop.DBus.ObjectManager` members on the Manager
    /// object (since 1.1): the caller's sessions, and their coming and going.
    package enum ObjectManager {
        package static let getManagedObjects: MemberName = "GetManagedObjects"
        package static let interfacesAdded: MemberName = "InterfacesAdded"
        package static let interfacesRemoved: MemberName = "InterfacesRemoved"
    }
}

/// Session ids: 32 lowercase hex characters (128 random bits), so a path
/// built from one is valid and an id cannot be guessed.
package enum SessionID {
    /// The length of an id.
    package static let length = 32

    /// True for 32 lowercase hex characters.
    package static func isValid(_ id: String) -> Bool {
        var id = id
        return id.withUTF8(isValid(utf8:))
    }

    /// True for 32 lowercase hex characters in UTF-8.
    static func isValid(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.count == length && bytes.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }
}
