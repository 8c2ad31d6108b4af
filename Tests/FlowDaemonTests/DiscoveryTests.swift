import DBus
import Foundation
import Testing
import TestSupport

/// Every node of flowd's tree introspects, so standard tools find the
/// sessions (docs/dbus-api.md): `/org/flowd/Flow1/session` lists the
/// caller's own sessions, every one for root.
@Suite("Discovery with busctl and gdbus")
struct DiscoveryTests {
    @Test("busctl tree and gdbus introspect --recurse walk from / to the caller's sessions")
    func recursiveIntrospection() async throws {
        try await withDaemon { fixture in
            let sessions = [try await fixture.client.start("trip"), try await fixture.client.start("quick")]
            let tool = ExternalClient(fixture)
            let tree = try tool.succeed("busctl", ["--address=\(tool.address)", "tree", "org.flowd.Flow1"])
            #expect(tree.contains("/org/flowd/Flow1/session"), "\(tree)")
            for id in sessions { #expect(tree.contains(sessionPath(id).rawValue), "\(tree)") }
            let recursive = try tool.succeed(
                "gdbus", ["introspect", "--address", tool.address, "--dest", "org.flowd.Flow1", "--object-path", "/",
                          "--recurse"])
            for id in sessions { #expect(recursive.contains(sessionPath(id).rawValue), "\(recursive)") }
            #expect(recursive.contains("interface org.flowd.Flow1.Session"))
            #expect(recursive.contains("interface org.flowd.Flow1.Manager"))
        }
    }

    @Test("under the session node another uid sees only its own sessions; root sees every one",
          .enabled(if: ExternalClient.canSwitchUser, "needs root and setpriv"))
    func perCallerListing() async throws {
        try await withDaemon(DaemonSettings(allowUsers: [ExternalClient.nobody])) { fixture in
            let rootSession = try await fixture.client.start("trip")
            let nobody = ExternalClient(fixture, uid: ExternalClient.nobody)
            let started = try nobody.gdbusOK("/org/flowd/Flow1", "org.flowd.Flow1.Manager.StartSession", ["'quick'", "{}"])
            let nobodyPath = try #require(gvariantQuotedStrings(started).first)
            let nobodyID = String(nobodyPath.split(separator: "/").last ?? "")
            let arguments = ["introspect", "--xml", "--address", nobody.address, "--dest", "org.flowd.Flow1",
                             "--object-path", "/org/flowd/Flow1/session"]
            let nobodysView = try nobody.succeed("gdbus", arguments)
            #expect(nobodysView.contains(nobodyID) && !nobodysView.contains(rootSession), "\(nobodysView)")
            let rootsView = try ExternalClient(fixture).succeed("gdbus", arguments)
            #expect(rootsView.contains(nobodyID) && rootsView.contains(rootSession), "\(rootsView)")
            let tree = try nobody.succeed("busctl", ["--address=\(nobody.address)", "tree", "org.flowd.Flow1"])
            #expect(tree.contains(nobodyPath) && !tree.contains(rootSession), "\(tree)")
        }
    }
}
