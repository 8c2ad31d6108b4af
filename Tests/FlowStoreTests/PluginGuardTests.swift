import Foundation
import Testing
import TestSupport

@testable import FlowStore

@Suite("SessionStore: disabled plugins")
struct PluginGuardTests {
    @Test func aDisabledPluginIsKeptAcrossRestartsWithItsFileIdentity() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.file("s.sqlite")
        let plugin = dir.file("libBad.so")
        try writeFile(plugin, Data("v1".utf8))
        let identity = try FileSystem.status(plugin).identity

        let first = try SessionStore(path: path, configuration: .init(clock: { 42 }))
        try first.disablePlugin(path: plugin, name: "bad", reason: "crashed the daemon during a call", file: identity)
        let expected = DisabledPlugin(
            path: plugin, name: "bad", reason: "crashed the daemon during a call", disabledAt: 42, file: identity)
        #expect(try first.disabledPlugins() == [expected])
        try first.close()

        // Still recorded after a restart, with the identity the loader compares.
        let again = try SessionStore(path: path)
        #expect(try again.disabledPlugins() == [expected])
        // The loader found the file changed: the daemon clears the record.
        #expect(try again.enablePlugin(path: plugin))
        #expect(try again.disabledPlugins().isEmpty)
        try again.close()
    }

    @Test func disableAndEnableByHand() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let store = try SessionStore(path: dir.file("s.sqlite"), configuration: .init(clock: { 7 }))
        try store.disablePlugin(path: "/p1.so", name: "one", reason: "first", file: nil)
        try store.disablePlugin(path: "/p1.so", name: "uno", reason: "second", file: nil)  // replaces
        let edges = FileIdentity(device: .max, inode: 1, size: 2, modificationTime: -3)
        try store.disablePlugin(path: "/p0.so", name: "", reason: "other", file: edges)
        let all = try store.disabledPlugins()
        #expect(all.map(\.path) == ["/p0.so", "/p1.so"])
        #expect(all.map(\.name) == ["", "uno"])
        #expect(all.last?.reason == "second")
        #expect(all.last?.file == nil)
        // Values at the edges of the integer ranges survive the round trip.
        #expect(all.first?.file == edges)
        #expect(try store.enablePlugin(path: "/p1.so"))
        #expect(try store.enablePlugin(path: "/p1.so") == false)
        #expect(try store.disabledPlugins().map(\.path) == ["/p0.so"])
        #expect(throws: StoreError.self) { try store.disablePlugin(path: "", name: "x", reason: "x", file: nil) }
    }

    @Test func aVersionThreeDatabaseKeepsItsDisabledPluginsUnderTheirPathWithNoName() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.file("v3.sqlite")
        let identity = FileIdentity(device: 2049, inode: 77, size: 4096, modificationTime: 1_700_000_000_123_456_789)
        let recorded = [
            DisabledPlugin(path: "/usr/lib/flowd/plugins/libBad.so", name: "", reason: "crashed", disabledAt: 5, file: identity),
            DisabledPlugin(path: "/etc/flowd/plugins/libOld.so", name: "", reason: "crashed too", disabledAt: 6, file: nil),
        ]
        let session = makeSession("s", updated: 9)
        try databaseAtSchemaVersion(3, at: path, sessions: [session], disabledPlugins: recorded)

        let store = try SessionStore(path: path)
        defer { try? store.close() }
        // The column that held the path under the name `plugin` is `path`
        // now, and no row lost anything; the name was never recorded.
        #expect(try store.disabledPlugins() == recorded.sorted { $0.path < $1.path })
        #expect(try store.load(id: "s") == session)
        let columns = try store.withDatabase { db throws(StoreError) -> [String] in
            do throws(SQLiteError) {
                return try db.prepare("SELECT name FROM pragma_table_info('plugin_state') ORDER BY cid").rows {
                    s throws(SQLiteError) in s.string(at: 0) ?? ""
                }
            } catch {
                throw StoreError.from(error, path: path)
            }
        }
        #expect(columns.first == "path" && columns.contains("name") && !columns.contains("plugin"), "\(columns)")

        // A quarantine recorded now keeps the plugin's own name.
        try store.disablePlugin(path: "/usr/lib/flowd/plugins/libBad.so", name: "bad", reason: "crashed again", file: identity)
        #expect(try store.disabledPlugins().first { $0.path.hasSuffix("libBad.so") }?.name == "bad")
    }
}
