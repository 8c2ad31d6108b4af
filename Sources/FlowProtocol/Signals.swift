import DBus

/// The signals of the Manager interface, with one encoder (the daemon
/// emits ``member`` with ``arguments``) and one decoder (clients).
package enum ManagerSignal: Sendable, Hashable {
    /// A session was started: `SessionNew(s id, o path)`.
    case sessionNew(id: String)
    /// A session was closed, expired or deleted: `SessionRemoved(s id, o path)`.
    case sessionRemoved(id: String)

    package static let sessionNewMember: MemberName = "SessionNew"
    package static let sessionRemovedMember: MemberName = "SessionRemoved"

    /// The signal's name.
    package var member: MemberName {
        switch self {
        case .sessionNew: return Self.sessionNewMember
        case .sessionRemoved: return Self.sessionRemovedMember
        }
    }

    /// The session the signal is about.
    package var sessionID: String {
        switch self {
        case .sessionNew(let id), .sessionRemoved(let id): return id
        }
    }

    /// The encoder: the signal's arguments. Nil for an id that is not a
    /// session id (no path can be made for it).
    package var arguments: [DBusValue]? {
        FlowBus.sessionPath(of: sessionID).map { [.string(sessionID), .objectPath($0)] }
    }

    /// The decoder: nil for a member the interface does not have.
    package init?(member: MemberName, arguments: [DBusValue]) throws(WireError) {
        guard member == Self.sessionNewMember || member == Self.sessionRemovedMember else { return nil }
        guard arguments.count == 2, case .string(let id) = arguments[0], case .objectPath = arguments[1] else {
            throw WireError("the \(member) signal has the signature '\(signatureText(of: arguments))', expected 'so'")
        }
        self = member == Self.sessionNewMember ? .sessionNew(id: id) : .sessionRemoved(id: id)
    }
}

/// The signals of the Session interface, with one encoder and one decoder.
package enum SessionSignal: Sendable, Hashable {
    /// `StepCompleted(s step, a{sv} answers)`: that step's answers, secure fields left out.
    case stepCompleted(step: String, answers: [String: DBusValue])
    /// `Submitted(a{sv} receipt)`.
    case submitted(receipt: [String: DBusValue])
    /// `SubmitFailed(s message)`: the localized message, also in `LastError`.
    case submitFailed(message: String)
    /// `Announcement(s text)`: a step arrived, or a submit ended.
    case announcement(text: String)

    package static let stepCompletedMember: MemberName = "StepCompleted"
    package static let submittedMember: MemberName = "Submitted"
    package static let submitFailedMember: MemberName = "SubmitFailed"
    package static let announcementMember: MemberName = "Announcement"
    /// The signal names, in the interface's order.
    private static let members = [stepCompletedMember, submittedMember, submitFailedMember, announcementMember]

    /// The signal's name.
    package var member: MemberName {
        switch self {
        case .stepCompleted: return Self.stepCompletedMember
        case .submitted: return Self.submittedMember
        case .submitFailed: return Self.submitFailedMember
        case .announcement: return Self.announcementMember
        }
    }

    /// The encoder: the signal's arguments.
    package var arguments: [DBusValue] {
        switch self {
        case .stepCompleted(let step, let answers): return [.string(step), .vardict(answers)]
        case .submitted(let receipt): return [.vardict(receipt)]
        case .submitFailed(let message): return [.string(message)]
        case .announcement(let text): return [.string(text)]
        }
    }

    /// The arguments' signature (what ``arguments`` give).
    package var signature: Signature {
        switch self {
        case .stepCompleted: return Self.stepCompletedSignature
        case .submitted: return Self.submittedSignature
        case .submitFailed, .announcement: return Self.textSignature
        }
    }

    // Made once: a literal is validated each time it is made.
    private static let stepCompletedSignature: Signature = "sa{sv}"
    private static let submittedSignature: Signature = "a{sv}"
    private static let textSignature: Signature = "s"

    /// The encoder for the daemon: writes the arguments into a signal's
    /// body as ``arguments`` would be written, a text without a
    /// ``DBusValue`` around it.
    package func writeArguments(into body: inout WireEncoder) throws(DBusError) {
        switch self {
        case .stepCompleted(let step, let answers):
            body.string(step)
            try body.value(.vardict(answers))
        case .submitted(let receipt): try body.value(.vardict(receipt))
        case .submitFailed(let text), .announcement(let text): body.string(text)
        }
    }

    /// The decoder: nil for a member the interface does not have.
    package init?(member: MemberName, arguments: [DBusValue]) throws(WireError) {
        guard let index = Self.members.firstIndex(of: member) else { return nil }
        switch (index, arguments.count) {
        case (0, 2):
            if case .string(let step) = arguments[0], let answers = arguments[1].vardict {
                self = .stepCompleted(step: step, answers: answers)
                return
            }
        case (1, 1):
            if let receipt = arguments[0].vardict {
                self = .submitted(receipt: receipt)
                return
            }
        case (2, 1):
            if case .string(let message) = arguments[0] {
                self = .submitFailed(message: message)
                return
            }
        case (3, 1):
            if case .string(let text) = arguments[0] {
                self = .announcement(text: text)
                return
            }
        default: break
        }
        let expected = ["sa{sv}", "a{sv}", "s", "s"][index]
        throw WireError("the \(member) signal has the signature '\(signatureText(of: arguments))', expected '\(expected)'")
    }
}

private func signatureText(of arguments: [DBusValue]) -> String {
    arguments.map(\.signature.rawValue).joined()
}
