import DBus
@testable import FlowDaemon
import FlowEngine
import Foundation
import Testing
import TestSupport

/// The decision table of docs/admin.md ("Authorization"), without a bus:
/// owner, root, polkit's yes, a challenge with and without the caller's
/// interactive flag, polkit missing, slow or confused, and the per-user
/// flowd that never asks polkit.
@Suite("Authorization decisions")
struct AuthorizationPolicyTests {
    typealias Policy = AuthorizationPolicy
    static let owner: UInt32 = 1000
    static let other: UInt32 = 1001
    static let enrol = AuthorizationAction("org.example.enrol-device")

    static func caller(_ uid: UInt32, interactive: Bool = false) -> Policy.Caller {
        Policy.Caller(uid: uid, allowsInteraction: interactive)
    }

    static var requirements: [Policy.Requirement] {
        [.session(id: "s1", owner: owner), .reload, .startFlow(id: "enrol", action: enrol ?? .start)]
    }

    @Test("root may do everything, on either bus, without polkit being asked")
    func rootIsNeverAsked() {
        for requirement in Self.requirements {
            for polkit in [true, false] {
                #expect(Policy.decide(requirement, caller: Self.caller(0), polkit: polkit) == .allow)
            }
        }
    }

    @Test("an owner uses their own session without polkit being asked")
    func ownerIsNeverAsked() {
        for polkit in [true, false] {
            #expect(Policy.decide(.session(id: "s1", owner: Self.owner), caller: Self.caller(Self.owner), polkit: polkit) == .allow)
        }
    }

    @Test("anyone else is asked about: manage-sessions, reload, the flow's own action; the flag goes to polkit")
    func othersAskPolkit() throws {
        let enrol = try #require(Self.enrol)
        for interactive in [false, true] {
            let caller = Self.caller(Self.other, interactive: interactive)
            guard case .ask(let session) = Policy.decide(.session(id: "s1", owner: Self.owner), caller: caller, polkit: true),
                  case .ask(let reload) = Policy.decide(.reload, caller: caller, polkit: true),
                  case .ask(let start) = Policy.decide(.startFlow(id: "enrol", action: enrol), caller: caller, polkit: true)
            else {
                Issue.record("a non-root caller on the system bus must be asked about")
                return
            }
            #expect(session.action == .manageSessions && session.action.id == "org.flowd.Flow1.manage-sessions")
            #expect(reload.action == .reload && reload.action.id == "org.flowd.Flow1.reload")
            #expect(start.action == enrol)
            #expect([session, reload, start].allSatisfy { $0.interactive == interactive })
        }
        // The owner of the flow's session is asked too when starting: starting is not using a session.
        guard case .ask = Policy.decide(.startFlow(id: "enrol", action: enrol), caller: Self.caller(Self.owner), polkit: true) else {
            Issue.record("starting a flow that names an action asks polkit")
            return
        }
    }

