import FlowdSystem
import Testing

@testable import FlowStore

/// Schema version 6 (no idle-period triggers, docs/performance.md, the
/// ninth round, C1): flowd's own upsert keeps `idle_period` within the bound
/// expiry relies on, a database of every earlier version migrates with its
/// data, and what a hand-made `UPDATE` of `updated_at` does now
/// (docs/admin.md). No timing here.
@Suite("Schema version 6")
struct SchemaVersionSixTests {
    static let period: Int64 = 1 << 26
    static let slack = Int64(Schema.idlePeriodSlack)

    static func periods(_ store: SessionStore) throws -> [String: [Int64]] {
        try SchemaVersionThreeTests.periods(store)
    }

    /// The triggers on `sessions`, by name.
    static func triggers(_ store: SessionStore) throws -> [String] {
        try store.withDatabase { db throws(StoreError) -> [String] in
            do throws(SQLiteError) {
                return try db.prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 'sessions' ORDER BY name")
                    .rows { s throws(SQLiteError) in s.string(at: 0) ?? "" }
            } catch {
                throw StoreError.from(error, path: store.path)
            }
        }
    }

    /// A database of `version` (1 to 5) with sessions, one of them in
    /// `submitting`, a disabled plugin and, from version 5, an entry that
    /// lags behind its row: after the migration everything is there, the
    /// triggers are gone, and flowd's changes and expiry work as in a new store.
    @Test(arguments: 1...5)
    func migratesKeepingEverything(from version: Int) throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.file("v\(version).sqlite")
        let base = 40 * Self.period
        var sessions = [
            makeSession("a", state: "submitting", updated: base + 100), makeSession("b", updated: base + 9 * Self.period),
            makeSession("c", state: "failed", updated: base + 300), makeSession("d", owner: 7, updated: -4),
            makeSession("e", flow: "other", updated: base + 2 * Self.period + 5),
        ]
        let plugin = DisabledPlugin(
            path: "/usr/lib/flowd/plugins/libBad.so", name: version < 4 ? "" : "bad", reason: "crashed", disabledAt: 5,
            file: FileIdentity(device: 3, inode: 77, size: 1234, modificationTime: 99))
        try databaseAtSchemaVersion(version, at: path, sessions: sessions, disabledPlugins: [plugin])
        if version == 5 {
            // Schema 5's trigger leaves an entry lagging by up to 15 periods.
            let db = try SQLiteDatabase(path: path)
            try db.execute("UPDATE sessions SET updated_at = updated_at + \(3 * Self.period) WHERE id = 'e'")
            try db.close()
            sessions[4].updatedAt += 3 * Self.period
        }
        let store = try SessionStore(path: path)
        defer { try? store.close() }
        #expect(SessionStore.schemaVersion == 6)
        let stored = try store.withDatabase { db throws(StoreError) in
            do throws(SQLiteError) { return try db.scalarInteger("PRAGMA user_version") } catch {
                throw StoreError.from(error, path: path)
            }
        }
        #expect(stored == 6)
        #expect(try Self.triggers(store) == ["sessions_counted_delete", "sessions_counted_insert"])
        for s in sessions { #expect(try store.load(id: s.id) == s) }
        #expect(try store.count() == 5)
        #expect(try store.disabledPlugins() == [plugin])
        #expect(try store.ids(inState: "submitting") == ["a"])
        let periods = try Self.periods(store)
        #expect(periods["e"] == (version == 5 ? [42, 45] : [42, 42]))
        #expect(periods.filter { $0.key != "e" }.values.allSatisfy { $0[0] == $0[1] })
        #expect(try store.expired(before: base + 301, limit: 10) == ["d", "a", "c"])
        #expect(Set(try store.expired(before: sessions[4].updatedAt + 1, limit: 10)) == ["d", "a", "c", "e"])
        // flowd's changes: a period on the entry stays, 16 on it moves, and
        // a new session's entry is its period; the counter follows.
        var a = sessions[0]
        a.updatedAt += Self.period
        try store.upsert(a)
        var b = sessions[1]
        b.updatedAt += Self.slack * Self.period
        b.state = "review"
        try store.upsert(b)
        try store.upsert(makeSession("f", updated: base + 5))
        #expect(try Self.periods(store)["a"] == [40, 41])
        #expect(try Self.periods(store)["b"] == [49 + Self.slack, 49 + Self.slack])
        #expect(try Self.periods(store)["f"] == [40, 40])
        #expect(try store.load(id: "b") == b)
        #expect(try store.count() == 6)
        #expect(try store.expired(before: base + 301, limit: 10) == ["d", "f", "c"])
        #expect(try store.expired(before: a.updatedAt + 1, limit: 10) == ["d", "f", "c", "a"])
        #expect(throws: StoreError.identityMismatch(id: "c")) { try store.upsert(makeSession("c", owner: 9)) }
        #expect(try store.load(id: "c") == sessions[2])
    }

