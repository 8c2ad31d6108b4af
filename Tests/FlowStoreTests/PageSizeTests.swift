import Testing

@testable import FlowStore

/// The page size (docs/performance.md, the sixth round): a new database gets
/// ``SessionStore/defaultPageSize`` (or the configured size), and a database
/// written by an earlier flowd with SQLite's 4096-byte pages keeps them and
/// works as before: WAL mode cannot change a page size, and nothing at open
/// tries to.
@Suite("SessionStore: page size")
struct PageSizeTests {
    static func pageSize(_ store: SessionStore) throws -> Int64 {
        try store.withDatabase { db throws(StoreError) -> Int64 in
            do throws(SQLiteError) {
                return try db.scalarInteger("PRAGMA page_size") ?? 0
            } catch {
                throw StoreError.from(error, path: store.path)
            }
        }
    }

    @Test func aNewDatabaseHasTheDefaultPageSize() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let store = try SessionStore(path: dir.file("s.sqlite"))
        try store.upsert(makeSession("a", updated: 1))
        #expect(try Self.pageSize(store) == 2048)
        #expect(SessionStore.defaultPageSize == 2048)
        try store.close()
        // Reopened (with another size asked for): the file keeps its pages.
        let reopened = try SessionStore(path: dir.file("s.sqlite"), configuration: .init(pageSize: 8192))
        defer { try? reopened.close() }
        #expect(try Self.pageSize(reopened) == 2048)
        #expect(try reopened.load(id: "a") == makeSession("a", updated: 1))
    }

    @Test(arguments: [1024, 4096])
    func aConfiguredPageSizeIsUsedForANewDatabase(size: Int) throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let store = try SessionStore(path: dir.file("s.sqlite"), configuration: .init(pageSize: size))
        defer { try? store.close() }
        #expect(try Self.pageSize(store) == Int64(size))
        #expect(try store.count() == 0)
    }

    /// A database as the flowd before this change wrote it (schema 4, SQLite's
    /// 4096-byte pages, WAL): every session reads back, changes and new
    /// sessions are stored, and a change within its idle period still writes
    /// one page.
    @Test func anOlderDatabaseKeepsItsPagesAndWorks() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.file("old.sqlite")
        let payload = [UInt8](repeating: 9, count: 900)
        let sessions = (0..<50).map { makeSession("s\($0)", updated: 1_000 + Int64($0), payload: payload) }
        try databaseAtSchemaVersion(4, at: path, sessions: sessions)
        let store = try SessionStore(path: path)
        defer { try? store.close() }
        #expect(try Self.pageSize(store) == 4096)
        for s in sessions { #expect(try store.load(id: s.id) == s) }
        try store.checkpoint()
        var changed = sessions[7]
        changed.updatedAt += 1
        changed.payload = [UInt8](repeating: 3, count: 900)
        try store.upsert(changed)
        #expect(try store.checkpoint() == 1)
        #expect(try store.load(id: changed.id) == changed)
        try store.upsert(makeSession("new", updated: 2_000))
        #expect(try store.count() == 51)
        #expect(try Self.pageSize(store) == 4096)
    }

    @Test(arguments: [0, 256, 3000, 131_072])
    func aPageSizeSQLiteCannotUseIsRefused(size: Int) throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        #expect(throws: StoreError.invalidArgument("a page size must be a power of two from 512 to 65536, not \(size)")) {
            try SessionStore(path: dir.file("s.sqlite"), configuration: .init(pageSize: size))
        }
    }
}
