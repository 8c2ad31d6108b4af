import Foundation
import Testing

@testable import FlowStore

/// Schema version 2 (fewer index writes per upsert, docs/performance.md):
/// the migration from version 1 keeps everything (through version 3, which
/// replaced the idle-time index: SchemaVersionThreeTests), the interrupted
/// submit search uses its index, and an upsert writes few pages. No timing
/// here: pages are counted.
@Suite("Schema version 2")
struct SchemaVersionTwoTests {
    @Test func migratesAVersionOneDatabaseKeepingEverything() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.file("v1.sqlite")
        let sessions = [
            makeSession("a", state: "submitting", updated: 100), makeSession("b", updated: 5_000_000_000),
            makeSession("c", state: "failed", updated: 300), makeSession("d", owner: 7, updated: -4),
        ]
        try databaseAtSchemaVersion(1, at: path, sessions: sessions)
        let store = try SessionStore(path: path)
        defer { try? store.close() }
        #expect(SessionStore.schemaVersion == 6)
        for s in sessions { #expect(try store.load(id: s.id) == s) }
        #expect(try store.count() == 4)
        #expect(try store.ids(inState: "submitting") == ["a"])
        #expect(try store.ids(inState: "failed") == ["c"])
        #expect(try store.expired(before: 301, limit: 10) == ["d", "a", "c"])
        #expect(try store.expired(before: 301, limit: 2) == ["d", "a"])
        let indexes = try store.withDatabase { db throws(StoreError) in
            do throws(SQLiteError) {
                return try db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'sessions' AND sql IS NOT NULL ORDER BY name")
                    .rows { s throws(SQLiteError) in s.string(at: 0) ?? "" }
            } catch {
                throw StoreError.from(error, path: path)
            }
        }
        #expect(indexes == ["sessions_by_idle_period", "sessions_by_owner", "sessions_by_state"])
    }

    @Test func theInterruptedSubmitSearchUsesItsIndex() throws {
        let plan = try queryPlan(of: "SELECT id FROM sessions WHERE state = 'submitting' ORDER BY id")
        #expect(plan.contains("USING INDEX sessions_by_state"), "\(plan)")
    }

    @Test func anUpsertThatKeepsStateAndPeriodWritesAtMostTwoPages() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let store = try SessionStore(path: dir.file("s.sqlite"))
        defer { try? store.close() }
        let base: Int64 = 1_700_000_000_000_000 & ~((1 << 26) - 1)
        let payload = [UInt8](repeating: 7, count: 480)
        try store.transaction { tx throws(StoreError) in
            for i in 0..<500 { try tx.upsert(makeSession("s\(i)", updated: base, payload: payload)) }
        }
        try store.checkpoint()
        let changes = 40
        for i in 0..<changes {
            try store.upsert(makeSession("s\((i * 37) % 500)", updated: base + Int64(i + 1), payload: payload))
        }
        let frames = try store.checkpoint()
        // Version 1 wrote four pages per such upsert: the row's, and an entry
        // in each of the state and updated_at indexes (two for the latter).
        #expect(frames <= 2 * changes, "\(frames) pages for \(changes) upserts")
        #expect(frames >= changes)
    }
}
