import Testing

@testable import FlowStore

/// A change given where its row was (`StoredRow`, docs/performance.md, the
/// tenth round, G2): the row is found by its rowid, and a rowid that is no
/// longer the session's (another session's row, a deleted one) never
/// changes another row or loses the change.
@Suite("Changes that know their row")
struct StoredRowTests {
    static let period: Int64 = 1 << 26
    static let base: Int64 = 40 * period

    @Test func anInsertAndALoadSayWhereTheRowIsAndAChangeKeepsIt() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let store = try SessionStore(path: dir.file("s.sqlite"))
        defer { try? store.close() }
        try store.upsert(makeSession("other", updated: Self.base))
        let inserted = try #require(try store.upsert(makeSession("a", updated: Self.base), row: nil))
        let loaded = try #require(try store.loadRow(id: "a"))
        #expect(loaded.row == inserted)
        #expect(loaded.session == makeSession("a", updated: Self.base))
        // Within the idle period: found by the rowid, which stays.
        let changed = makeSession("a", state: "review", updated: Self.base + 10, payload: [1, 2, 3])
        #expect(try store.upsert(changed, row: inserted) == inserted)
        #expect(try store.load(id: "a") == changed)
        #expect(try store.load(id: "other") == makeSession("other", updated: Self.base))
        // An update by id (no row given) does not learn where the row is.
        #expect(try store.upsert(makeSession("a", updated: Self.base + 20), row: nil) == nil)
        #expect(try store.count() == 2)
    }

    @Test func anotherSessionsRowIsLeftAsItIsAndTheChangeLands() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let store = try SessionStore(path: dir.file("s.sqlite"))
        defer { try? store.close() }
        let a = try #require(try store.upsert(makeSession("a", updated: Self.base), row: nil))
        let b = try #require(try store.upsert(makeSession("b", updated: Self.base), row: nil))
        #expect(a != b)
        let changed = makeSession("a", state: "review", updated: Self.base + 5, payload: [9])
        // Given b's row, the change of a: b stays, a changes, the row is not known after.
        #expect(try store.upsert(changed, row: b) == nil)
        #expect(try store.load(id: "b") == makeSession("b", updated: Self.base))
        #expect(try store.load(id: "a") == changed)
        #expect(try store.loadRow(id: "a")?.row == a)
        #expect(try store.count() == 2)
        // The id taken by another owner, given its own row: refused, nothing changes.
        #expect(throws: StoreError.identityMismatch(id: "b")) {
            try store.upsert(makeSession("b", owner: 1, updated: Self.base + 6), row: b)
        }
        #expect(try store.load(id: "b") == makeSession("b", updated: Self.base))
    }

    @Test func aDeletedSessionsRowAndAnEntryThatMustMove() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let store = try SessionStore(path: dir.file("s.sqlite"))
        defer { try? store.close() }
        let a = try #require(try store.upsert(makeSession("a", updated: Self.base), row: nil))
        try store.upsert(makeSession("b", updated: Self.base))
        // Deleted behind the session's back: the change inserts it again, at a new row.
        #expect(try store.delete(id: "a"))
        let again = try #require(try store.upsert(makeSession("a", updated: Self.base + 1), row: a))
        #expect(try store.loadRow(id: "a")?.row == again)
        #expect(try store.count() == 2)
        // Sixteen periods on, the entry must move: the change moves it, by id.
        let later = makeSession("a", updated: Self.base + 16 * Self.period)
        #expect(try store.upsert(later, row: again) == nil)
        #expect(try store.load(id: "a") == later)
        #expect(try SchemaVersionThreeTests.periods(store)["a"] == [56, 56])
        #expect(try store.loadRow(id: "a")?.row == again)
    }

    /// The update by rowid finds the row without an index.
    @Test func theUpdateAtARowUsesTheRowid() throws {
        let plan = try queryPlan(of: SessionQueries.updateAtRowSQL.description)
        #expect(plan.contains("USING INTEGER PRIMARY KEY (rowid=?)"), "\(plan)")
    }
}
