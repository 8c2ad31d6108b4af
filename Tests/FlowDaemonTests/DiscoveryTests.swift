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
            #expect(recursive.contains("interface org.freedesktop.DBus.ObjectManager"))
            let managerObject = try tool.succeed(
                "busctl", ["--address=\(tool.address)", "introspect", "org.flowd.Flow1", "/org/flowd/Flow1"])
            #expect(managerObject.contains("org.freedesktop.DBus.ObjectManager") && managerObject.contains(".GetManagedObjects"),
                    "\(managerObject)")
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

    /// A client of flowd written in C with what `gdbus-codegen` made from
    /// the shipped XML: the Manager's proxy, a method call, and GLib's
    /// object manager client, which finds the sessions through
    /// `GetManagedObjects` and builds their proxies from its properties.
    static let generatedClient = #"""
        #include <stdio.h>
        #include "flowd-generated.h"

        int main(int argc, char **argv) {
            GError *error = NULL;
            GDBusConnection *bus = g_dbus_connection_new_for_address_sync(
                argv[1], G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                NULL, NULL, &error);
            if (bus == NULL) { fprintf(stderr, "connect: %s\n", error->message); return 1; }
            FlowdFlow1Manager *manager = flowd_flow1_manager_proxy_new_sync(
                bus, G_DBUS_PROXY_FLAGS_NONE, "org.flowd.Flow1", "/org/flowd/Flow1", NULL, &error);
            if (manager == NULL) { fprintf(stderr, "manager: %s\n", error->message); return 1; }
            printf("version %s\n", flowd_flow1_manager_get_version(manager));
            GVariant *flows = NULL;
            if (!flowd_flow1_manager_call_list_flows_sync(manager, &flows, NULL, &error)) {
                fprintf(stderr, "ListFlows: %s\n", error->message); return 1;
            }
            printf("flows %lu\n", (unsigned long) g_variant_n_children(flows));
            GDBusObjectManager *objects = flowd_object_manager_client_new_sync(
                bus, G_DBUS_OBJECT_MANAGER_CLIENT_FLAGS_NONE, "org.flowd.Flow1", "/org/flowd/Flow1", NULL, &error);
            if (objects == NULL) { fprintf(stderr, "objects: %s\n", error->message); return 1; }
            GList *list = g_dbus_object_manager_get_objects(objects);
            for (GList *item = list; item != NULL; item = item->next) {
                FlowdFlow1Session *session = flowd_object_get_flow1_session(FLOWD_OBJECT(item->data));
                if (session == NULL) continue;
                printf("session %s %s %s\n", g_dbus_object_get_object_path(G_DBUS_OBJECT(item->data)),
                       flowd_flow1_session_get_flow_id(session), flowd_flow1_session_get_state(session));
                g_object_unref(session);
            }
            return 0;
        }
        """#

    @Test("gdbus-codegen makes a C client from the shipped XML, with the documentation, that finds and reads the sessions")
    func generatedCode() async throws {
        let directory = try TemporaryDirectory()
        let xml = ["org.flowd.Flow1.Manager", "org.flowd.Flow1.Session"].map { "\(IntrospectionTests.xmlDirectory)/\($0).xml" }
        let tool = ExternalClient(address: "")
        try tool.succeed("gdbus-codegen", [
            "--interface-prefix", "org.flowd.", "--c-namespace", "Flowd", "--c-generate-object-manager",
            "--output-directory", directory.path, "--generate-c-code", "flowd-generated", "--generate-docbook", "doc",
        ] + xml)
        let header = try String(contentsOfFile: directory.file("flowd-generated.h"), encoding: .utf8)
        for symbol in [
            "flowd_flow1_manager_call_start_session_sync", "flowd_flow1_manager_call_list_flows_sync",
            "flowd_flow1_manager_get_session_count", "flowd_flow1_session_call_submit_sync",
            "flowd_flow1_session_call_submit_with_options_sync", "flowd_flow1_session_get_state",
            "flowd_object_manager_client_new_sync", "flowd_object_get_flow1_session",
        ] {
            #expect(header.contains(symbol), "\(symbol) is not in the generated header")
        }
        // The DocString annotations become its documentation.
        let docbook = try String(contentsOfFile: directory.file("doc-org.flowd.Flow1.Session.xml"), encoding: .utf8)
        #expect(docbook.contains("timeoutSeconds"))

        // Compiled against GIO, it works against a running flowd.
        _ = try directory.write("client.c", Self.generatedClient)
        let flags = try tool.succeed("pkg-config", ["--cflags", "--libs", "gio-2.0"]).split(separator: " ").map(String.init)
        try tool.succeed("cc", ["-o", directory.file("client"), directory.file("client.c"), directory.file("flowd-generated.c"),
                            "-I", directory.path] + flags)
        try await withDaemon { fixture in
            let sessions = [try await fixture.client.start("trip"), try await fixture.client.start("quick")]
            let output = try ExternalClient(fixture).succeed(directory.file("client"), [fixture.bus.address])
            #expect(output.contains("flows 3"), "\(output)")
            for id in sessions { #expect(output.contains("session \(sessionPath(id).rawValue) "), "\(output)") }
            #expect(output.contains("session \(sessionPath(sessions[0]).rawValue) trip editing"), "\(output)")
        }
    }
}