    /// flowd's own changes keep the bound without triggers: an entry stays
    /// while it lags by fewer than 16 periods, moves at 16, and moves back
    /// when the clock was stepped back behind it.
    @Test func flowdsChangesKeepTheBound() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let store = try SessionStore(path: dir.file("s.sqlite"))
        defer { try? store.close() }
        #expect(try Self.triggers(store) == ["sessions_counted_delete", "sessions_counted_insert"])
        let base = 20 * Self.period
        try store.upsert(makeSession("t", updated: base + 3))
        try store.upsert(makeSession("t", updated: base + (Self.slack - 1) * Self.period))  // lags, stays
        try store.upsert(makeSession("v", updated: base + 4))
        try store.upsert(makeSession("v", updated: base + Self.slack * Self.period))  // too far behind: moves
        try store.upsert(makeSession("w", updated: base + 9 * Self.period))
        try store.upsert(makeSession("w", updated: base - 3 * Self.period))  // the clock stepped back
        let periods = try Self.periods(store)
        #expect(periods["t"] == [20, 20 + Self.slack - 1])
        #expect(periods["v"] == [20 + Self.slack, 20 + Self.slack])
        #expect(periods["w"] == [17, 17])
        #expect(try store.expired(before: base - 3 * Self.period + 1, limit: 10) == ["w"])
        #expect(try store.expired(before: base + (Self.slack - 1) * Self.period + 1, limit: 10) == ["w", "t"])
    }

    /// An administrator's `UPDATE` of `updated_at` alone is not corrected:
    /// moved on, the session expires exactly as `updated_at` says; moved
    /// back, not before its entry's period (late, never early), unless
    /// `idle_period` is set with it as docs/admin.md says; flowd's next
    /// change of the row puts its entry right.
    @Test func handMadeChangesOfUpdatedAt() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let store = try SessionStore(path: dir.file("s.sqlite"))
        defer { try? store.close() }
        let base = 100 * Self.period
        for id in ["on", "back", "backWithPeriod"] { try store.upsert(makeSession(id, updated: base + 10)) }
        let later = base + 30 * Self.period
        let earlier = base - 10 * Self.period
        try SchemaVersionThreeTests.execute(store, "UPDATE sessions SET updated_at = \(later) WHERE id = 'on'")
        try SchemaVersionThreeTests.execute(store, "UPDATE sessions SET updated_at = \(earlier) WHERE id = 'back'")
        try SchemaVersionThreeTests.execute(
            store, "UPDATE sessions SET updated_at = \(earlier), idle_period = \(earlier) >> 26 WHERE id = 'backWithPeriod'")
        #expect(try Self.periods(store)["on"] == [100, 130])
        #expect(try Self.periods(store)["back"] == [100, 90])
        #expect(try store.expired(before: earlier + 1, limit: 10) == ["backWithPeriod"])
        #expect(try store.expired(before: base, limit: 10) == ["backWithPeriod", "back"])
        #expect(try store.expired(before: later, limit: 10) == ["backWithPeriod", "back"])
        #expect(try store.expired(before: later + 1, limit: 10) == ["backWithPeriod", "back", "on"])
        // flowd's next change moves both entries to their change's period.
        try store.upsert(makeSession("on", updated: later + 5))
        try store.upsert(makeSession("back", updated: earlier + 5))
        #expect(try Self.periods(store)["on"] == [130, 130])
        #expect(try Self.periods(store)["back"] == [90, 90])
        #expect(try store.expired(before: earlier + 6, limit: 10) == ["backWithPeriod", "back"])
    }

    /// flowd's update finds the row through the primary key, whatever the
    /// idle-period term in its `WHERE`.
    @Test func theUpdateUsesThePrimaryKey() throws {
        let plan = try queryPlan(of: SessionQueries.updateSQL.description)
        #expect(plan.contains("USING INDEX sqlite_autoindex_sessions_1 (id=?)"), "\(plan)")
    }
}
