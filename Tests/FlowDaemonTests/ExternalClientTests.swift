import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// Whole flows driven by clients nobody here wrote, to prove the wire format
/// is standard D-Bus: systemd's busctl (sd-bus) and GLib's gdbus.
@Suite("flowd with busctl and gdbus")
struct ExternalClientTests {
    static let manager = "/org/flowd/Flow1"
    static let managerInterface = "org.flowd.Flow1.Manager"
    static let sessionInterface = "org.flowd.Flow1.Session"

    @Test("busctl drives the flow without Review to a submitted session")
    func busctlDrivesQuick() async throws {
        try await withDaemon { fixture in
            let tool = ExternalClient(fixture)
            let m = Self.managerInterface
            let s = Self.sessionInterface

            let flows = try tool.busctlCall(Self.manager, m, "ListFlows")
            #expect(flows.hasPrefix("aa{sv} 3 "), "\(flows)")
            #expect(flows.contains("\"quick\"") && flows.contains("\"Quick feedback\""))

            let started = try tool.busctlCall(Self.manager, m, "StartSession", ["sa{sv}", "quick", "1", "locale", "s", "en"])
            #expect(started.hasPrefix("o \"/org/flowd/Flow1/session/"), "\(started)")
            let path = String(started.dropFirst(3).dropLast())
            let id = String(path.split(separator: "/").last ?? "")
            #expect(try await fixture.client.getSession(id).rawValue == path, "our client sees busctl's session")

            #expect(try tool.busctlProperty(path, s, "StepIndex") == "u 1")
            #expect(try tool.busctlProperty(path, s, "StepCount") == "u 2")
            // A value out of range: the field's error comes back in a{ss}.
            let refused = try tool.busctlCall(path, s, "SetAnswers", ["a{sv}", "1", "stars", "x", "9"])
            #expect(refused.hasPrefix("a{ss} 1 \"stars\" "), "\(refused)")
            #expect(try tool.busctlCall(path, s, "SetAnswers", ["a{sv}", "1", "stars", "x", "4"]) == "a{ss} 0")
            #expect(try tool.busctlCall(path, s, "Continue") == "a{ss} 0")
            #expect(try tool.busctlProperty(path, s, "CurrentStep") == "s \"comment\"")
            #expect(try tool.busctlProperty(path, s, "ContinueLabel") == "s \"Send feedback\"")
            #expect(try tool.busctlProperty(path, s, "CanGoBack") == "b true")

            // GetStep as JSON: the current step and its field.
            let stepData = try BusctlJSON.data(try tool.busctlCall(path, s, "GetStep", json: true))
            let step = try #require(stepData.first as? [String: Any])
            #expect(BusctlJSON.value(step["id"]) as? String == "comment")
            #expect(BusctlJSON.value(step["announcement"]) as? String == "Step 2 of 2, Comment")
            let fields = try #require(BusctlJSON.value(step["fields"]) as? [[String: Any]])
            #expect(fields.count == 1)
            #expect(BusctlJSON.value(fields.first?["id"]) as? String == "comment")
            #expect(BusctlJSON.value(fields.first?["maxLength"]) as? Int == 200)

            #expect(try tool.busctlCall(path, s, "SetAnswers", ["a{sv}", "1", "comment", "s", "Fine by me"]) == "a{ss} 0")
            #expect(try tool.busctlCall(path, s, "Continue") == "a{ss} 0")
            #expect(try tool.busctlProperty(path, s, "State") == "s \"submitted\"")

            let answers = try #require(try BusctlJSON.data(try tool.busctlCall(path, s, "GetAnswers", json: true)).first as? [String: Any])
            #expect(BusctlJSON.value(answers["stars"]) as? Int == 4)
            #expect((answers["stars"] as? [String: Any])?["type"] as? String == "x", "whole numbers come back as x")
            #expect(BusctlJSON.value(answers["comment"]) as? String == "Fine by me")

            let listed = try tool.busctlCall(Self.manager, m, "ListSessions")
            #expect(listed.contains("\"\(id)\" \"quick\" \"\(path)\" \"submitted\""), "\(listed)")
            let members = try tool.succeed("busctl", ["--address=\(tool.address)", "introspect", "org.flowd.Flow1", path, s])
            for member in [".SetAnswers", ".Continue", ".StepCompleted", ".State"] {
                #expect(members.contains(member), "\(members)")
            }
            try tool.busctlCall(path, s, "Close")
            #expect(try tool.busctlCall(Self.manager, m, "ListSessions") == "a(ssos) 0")
        }
    }

