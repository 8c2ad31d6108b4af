import Foundation
import Testing

@testable import FlowStore

/// Schema version 3 (one page per upsert while a session stays in its idle
/// period, docs/performance.md): the migration from version 2 keeps
/// everything and fills the new column, expiry uses its index, and an upsert
/// writes one page. No timing here: pages are counted. (How `idle_period`
/// is kept within its bound since version 5: SchemaVersionFiveTests and
/// SchemaVersionSixTests.)
@Suite("Schema version 3")
struct SchemaVersionThreeTests {
    static let period: Int64 = 1 << 26

    /// Every row's `(id, idle_period, updated_at >> 26)`.
    static func periods(_ store: SessionStore) throws -> [String: [Int64]] {
        try store.withDatabase { db throws(StoreError) -> [String: [Int64]] in
            do throws(SQLiteError) {
                let rows = try db.prepare("SELECT id, idle_period, updated_at >> 26 FROM sessions").rows {
                    s throws(SQLiteError) in (s.string(at: 0) ?? "", [s.int64(at: 1), s.int64(at: 2)])
                }
                return Dictionary(uniqueKeysWithValues: rows)
            } catch {
                throw StoreError.from(error, path: store.path)
            }
        }
    }

    /// Runs `sql` on the store's connection, as an administrator's `sqlite3` could.
    static func execute(_ store: SessionStore, _ sql: String) throws {
        try store.withDatabase { db throws(StoreError) in
            do throws(SQLiteError) {
                try db.execute(sql)
            } catch {
                throw StoreError.from(error, path: store.path)
            }
        }
    }

    @Test func migratesAVersionTwoDatabaseFillingTheIdlePeriods() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.file("v2.sqlite")
        let sessions = [
            makeSession("a", state: "submitting", updated: 100), makeSession("b", updated: 5_000_000_000),
            makeSession("c", state: "failed", updated: 300), makeSession("d", owner: 7, updated: -4),
            makeSession("e", updated: 3 * Self.period + 5),
        ]
        try databaseAtSchemaVersion(2, at: path, sessions: sessions)
        let store = try SessionStore(path: path)
        defer { try? store.close() }
        #expect(SessionStore.schemaVersion == 6)
        for s in sessions { #expect(try store.load(id: s.id) == s) }
        #expect(try store.count() == 5)
        for (id, pair) in try Self.periods(store) { #expect(pair[0] == pair[1], "idle period of \(id)") }
        #expect(try store.ids(inState: "submitting") == ["a"])
        #expect(try store.expired(before: 301, limit: 10) == ["d", "a", "c"])
        #expect(try store.expired(before: 5_000_000_001, limit: 10) == ["d", "a", "c", "e", "b"])
        #expect(try store.expired(before: 3 * Self.period + 6, limit: 2) == ["d", "a"])
        #expect(try store.expired(before: 3 * Self.period + 6, limit: 10) == ["d", "a", "c", "e"])
    }

    @Test func expiryUsesTheIdlePeriodIndex() throws {
        let plan = try queryPlan(
            of: """
                SELECT id FROM sessions WHERE idle_period <= (1 >> 26) AND updated_at < 1
                ORDER BY idle_period, updated_at LIMIT 5
                """)
        #expect(plan.contains("USING INDEX sessions_by_idle_period"), "\(plan)")
    }

    @Test func anUpsertWithinItsIdlePeriodWritesOnePage() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let store = try SessionStore(path: dir.file("s.sqlite"))
        defer { try? store.close() }
        let base: Int64 = 1_700_000_000_000_000 & ~(Self.period - 1)
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
        #expect(frames == changes, "\(frames) pages for \(changes) upserts")
        // Into the next period: since schema 5 the entry lags behind and stays.
        for i in 0..<changes {
            try store.upsert(makeSession("s\((i * 37) % 500)", updated: base + Self.period + Int64(i), payload: payload))
        }
        #expect(try store.checkpoint() == changes, "the next period: the entries stay (schema 5)")
        // Far enough on (schema 5's slack): the index entry moves too (two or three pages).
        let far = base + Int64(Schema.idlePeriodSlack) * Self.period
        for i in 0..<changes {
            try store.upsert(makeSession("s\((i * 37) % 500)", updated: far + Int64(i), payload: payload))
        }
        let moved = try store.checkpoint()
        #expect(moved > changes, "\(moved) pages for \(changes) upserts that move their idle period")
    }
}
