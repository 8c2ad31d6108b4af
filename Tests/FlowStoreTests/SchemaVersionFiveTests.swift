import Testing

@testable import FlowStore

/// Schema version 5 (an idle-period entry moves once in about 18 minutes of
/// activity, docs/performance.md, the seventh round): `idle_period` is a
/// lower bound of `updated_at >> 26` lagging by fewer than
/// ``Schema/idlePeriodSlack`` periods; expiry stays exact; a database of
/// version 4 migrates with its data. (Since version 6 flowd's own upsert
/// keeps the bound, not triggers: SchemaVersionSixTests.)
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
        #expect(SessionStore.schemaVersion == 6)
        let version = try store.withDatabase { db throws(StoreError) in
            do throws(SQLiteError) { return try db.scalarInteger("PRAGMA user_version") } catch {
                throw StoreError.from(error, path: path)
            }
        }
        #expect(version == 6)
        for s in sessions { #expect(try store.load(id: s.id) == s) }
        #expect(try store.count() == 4)
        #expect(try store.disabledPlugins() == [plugin])
        for (id, pair) in try Self.periods(store) { #expect(pair[0] == pair[1], "idle period of \(id)") }
        #expect(try store.ids(inState: "submitting") == ["a"])
        #expect(try store.expired(before: base + 301, limit: 10) == ["d", "a", "c"])
        // A change a period later leaves the entry where it is.
        var changed = sessions[0]
        changed.updatedAt += Self.period
        try store.upsert(changed)
        #expect(try Self.periods(store)["a"] == [40, 41])
        #expect(try store.expired(before: base + 301, limit: 10) == ["d", "c"])
        #expect(try store.expired(before: changed.updatedAt + 1, limit: 10) == ["d", "c", "a"])
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