    @Test("the per-user flowd never asks polkit: another uid is refused, a flow's action is not checked")
    func sessionBusWithoutPolkit() throws {
        let caller = Self.caller(Self.other, interactive: true)
        #expect(Policy.decide(.session(id: "s1", owner: Self.owner), caller: caller, polkit: false)
                == .refuse(.accessDenied("session s1 belongs to another user")))
        #expect(Policy.decide(.reload, caller: caller, polkit: false)
            == .refuse(.accessDenied("only root and the user it runs as may reload flowd")))
        #expect(Policy.decide(.reload, caller: caller, polkit: false, serviceUID: Self.owner)
            == .refuse(.accessDenied("only root and the user it runs as may reload flowd")))
        // The user a per-user flowd runs as reloads it; on the system bus polkit decides even for them.
        #expect(Policy.decide(.reload, caller: caller, polkit: false, serviceUID: caller.uid) == .allow)
        if case .ask = Policy.decide(.reload, caller: caller, polkit: true, serviceUID: caller.uid) {} else {
            Issue.record("on the system bus the reload is polkit's to decide")
        }
        #expect(Policy.decide(.startFlow(id: "enrol", action: try #require(Self.enrol)), caller: caller, polkit: false) == .allow)
    }

    @Test("listing every user's sessions: root at once; others asked about manage-sessions, never interactively; the per-user flowd refuses")
    func everySession() {
        #expect(Policy.decide(.everySession, caller: Self.caller(0, interactive: true), polkit: true) == .allow)
        for interactive in [false, true] {
            #expect(Policy.decide(.everySession, caller: Self.caller(Self.other, interactive: interactive), polkit: true)
                    == .ask(.init(action: .manageSessions, interactive: false, purpose: "list every user's sessions")))
        }
        #expect(Policy.decide(.everySession, caller: Self.caller(Self.other), polkit: false)
                == .refuse(.accessDenied("only root lists every user's sessions")))
    }

    static func query(interactive: Bool) -> Policy.Query {
        Policy.Query(action: .reload, interactive: interactive, purpose: "reload flowd")
    }

    @Test("a listing (ListSessions, GetManagedObjects): root every session, others their own, polkit asked only when someone else has one")
    func listing() {
        struct Row: Sendable, Equatable { var id: String; var owner: UInt32 }
        let mine = Row(id: "a", owner: Self.owner), theirs = Row(id: "b", owner: Self.other), roots = Row(id: "c", owner: 0)
        func rows(_ listing: Policy.Listing<Row>) -> (shown: [Row]?, every: [Row]?, own: [Row]?) {
            switch listing {
            case .show(let rows): return (rows, nil, nil)
            case .ask(let every, let own): return (nil, every, own)
            }
        }
        #expect(rows(Policy.listing([mine, theirs, roots], caller: 0, owner: \.owner)).shown == [mine, theirs, roots])
        #expect(rows(Policy.listing([mine], caller: Self.owner, owner: \.owner)).shown == [mine], "alone with their own: no polkit")
        #expect(rows(Policy.listing([], caller: Self.owner, owner: \.owner)).shown == [])
        let asked = rows(Policy.listing([mine, theirs, roots], caller: Self.owner, owner: \.owner))
        #expect(asked.shown == nil && asked.every == [mine, theirs, roots] && asked.own == [mine])
        let stranger = rows(Policy.listing([mine, theirs], caller: 4242, owner: \.owner))
        #expect(stranger.every == [mine, theirs] && stranger.own == [], "no session of their own, someone else's to show")
    }

    @Test("polkit's yes allows; its no refuses with AccessDenied")
    func authorizedAndNot() {
        #expect((try? Policy.conclude(Self.query(interactive: false), .authorized).get()) != nil)
        guard case .failure(let refusal) = Policy.conclude(Self.query(interactive: true), .notAuthorized) else {
            Issue.record("not authorized must refuse")
            return
        }
        #expect(refusal == .accessDenied("not authorized to reload flowd (polkit action org.flowd.Flow1.reload)"))
        #expect(refusal.dbusError.name.rawValue == "org.flowd.Flow1.Error.AccessDenied")
    }

    @Test("a challenge is InteractiveAuthorizationRequired, with a message that says what to do, with and without the flag")
    func challenge() {
        for interactive in [false, true] {
            guard case .failure(let refusal) = Policy.conclude(Self.query(interactive: interactive), .challenge),
                  case .interactiveAuthorizationRequired(let message) = refusal
            else {
                Issue.record("a challenge must ask for interactive authorization")
                continue
            }
            #expect(refusal.dbusError.name.rawValue == "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired")
            #expect(message.contains("reload flowd"))
            #expect(message.contains(interactive ? "no authentication agent" : "call again allowing interactive authorization"), "\(message)")
        }
    }

    @Test("polkit missing, slow or confused refuses (fail closed) and says why")
    func failClosed() {
        let cases: [(Policy.PolkitAnswer, String)] = [
            (.unavailable("org.freedesktop.PolicyKit1 is not on the bus"), "polkit is not available (org.freedesktop.PolicyKit1 is not on the bus)"),
            (.timedOut(.seconds(2)), "polkit did not answer within"),
            (.failed("a reply of signature 's'"), "polkit could not decide (a reply of signature 's')"),
        ]
        for (answer, why) in cases {
            for interactive in [false, true] {
                guard case .failure(.accessDenied(let message)) = Policy.conclude(Self.query(interactive: interactive), answer) else {
                    Issue.record("\(answer) must refuse with AccessDenied")
                    continue
                }
                #expect(message.contains(why) && message.hasPrefix("cannot reload flowd"), "\(message)")
            }
        }
    }

    @Test("polkit's replies and errors: yes, challenge, no; gone, masked or not starting is unavailable; silence a time-out")
    func polkitReplies() throws {
        func answer(_ error: ErrorName) -> Policy.PolkitAnswer {
            PolkitAuthority.answer(.failure(DBusError(error, "x")), timeout: .seconds(10))
        }
        #expect(answer(.serviceUnknown) == .unavailable("x"))
        #expect(answer("org.freedesktop.systemd1.UnitMasked") == .unavailable("org.freedesktop.systemd1.UnitMasked: x"))
        #expect(answer("org.freedesktop.DBus.Error.Spawn.ChildExited") == .unavailable("org.freedesktop.DBus.Error.Spawn.ChildExited: x"))
        #expect(answer(.noReply) == .timedOut(.seconds(10)))
        #expect(answer("org.freedesktop.PolicyKit1.Error.NotAuthorized")
                == .failed("org.freedesktop.PolicyKit1.Error.NotAuthorized: x"))
        func reply(_ authorized: Bool, _ challenge: Bool) throws -> Policy.PolkitAnswer {
            let message = Message.methodCall(destination: "org.example", path: "/", interface: "org.example", member: "M")
            try message.append(.structure([.bool(authorized), .bool(challenge), .dictionary(keyType: "s", valueType: "s", [])]))
            return PolkitAuthority.answer(.success(message), timeout: .seconds(10))
        }
        #expect(try reply(true, false) == .authorized)
        #expect(try reply(false, true) == .challenge)
        #expect(try reply(false, false) == .notAuthorized)
    }

    @Test("action ids: the form polkit uses, nothing else")
    func actionIDForm() {
        for good in ["org.flowd.Flow1.start", "org.example.enrol-device", "a.b", "com.example.v2.x-1", "Org.Example.X"] {
            #expect(AuthorizationAction(good)?.id == good, "\(good)")
        }
        for bad in ["", "org", "org.", ".org.x", "org..x", "org.flowd.-x", "-org.x", "org.flowd.x y", "org.flowd.x_y",
                    "org/flowd", String(repeating: "a.", count: 128) + "a", "org.flowd.é"] {
            #expect(AuthorizationAction(bad) == nil, "\(bad)")
        }
        #expect(AuthorizationAction.start.id == "org.flowd.Flow1.start")
    }

    @Test("the installed policy declares exactly the actions flowd asks about, with the defaults docs/admin.md gives, owned by flowd")
    func policyFileMatches() throws {
        let url = BuildProducts.repository.appendingPathComponent("polkit/org.flowd.Flow1.policy")
        let text = try String(contentsOf: url, encoding: .utf8)
        // Each action: its id and its three defaults, in document order.
        var actions: [String: [String]] = [:]
        for chunk in text.components(separatedBy: "<action id=\"").dropFirst() {
            let id = String(chunk.prefix { $0 != "\"" })
            let defaults = ["allow_any", "allow_inactive", "allow_active"].map { tag -> String in
                guard let open = chunk.range(of: "<\(tag)>"), let close = chunk.range(of: "</\(tag)>") else { return "" }
                return String(chunk[open.upperBound..<close.lowerBound])
            }
            #expect(actions.updateValue(defaults, forKey: id) == nil, "\(id) declared twice")
            #expect(chunk.contains("<message>") && chunk.contains("<message xml:lang=\"de\">"), "\(id) has no translated message")
            // flowd.service runs as flowd, not root: polkit answers it about
            // callers only for actions whose owner it is.
            #expect(chunk.contains("<annotate key=\"org.freedesktop.policykit.owner\">unix-user:flowd</annotate>"),
                    "\(id) does not name flowd as its owner")
        }
        #expect(actions == [
            AuthorizationAction.start.id: ["auth_admin", "auth_admin", "yes"],
            AuthorizationAction.manageSessions.id: ["auth_admin_keep", "auth_admin_keep", "auth_admin_keep"],
            AuthorizationAction.reload.id: ["auth_admin_keep", "auth_admin_keep", "auth_admin_keep"],
        ])
    }
}
