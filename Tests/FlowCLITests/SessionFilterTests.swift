import FlowCLI
import FlowEngine
import FlowProtocol
import Testing

@Suite("sessions filters")
struct SessionFilterTests {
    /// The user database of these tests: alice is 1001.
    private func userID(_ name: String) -> UInt32? { name == "alice" ? 1001 : nil }

    private func parse(_ options: [String: String]) throws(CLIError) -> SessionFilter {
        try SessionFilter.parse(options, userID: userID)
    }

    private func usageMessage(_ options: [String: String]) -> String? {
        do {
            _ = try parse(options)
            return nil
        } catch {
            #expect(error.code == .usage, "\(options): exit \(error.code.rawValue)")
            return error.message
        }
    }

    @Test("each filter reads its value; none given lists everything")
    func parsesEachFilter() throws {
        #expect(try parse([:]) == SessionFilter())
        #expect(try parse(["quiet": ""]) == SessionFilter())
        #expect(try parse(["user": "1001"]).owner == 1001)
        #expect(try parse(["user": "alice"]).owner == 1001)
        #expect(try parse(["user": "0"]).owner == 0)
        #expect(try parse(["flow": "consultation"]).flowID == "consultation")
        for state in SessionState.allCases {
            #expect(try parse(["state": state.rawValue]).state == state)
        }
        #expect(try parse(["older-than": "30m"]).olderThan == .seconds(1800))
        #expect(try parse(["older-than": "2h"]).olderThan == .seconds(7200))
        #expect(try parse(["older-than": "7d"]).olderThan == .seconds(7 * 86400))
        #expect(try parse(["older-than": "1h 30min"]).olderThan == .seconds(5400))
        let all = try parse(["user": "alice", "flow": "quick", "state": "submitted", "older-than": "1d"])
        #expect(all == SessionFilter(owner: 1001, flowID: "quick", state: .submitted, olderThan: .seconds(86400)))
    }

    @Test("a bad value is a usage error (64) that says what is expected")
    func badValues() {
        #expect(usageMessage(["older-than": "soon"]) == "--older-than takes a time span such as 30m, 2h or 7d, not \"soon\"")
        for bad in ["", "-5m", "5 parsecs", "m", "2h3", "99999999d", "1e3d"] {
            #expect(usageMessage(["older-than": bad])?.hasPrefix("--older-than takes a time span") == true, "\(bad)")
        }
        #expect(usageMessage(["state": "done"]) == "--state takes one of editing, review, submitting, submitted, failed, not \"done\"")
        #expect(usageMessage(["state": "Submitted"]) != nil, "states are lowercase, as the listing shows them")
        #expect(usageMessage(["user": "bob"]) == "--user takes a uid or a user name; there is no user \"bob\"")
        #expect(usageMessage(["user": "-1"]) != nil)
        #expect(usageMessage(["user": "4294967296"]) != nil, "beyond a uid")
    }

    @Test("a session is listed when it passes every filter given")
    func matchesCombined() throws {
        let now: UInt64 = 10_000 * 3_600_000_000  // µs
        func session(_ id: String, flow: String, state: SessionState, owner: UInt32, hoursAgo: UInt64)
            -> (SessionListing, SessionProperties)
        {
            var properties = SessionProperties(id: id, flowID: flow)
            properties.owner = owner
            properties.state = state
            properties.updatedAt = now - hoursAgo * 3_600_000_000
            return (SessionListing(id: id, flowID: flow, state: state)!, properties)
        }
        let sessions = [
            session(String(repeating: "a", count: 32), flow: "plain", state: .editing, owner: 1001, hoursAgo: 1),
            session(String(repeating: "b", count: 32), flow: "plain", state: .submitted, owner: 0, hoursAgo: 48),
            session(String(repeating: "c", count: 32), flow: "quick", state: .submitted, owner: 1001, hoursAgo: 200),
        ]
        func listed(_ filter: SessionFilter) -> [Character] {
            sessions.filter { filter.matches($0.0, properties: $0.1, now: now) }.compactMap(\.0.id.first)
        }
        #expect(listed(SessionFilter()) == ["a", "b", "c"])
        #expect(listed(SessionFilter(owner: 1001)) == ["a", "c"])
        #expect(listed(SessionFilter(flowID: "plain")) == ["a", "b"])
        #expect(listed(SessionFilter(state: .submitted)) == ["b", "c"])
        #expect(listed(SessionFilter(olderThan: .seconds(2 * 3600))) == ["b", "c"])
        #expect(listed(SessionFilter(olderThan: .seconds(7 * 86400))) == ["c"])
        #expect(listed(SessionFilter(owner: 1001, state: .submitted)) == ["c"])
        #expect(listed(SessionFilter(owner: 0, flowID: "plain", state: .submitted, olderThan: .seconds(3600))) == ["b"])
        #expect(listed(SessionFilter(owner: 4242)) == [])
        #expect(listed(SessionFilter(flowID: "quick", state: .editing)) == [])
        // Exactly as old as the span is not older than it.
        #expect(listed(SessionFilter(olderThan: .seconds(48 * 3600))) == ["c"])
    }

    @Test("without properties (the session went away), only the listing's filters can pass it")
    func withoutProperties() throws {
        let listing = try #require(SessionListing(id: String(repeating: "d", count: 32), flowID: "plain", state: .review))
        #expect(SessionFilter(flowID: "plain", state: .review).matches(listing, properties: nil, now: 0))
        #expect(!SessionFilter(owner: 0).matches(listing, properties: nil, now: 0))
        #expect(!SessionFilter(olderThan: .zero).matches(listing, properties: nil, now: 0))
        #expect(!SessionFilter(flowID: "quick").matches(listing, properties: nil, now: 0))
    }
}
