import Testing

@testable import FlowStore

@Suite("SessionStore: sessions")
struct SessionStoreTests {
    let dir: TemporaryDirectory
    let store: SessionStore

    init() throws {
        dir = try TemporaryDirectory()
        store = try SessionStore(path: dir.file(SessionStore.defaultFileName))
    }

    @Test func upsertThenLoadRoundTrips() throws {
        defer { dir.cleanup() }
        let payload = (0..<1024).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var session = makeSession("0123456789abcdef0123456789abcdef", owner: 4_294_967_294, payload: payload)
        session.flowID = "ünïcode-flow"
        session.payloadVersion = 7
        try store.upsert(session)
        #expect(try store.load(id: session.id) == session)
        #expect(try store.load(id: "absent") == nil)
        #expect(try store.count() == 1)
        // An empty payload stays empty, not NULL.
        let empty = makeSession("empty", payload: [])
        try store.upsert(empty)
        #expect(try store.load(id: "empty")?.payload == [])
    }

    @Test func upsertUpdatesTheMutableColumnsOnly() throws {
        defer { dir.cleanup() }
        let first = makeSession("s1", created: 100, updated: 100, payload: [1])
        try store.upsert(first)
        var second = first
        second.state = "review"
        second.updatedAt = 200
        second.createdAt = 999  // ignored: fixed at the first insert
        second.payloadVersion = 2
        second.payload = [2, 2]
        try store.upsert(second)
        let loaded = try #require(try store.load(id: "s1"))
        #expect(loaded.state == "review")
        #expect(loaded.updatedAt == 200)
        #expect(loaded.createdAt == 100)
        #expect(loaded.payloadVersion == 2)
        #expect(loaded.payload == [2, 2])
        #expect(try store.count() == 1)
    }

    @Test func upsertRefusesAnotherOwnerOrFlow() throws {
        defer { dir.cleanup() }
        let original = makeSession("s1", owner: 1000, payload: [1])
        try store.upsert(original)
        var stolen = original
        stolen.owner = 0
        stolen.payload = [9]
        #expect(throws: StoreError.identityMismatch(id: "s1")) { try store.upsert(stolen) }
        var otherFlow = original
        otherFlow.flowID = "other"
        #expect(throws: StoreError.identityMismatch(id: "s1")) { try store.upsert(otherFlow) }
        #expect(try store.load(id: "s1") == original)
    }

    @Test func upsertRefusesEmptyIdentity() throws {
        defer { dir.cleanup() }
        for bad in [makeSession(""), makeSession("x", flow: ""), makeSession("x", state: "")] {
            let error = #expect(throws: StoreError.self) { try store.upsert(bad) }
            guard case .invalidArgument = error else {
                Issue.record("expected invalidArgument, got \(String(describing: error))")
                continue
            }
        }
        #expect(try store.count() == 0)
    }

    @Test func deleteRemovesAndReportsExistence() throws {
        defer { dir.cleanup() }
        try store.upsert(makeSession("a"))
        try store.upsert(makeSession("b"))
        #expect(try store.delete(id: "a"))
        #expect(try store.delete(id: "a") == false)
        #expect(try store.load(id: "a") == nil)
        #expect(try store.load(id: "b") != nil)
        #expect(try store.count() == 1)
    }

    @Test func summariesListByOwnerOldestFirst() throws {
        defer { dir.cleanup() }
        try store.upsert(makeSession("c", owner: 1000, created: 30))
        try store.upsert(makeSession("a", owner: 1000, flow: "f2", state: "review", created: 10))
        try store.upsert(makeSession("b", owner: 2000, created: 20))
        try store.upsert(makeSession("d", owner: 0, created: 5))
        let mine = try store.summaries(owner: 1000)
        #expect(mine.map(\.id) == ["a", "c"])
        #expect(mine.first == SessionSummary(id: "a", flowID: "f2", state: "review", owner: 1000, createdAt: 10, updatedAt: 10))
        #expect(try store.summaries().map(\.id) == ["d", "a", "b", "c"])
        #expect(try store.summaries(owner: 4242).isEmpty)
        #expect(try store.count(owner: 1000) == 2)
        #expect(try store.count(owner: 2000) == 1)
        #expect(try store.count(owner: 4242) == 0)
    }

    @Test func countFollowsInsertsUpdatesAndDeletes() throws {
        defer { dir.cleanup() }
        for i in 0..<25 { try store.upsert(makeSession("s\(i)")) }
        // Upserts that update must not move the counter kept by triggers.
        for i in 0..<25 { try store.upsert(makeSession("s\(i)", state: "review", updated: 5)) }
        #expect(try store.count() == 25)
        for i in 0..<10 { try store.delete(id: "s\(i)") }
        try store.delete(id: "never-there")
        #expect(try store.count() == 15)
        #expect(try store.summaries().count == 15)
    }

    @Test func expiredSelectsIdleSessionsInBatches() throws {
        defer { dir.cleanup() }
        try store.upsert(makeSession("fresh", updated: 1000))
        try store.upsert(makeSession("old2", updated: 200))
        try store.upsert(makeSession("old1", updated: 100))
        try store.upsert(makeSession("edge", updated: 500))
        #expect(try store.expired(before: 500, limit: 10) == ["old1", "old2"])
        #expect(try store.expired(before: 501, limit: 10) == ["old1", "old2", "edge"])
        #expect(try store.expired(before: 10_000, limit: 2) == ["old1", "old2"])
        #expect(try store.expired(before: 50, limit: 10).isEmpty)
        #expect(throws: StoreError.self) { try store.expired(before: 10_000, limit: 0) }
        // Touching a session takes it out of the expired set.
        try store.upsert(makeSession("old1", updated: 2000))
        #expect(try store.expired(before: 500, limit: 10) == ["old2"])
    }

