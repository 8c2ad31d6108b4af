import DBus
import Testing
import TestSupport

/// Clients nobody here wrote: GLib's gdbus and systemd's busctl (sd-bus).
@Suite("Interop with gdbus and busctl")
struct InteropTests {
    func run(_ fixture: BusFixture, _ tool: String, _ arguments: [String]) throws -> String {
        let result = try ChildProcess.run(tool, arguments, environment: fixture.bus.environment)
        #expect(result.status == .exited(0), "\(tool) \(arguments): \(result.standardError)")
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("gdbus call, properties and introspect")
    func gdbus() throws {
        let fixture = try BusFixture()
        try fixture.exportService()
        let base = ["--address", fixture.bus.address, "--dest", fixture.serverName.rawValue, "--object-path", "/org/flowd/Test"]
        #expect(try run(fixture, "gdbus", ["call"] + base + ["--method", "org.flowd.Test.Add", "2", "3"]) == "(5,)")
        // Dictionary order on the wire is not significant: check each entry.
        let echoed = try run(fixture, "gdbus", ["call"] + base + ["--method", "org.flowd.Test.Echo", "{'k': <'v'>, 'n': <uint32 7>}"])
        #expect(echoed.hasPrefix("({") && echoed.hasSuffix("},)"))
        #expect(echoed.contains("'k': <'v'>") && echoed.contains("'n': <uint32 7>"))
        #expect(try run(fixture, "gdbus", ["call"] + base + [
            "--method", "org.freedesktop.DBus.Properties.Set", "org.flowd.Test", "Name", "<'from gdbus'>",
        ]) == "()")
        #expect(try run(fixture, "gdbus", ["call"] + base + [
            "--method", "org.freedesktop.DBus.Properties.Get", "org.flowd.Test", "Name",
        ]) == "(<'from gdbus'>,)")
        let introspection = try run(fixture, "gdbus", ["introspect"] + base)
        #expect(introspection.contains("interface org.flowd.Test {"))
        #expect(introspection.contains("Add(in  i a,"))
        #expect(introspection.contains("readwrite s Name = 'from gdbus';"))
        #expect(introspection.contains("@org.freedesktop.DBus.Property.EmitsChangedSignal(\"invalidates\")"))

        // An error from a handler, as gdbus prints it.
        let refused = try ChildProcess.run("gdbus", ["call"] + base + ["--method", "org.flowd.Test.Fail", "'not today'"],
                                           environment: fixture.bus.environment)
        #expect(refused.status != .exited(0))
        #expect(refused.standardError.contains("org.flowd.Test.Error.Refused"))
        #expect(refused.standardError.contains("not today"))
    }

    @Test("busctl call, get-property, introspect and tree")
    func busctl() throws {
        let fixture = try BusFixture()
        try fixture.exportService()
        try TreeAndIntrospectionTests.exportItems(fixture, ids: ["x1", "x2"])
        let address = "--address=\(fixture.bus.address)"
        let name = fixture.serverName.rawValue
        #expect(try run(fixture, "busctl", [address, "call", name, "/org/flowd/Test", "org.flowd.Test", "Add", "ii", "40", "2"])
                == "i 42")
        #expect(try run(fixture, "busctl", [address, "call", name, "/org/flowd/Test", "org.flowd.Test", "Store",
                                             "a{sv}", "2", "a", "s", "x", "b", "u", "3"]) == "a{ss} 0")
        #expect(try run(fixture, "busctl", [address, "get-property", name, "/org/flowd/Test", "org.flowd.Test", "Count"])
                == "u 2", "Store counted the two answers")
        #expect(try run(fixture, "busctl", [address, "call", name, "/org/flowd/Test/item/x2", "org.flowd.Test.Item", "Describe"])
                == "s \"item x2\"")
        let members = try run(fixture, "busctl", [address, "introspect", name, "/org/flowd/Test", "org.flowd.Test"])
        #expect(members.contains(".Store"))
        #expect(members.contains(".Tick"))
        let tree = try run(fixture, "busctl", [address, "tree", name])
        for path in ["/org/flowd/Test", "/org/flowd/Test/item/x1", "/org/flowd/Test/item/x2"] {
            #expect(tree.contains(path), "\(tree)")
        }
        // Errors from our table, as busctl prints them (busctl does not check
        // signatures itself, so the server's InvalidArgs text comes through).
        let result = try ChildProcess.run("busctl", [address, "call", name, "/org/flowd/Test", "org.flowd.Test", "Nope"])
        #expect(result.status != .exited(0))
        #expect(result.standardError.contains("No method Nope"))
        let wrong = try ChildProcess.run(
            "busctl", [address, "call", name, "/org/flowd/Test", "org.flowd.Test", "Add", "ss", "x", "y"])
        #expect(wrong.status != .exited(0))
        #expect(wrong.standardError.contains("org.flowd.Test.Add expects arguments 'ii', got 'ss'"), "\(wrong.standardError)")
    }
}
