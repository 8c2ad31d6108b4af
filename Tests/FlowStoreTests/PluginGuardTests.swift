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
        try first.disablePlugin(path: plugin, reason: "crashed the daemon during a call", file: identity)
        let expected = DisabledPlugin(path: plugin, reason: "crashed the daemon during a call", disabledAt: 42, file: identity)
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
        try store.disablePlugin(path: "/p1.so", reason: "first", file: nil)
        try store.disablePlugin(path: "/p1.so", reason: "second", file: nil)  // replaces
        let edges = FileIdentity(device: .max, inode: 1, size: 2, modificationTime: -3)
        try store.disablePlugin(path: "/p0.so", reason: "other", file: edges)
        let all = try store.disabledPlugins()
        #expect(all.map(\.path) == ["/p0.so", "/p1.so"])
        #expect(all.last?.reason == "second")
        #expect(all.last?.file == nil)
        // Values at the edges of the integer ranges survive the round trip.
        #expect(all.first?.file == edges)
        #expect(try store.enablePlugin(path: "/p1.so"))
        #expect(try store.enablePlugin(path: "/p1.so") == false)
        #expect(try store.disabledPlugins().map(\.path) == ["/p0.so"])
        #expect(throws: StoreError.self) { try store.disablePlugin(path: "", reason: "x", file: nil) }
    }
}