    @Test("gdbus drives the trip flow through a branch, Review and Submit, and gdbus monitor sees the signals")
    func gdbusDrivesTrip() async throws {
        try await withDaemon { fixture in
            let tool = ExternalClient(fixture)
            let s = Self.sessionInterface
            let monitor = try tool.monitor()
            defer { monitor.terminate(grace: .seconds(2)) }

            let started = try tool.gdbusOK(Self.manager, "\(Self.managerInterface).StartSession", ["'trip'", "{'locale': <'en'>}"])
            #expect(started.hasPrefix("(objectpath '/org/flowd/Flow1/session/"), "\(started)")
            let path = try #require(gvariantQuotedStrings(started).first)

            func answer(_ answers: String) throws {
                let reply = try tool.gdbusOK(path, "\(s).SetAnswers", [answers])
                #expect(reply == "(@a{ss} {},)", "SetAnswers \(answers): \(reply)")
                let moved = try tool.gdbusOK(path, "\(s).Continue")
                #expect(moved == "(@a{ss} {},)", "Continue after \(answers): \(moved)")
            }
            #expect(try tool.gdbusOK(path, "\(s).Continue") == "(@a{ss} {},)")
            let errors = try tool.gdbusOK(path, "\(s).SetAnswers", ["{'name': <'A'>}"])
            #expect(errors.hasPrefix("({'name': '"), "\(errors)")
            try answer("{'name': <'Ada Lovelace'>, 'email': <'ada@example.org'>}")
            try answer("{'mode': <'plane'>}")
            #expect(try tool.gdbusOK(path, "org.freedesktop.DBus.Properties.Get", [s, "CurrentStep"]) == "(<'flight'>,)")
            try answer("{'seat': <'aisle'>, 'bags': <int64 1>}")
            try answer("{'extras': <['wifi']>, 'terms': <true>}")
            try answer("{'password': <'s3cret-pass'>, 'confirm': <'s3cret-pass'>}")
            #expect(try tool.gdbusOK(path, "org.freedesktop.DBus.Properties.Get", [s, "State"]) == "(<'review'>,)")

            let review = try tool.gdbusOK(path, "\(s).GetReview")
            #expect(review.contains("'Aisle'") && review.contains("'We email you a summary.'"), "\(review)")
            #expect(!review.contains("s3cret-pass"), "the review masks secure values")
            #expect(try tool.gdbusOK(path, "\(s).Submit") == "()")
            #expect(try tool.gdbusOK(path, "org.freedesktop.DBus.Properties.Get", [s, "State"]) == "(<'submitted'>,)")
            let answers = try tool.gdbusOK(path, "\(s).GetAnswers")
            #expect(answers.contains("'seat': <'aisle'>") && answers.contains("'bags': <int64 1>"), "\(answers)")
            #expect(answers.contains("'extras': <['wifi']>") && answers.contains("'terms': <true>"), "\(answers)")
            #expect(!answers.contains("s3cret-pass"))
            let all = try tool.gdbusOK(path, "org.freedesktop.DBus.Properties.GetAll", [s])
            #expect(all.contains("'CurrentStep': <'complete'>") && all.contains("'FlowId': <'trip'>"), "\(all)")

            // The monitor, another client nobody here wrote, saw the signals.
            #expect(monitor.waitForOutput { $0.contains("org.flowd.Flow1.Session.Submitted") }, "\(monitor.standardOutput)")
            let seen = monitor.standardOutput
            #expect(seen.contains("org.flowd.Flow1.Manager.SessionNew"))
            #expect(seen.contains("org.flowd.Flow1.Session.StepCompleted ('flight'"), "\(seen)")
            #expect(seen.contains("org.flowd.Flow1.Session.Announcement ('Step 4 of 7, Flight',)"), "\(seen)")
            #expect(seen.contains("org.freedesktop.DBus.Properties.PropertiesChanged ('org.flowd.Flow1.Session'"))
            #expect(seen.contains("'State': <'submitted'>"), "\(seen)")
            #expect(!seen.contains("s3cret-pass"), "secure values never go out in signals")
        }
    }
}
