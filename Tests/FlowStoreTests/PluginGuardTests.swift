import Foundation
import Testing

@testable import FlowStore

@Suite("SessionStore: disabled plugins")
struct PluginGuardTests {
    @Test func aDisabledPluginStaysDisabledAcrossRestartsUntilItsFileChanges() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.file("s.sqlite")
        let plugin = dir.file("libBad.so")
        try writeFile(plugin, Data("v1".utf8))
        let identity = try PluginFileIdentity.of(path: plugin)

        let first = try SessionStore(path: path, configuration: .init(clock: { 42 }))
        try first.disablePlugin("bad", reason: "crashed the daemon during a call", file: identity)
        let expected = DisabledPlugin(name: "bad", reason: "crashed the daemon during a call", disabledAt: 42, file: identity)
        #expect(try first.disabledPlugin(named: "bad", currentFile: identity) == expected)
        #expect(try first.disabledPlugin(named: "good", currentFile: nil) == nil)
        try first.close()

        // Still disabled after a restart while the file is unchanged.
        let again = try SessionStore(path: path)
        #expect(try again.disabledPlugins() == [expected])
        #expect(try again.disabledPlugin(named: "bad", currentFile: try PluginFileIdentity.of(path: plugin)) == expected)
        // An unknown current file keeps it disabled.
        #expect(try again.disabledPlugin(named: "bad", currentFile: nil) == expected)

        // The administrator installs a new version: the record is cleared.
        try writeFile(plugin, Data("version 2".utf8))
        let changed = try PluginFileIdentity.of(path: plugin)
        #expect(changed != identity)
        #expect(try again.disabledPlugin(named: "bad", currentFile: changed) == nil)
        #expect(try again.disabledPlugins().isEmpty)
        try again.close()
    }

    @Test func disableAndEnableByHand() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let store = try SessionStore(path: dir.file("s.sqlite"), configuration: .init(clock: { 7 }))
        try store.disablePlugin("p1", reason: "first", file: nil)
        try store.disablePlugin("p1", reason: "second", file: nil)  // replaces
        try store.disablePlugin("p0", reason: "other", file: PluginFileIdentity(device: .max, inode: 1, size: 2, modificationTime: -3))
        let all = try store.disabledPlugins()
        #expect(all.map(\.name) == ["p0", "p1"])
        #expect(all.last?.reason == "second")
        // Values at the edges of the integer ranges survive the round trip.
        #expect(all.first?.file == PluginFileIdentity(device: .max, inode: 1, size: 2, modificationTime: -3))
        #expect(try store.enablePlugin("p1"))
        #expect(try store.enablePlugin("p1") == false)
        #expect(try store.disabledPlugins().map(\.name) == ["p0"])
        #expect(throws: StoreError.self) { try store.disablePlugin("", reason: "x", file: nil) }
        #expect(throws: StoreError.self) { try PluginFileIdentity.of(path: dir.file("missing.so")) }
    }
}
