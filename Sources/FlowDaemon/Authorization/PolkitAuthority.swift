import DBus
import FlowEngine

/// polkit's authority (`org.freedesktop.PolicyKit1.Authority`) on the bus
/// flowd serves on: one asynchronous `CheckAuthorization` per question, on
/// the loop, with a time limit, so a slow polkit holds up only the call that
/// waits for it.
///
/// The subject is the caller's unique bus name (`system-bus-name`), which
/// polkit resolves to a process and uid itself: flowd tells polkit nothing it
/// could get wrong, and a caller cannot claim another's identity.
final class PolkitAuthority: Sendable {
    /// How long polkit may take to answer.
    struct Timeouts: Sendable, Hashable {
        /// A question polkit answers from its rules alone.
        var check: Duration
        /// A question for which polkit may ask an authentication agent,
        /// where a person types a password.
        var interactive: Duration

        /// 10 s, and 5 minutes for a person to authenticate.
        static let standard = Timeouts(check: .seconds(10), interactive: .seconds(300))
    }

    private let connection: Connection
    let timeouts: Timeouts

    init(connection: Connection, timeouts: Timeouts) {
        self.connection = connection
        self.timeouts = timeouts
    }

    /// Asks whether `subject` (a caller's unique name) may do `action`;
    /// `completion` runs on the loop thread with the answer.
    func check(
        _ action: AuthorizationAction, subject: BusName, interactive: Bool,
        completion: @escaping @Sendable (AuthorizationPolicy.PolkitAnswer) -> Void
    ) {
        let message = Message.methodCall(
            destination: "org.freedesktop.PolicyKit1", path: "/org/freedesktop/PolicyKit1/Authority",
            interface: "org.freedesktop.PolicyKit1.Authority", member: "CheckAuthorization")
        let timeout = interactive ? timeouts.interactive : timeouts.check
        do {
            try message.append(
                .structure([.string("system-bus-name"), .vardict(["name": .string(subject.rawValue)])]),
                .string(action.id),
                .dictionary(keyType: "s", valueType: "s", []),
                .uint32(interactive ? 1 : 0),  // AllowUserInteraction: polkit may ask an authentication agent
                .string(""))
        } catch {
            return completion(.failed("cannot write the question: \(error.message)"))
        }
        // polkit's own method, so it may take its time with an agent; the
        // bus may start polkitd for it.
        message.allowsInteractiveAuthorization = interactive
        connection.sendWithReply(message, timeout: timeout) { result in
            completion(Self.answer(result, timeout: timeout))
        }
    }

    /// polkit's reply (`(bba{ss})`: authorized, challenge, details), or the
    /// reason there is none.
    static func answer(_ result: Result<Message, DBusError>, timeout: Duration) -> AuthorizationPolicy.PolkitAnswer {
        switch result {
        case .failure(let error):
            switch error.name {
            case .serviceUnknown, .nameHasNoOwner, .disconnected:
                return .unavailable(error.message)
            case .noReply, .timeout:
                return .timedOut(timeout)
            default:
                // polkitd stopped and masked, or failing to start.
                if error.name.isActivationFailure { return .unavailable("\(error.name): \(error.message)") }
                return .failed("\(error.name): \(error.message)")
            }
        case .success(let reply):
            if let error = reply.error { return .failed("\(error.name): \(error.message)") }
            var reader = reply.arguments()
            guard case .structure(let fields)? = try? reader.nextValue(), fields.count == 3,
                  case .bool(let authorized) = fields[0], case .bool(let challenge) = fields[1]
            else {
                return .failed("a reply of signature '\(reply.signature)', expected '(bba{ss})'")
            }
            if authorized { return .authorized }
            return challenge ? .challenge : .notAuthorized
        }
    }
}
