import Testing

@testable import FlowStore

/// Schema version 5 (an idle-period entry moves once in about 18 minutes of
/// activity, docs/performance.md, the seventh round): `idle_period` is a
/// lower bound of `updated_at >> 26` lagging by fewer than
/// ``Schema/idlePeriodSlack`` periods, whoever writes; expiry stays exact;
/// a database of version 4 migrates with its data. No timing here: pages
/// are counted.
@Suite("Schema version 5")
struct SchemaVersionFiveTests {
    static let period: Int64 = 1 << 26
    static let slack = Int64(Schema.idlePeriodSlack)

    /// Every row's id and `[idle_period, updated_at >> 26]`.
    static func periods(_ store: SessionStore) throws -> [String: [Int64]] {
        try SchemaVersionThreeTests.periods(store)
    }

    /// Whether every row's period is within the bound the triggers keep.
    static func withinBound(_ store: SessionStore) throws -> Bool {
        try periods(store).values.allSatisfy { pair in pair[0] <= pair[1] && pair[1] - pair[0] < slack }
    }

    @Test func migratesAVersionFourDatabaseKeepingEverything() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.file("v4.sqlite")
        let base = 40 * Self.period
        let sessions = [
            makeSession("a", state: "submitting", updated: base + 100), makeSession("b", updated: base + 9 * Self.period),
            makeSession("c", state: "failed", updated: base + 300), makeSession("d", owner: 7, updated: -4),
        ]
        let plugin = DisabledPlugin(path: "/usr/lib/flowd/plugins/libBad.so", name: "bad", reason: "crashed", disabledAt: 5, file: nil)
        try databaseAtSchemaVersion(4, at: path, sessions: sessions, disabledPlugins: [plugin])
        let store = try SessionStore(path: path)
        defer { try? store.close() }
        #expect(SessionStore.schemaVersion == 5)
        let version = try store.withDatabase { db throws(StoreError) in
            do throws(SQLiteError) { return try db.scalarInteger("PRAGMA user_version") } catch {
                throw StoreError.from(error, path: path)
            }
        }
        #expect(version == 5)
        for s in sessions { #expect(try store.load(id: s.id) == s) }
        #expect(try store.count() == 4)
        #expect(try store.disabledPlugins() == [plugin])
        for (id, pair) in try Self.periods(store) { #expect(pair[0] == pair[1], "idle period of \(id)") }
        #expect(try store.ids(inState: "submitting") == ["a"])
        #expect(try store.expired(before: base + 301, limit: 10) == ["d", "a", "c"])
        // The new triggers: a change a period later leaves the entry where it is.
        var changed = sessions[0]
        changed.updatedAt += Self.period
        try store.upsert(changed)
        #expect(try Self.periods(store)["a"] == [40, 41])
        #expect(try store.expired(before: base + 301, limit: 10) == ["d", "c"])
        #expect(try store.expired(before: changed.updatedAt + 1, limit: 10) == ["d", "c", "a"])
    }

    @Test func theIdlePeriodStaysWithinItsBoundWhoeverWrites() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let store = try SessionStore(path: dir.file("s.sqlite"))
        defer { try? store.close() }
        let base = 20 * Self.period
        try store.upsert(makeSession("s", updated: base + 1))
        try store.upsert(makeSession("s", updated: base + 2))  // same period
        try store.upsert(makeSession("t", updated: base + 3))
        try store.upsert(makeSession("t", updated: base + (Self.slack - 1) * Self.period))  // lags, stays
        try store.upsert(makeSession("v", updated: base + 4))
        try store.upsert(makeSession("v", updated: base + Self.slack * Self.period))  // too far behind: moves
        #expect(try Self.periods(store)["s"] == [20, 20])
        #expect(try Self.periods(store)["t"] == [20, 20 + Self.slack - 1])
        #expect(try Self.periods(store)["v"] == [20 + Self.slack, 20 + Self.slack])
        // An administrator's sqlite3: the same bound, however the row is written.
        try SchemaVersionThreeTests.execute(store, "UPDATE sessions SET updated_at = \(base + 5 * Self.period) WHERE id = 's'")
        try SchemaVersionThreeTests.execute(store, "UPDATE sessions SET idle_period = 0 WHERE id = 't'")
        try SchemaVersionThreeTests.execute(store, "UPDATE sessions SET idle_period = 99 WHERE id = 'v'")
        try SchemaVersionThreeTests.execute(
            store,
            """
            INSERT INTO sessions (id, owner, flow_id, state, created_at, updated_at, payload_version, payload)
            VALUES ('u', 1, 'f', 'editing', 1, \(base + 7 * Self.period), 1, x'00')
            """)
        try store.upsert(makeSession("w", updated: base + 9 * Self.period))
        try SchemaVersionThreeTests.execute(store, "UPDATE sessions SET updated_at = \(base - 3 * Self.period) WHERE id = 'w'")
        let periods = try Self.periods(store)
        #expect(periods["s"] == [20, 25])
        #expect(periods["t"] == [20 + Self.slack - 1, 20 + Self.slack - 1])
        #expect(periods["v"] == [20 + Self.slack, 20 + Self.slack])
        #expect(periods["u"] == [27, 27])
        #expect(periods["w"] == [17, 17])
        #expect(try Self.withinBound(store))
        // Expiry decides on the exact time, the lagging entry of `s` included.
        #expect(try store.expired(before: base + 5 * Self.period, limit: 10) == ["w"])
        #expect(try store.expired(before: base + 5 * Self.period + 1, limit: 10) == ["w", "s"])
    }

    /// Many sessions changed at random times, some far apart: every entry
    /// stays within its bound, and expiry finds exactly the sessions last
    /// changed before the cutoff, whatever their entries lag.
    @Test func expiryIsExactWhateverTheEntriesLag() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let store = try SessionStore(path: dir.file("s.sqlite"))
        defer { try? store.close() }
        var updated: [String: Int64] = [:]
        let start = 1_000 * Self.period
        for i in 0..<600 {
            let id = "s\((i * 37) % 120)"
            let previous = updated[id] ?? start + Int64((i * 104_729) % 5) * Self.period
            // Mostly steps of under a period, every fifth a long idle time of
            // up to 40 periods (multiples of primes, so the run repeats).
            let step = i % 5 == 0
                ? Int64((i * 7919) % 40) * Self.period + Int64(i * 31)
                : Int64((i * 104_729) % 67_108) * 1000
            updated[id] = previous + step
            try store.upsert(makeSession(id, updated: previous + step))
        }
        #expect(try Self.withinBound(store))
        let lagging = try Self.periods(store).values.filter { $0[0] < $0[1] }.count
        #expect(lagging > 0, "no entry lags: the test does not test the bound")
        let times = updated.values.sorted()
        for cutoff in [times[0], times[10] + 1, times[59], times[60] + 7, times[110], times[119] + 1] {
            let expected = Set(updated.filter { $0.value < cutoff }.keys)
            let found = try store.expired(before: cutoff, limit: 500)
            #expect(Set(found) == expected, "cutoff \(cutoff)")
            #expect(found.count == expected.count)
        }
    }
}