    @Test func idsInState() throws {
        defer { dir.cleanup() }
        try store.upsert(makeSession("b", state: "submitting"))
        try store.upsert(makeSession("a", state: "submitting"))
        try store.upsert(makeSession("c", state: "editing"))
        #expect(try store.ids(inState: "submitting") == ["a", "b"])
        #expect(try store.ids(inState: "failed").isEmpty)
    }

    @Test func transactionCommitsTogether() throws {
        defer { dir.cleanup() }
        let total = try store.transaction { tx throws(StoreError) -> Int in
            try tx.upsert(makeSession("a"))
            try tx.upsert(makeSession("b", state: "submitting"))
            #expect(try tx.load(id: "a") != nil)
            #expect(try tx.ids(inState: "submitting") == ["b"])
            #expect(try tx.count(owner: 1000) == 2)
            try tx.delete(id: "a")
            return try tx.count()
        }
        #expect(total == 1)
        #expect(try store.count() == 1)
        #expect(try store.load(id: "b") != nil)
    }

    @Test func transactionRollsBackWhenTheBodyThrows() throws {
        defer { dir.cleanup() }
        try store.upsert(makeSession("keep", payload: [1]))
        #expect(throws: StoreError.invalidArgument("stop")) {
            try store.transaction { tx throws(StoreError) in
                try tx.upsert(makeSession("new"))
                try tx.upsert(makeSession("keep", payload: [2]))
                try tx.delete(id: "keep")
                throw StoreError.invalidArgument("stop")
            }
        }
        #expect(try store.load(id: "new") == nil)
        #expect(try store.load(id: "keep")?.payload == [1])
        #expect(try store.count() == 1)
        // A failing statement inside the body also rolls everything back.
        #expect(throws: StoreError.identityMismatch(id: "keep")) {
            try store.transaction { tx throws(StoreError) in
                try tx.upsert(makeSession("new"))
                try tx.upsert(makeSession("keep", owner: 1))
            }
        }
        #expect(try store.load(id: "new") == nil)
        // The store is usable afterwards.
        try store.upsert(makeSession("after"))
        #expect(try store.count() == 2)
    }

    @Test func closeIsIdempotentAndLaterCallsFail() throws {
        defer { dir.cleanup() }
        try store.upsert(makeSession("a"))
        try store.close()
        try store.close()
        #expect(throws: StoreError.closed) { try store.load(id: "a") }
        #expect(throws: StoreError.closed) { try store.upsert(makeSession("b")) }
        #expect(throws: StoreError.closed) { try store.count() }
        #expect(throws: StoreError.closed) { try store.checkpoint() }
        let reopened = try SessionStore(path: store.path)
        #expect(try reopened.load(id: "a") == makeSession("a"))
        try reopened.close()
    }

    @Test func checkpointCopiesTheWal() throws {
        defer { dir.cleanup() }
        for i in 0..<50 { try store.upsert(makeSession("s\(i)", payload: Array(repeating: 7, count: 2000))) }
        #expect(try store.checkpoint() > 0)
        #expect(try store.count() == 50)
        try store.close()
    }

    @Test func durabilityChoosesTheSynchronousPragma() throws {
        defer { dir.cleanup() }
        func synchronous(_ store: SessionStore) throws -> Int64? {
            try store.withDatabase { db throws(StoreError) -> Int64? in
                do throws(SQLiteError) { return try db.scalarInteger("PRAGMA synchronous") } catch {
                    throw StoreError.sqlite(error)
                }
            }
        }
        #expect(try synchronous(store) == 1)  // NORMAL
        let full = try SessionStore(
            path: dir.file("full.sqlite"), configuration: .init(durability: .powerLoss))
        #expect(try synchronous(full) == 2)  // FULL
        let journalMode = try full.withDatabase { db throws(StoreError) -> String? in
            do throws(SQLiteError) { return try db.scalarText("PRAGMA journal_mode") } catch {
                throw StoreError.sqlite(error)
            }
        }
        #expect(journalMode == "wal")
    }
}

/// The queries of settled sessions' retention and of the status report.
@Suite struct SettledAndStatusQueries {
    @Test func settledSessionsAreCountedApartAndExpireOnTheirOwnClock() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let store = try SessionStore(path: dir.file("s.sqlite"))
        defer { try? store.close() }
        for s in [
            makeSession("a", owner: 1, state: "submitted", updated: 100), makeSession("b", owner: 1, updated: 200),
            makeSession("c", owner: 1, state: "failed", updated: 50), makeSession("d", owner: 2, state: "submitted", updated: 300),
            makeSession("e", owner: 1, state: "submitted", updated: 400),
        ] {
            try store.upsert(s)
        }
        #expect(try store.count(owner: 1) == 4)
        #expect(try store.count(owner: 1, excludingState: "submitted") == 2)
        #expect(try store.count(owner: 3, excludingState: "submitted") == 0)
        #expect(try store.countsByState() == ["submitted": 3, "editing": 1, "failed": 1])
        #expect(try store.ids(inState: "submitted", updatedBefore: 350, limit: 10) == ["a", "d"])
        #expect(try store.ids(inState: "submitted", updatedBefore: 350, limit: 1) == ["a"])
        #expect(try store.expired(before: 1000, limit: 10) == ["c", "a", "b", "d", "e"])
        #expect(try store.expired(before: 1000, limit: 10, excludingState: "submitted") == ["c", "b"])
        #expect(throws: StoreError.self) { try store.ids(inState: "submitted", updatedBefore: 1, limit: 0) }
        try store.transaction { tx throws(StoreError) in
            try tx.upsert(makeSession("f", owner: 1, updated: 500))
            #expect(try tx.count(owner: 1, excludingState: "submitted") == 3)
        }
    }
}
