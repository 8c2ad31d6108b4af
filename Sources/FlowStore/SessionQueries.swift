/// The session operations as SQL, shared by ``SessionStore`` (one
/// autocommitted statement per call) and ``StoreTransaction``. Every
/// statement goes through the connection's statement cache.
struct SessionQueries {
    let db: SQLiteDatabase
    let path: String

    /// Runs `body` with the cached statement for `sql`, mapping SQLite errors.
    func with<Result>(_ sql: String, _ body: (Statement) throws(SQLiteError) -> Result) throws(StoreError) -> Result {
        do {
            return try db.withCachedStatement(sql, body)
        } catch {
            throw StoreError.from(error, path: path)
        }
    }

    /// As ``with(_:_:)-(String,_)`` for a literal, found by its address.
    func with<Result>(_ sql: StaticString, _ body: (Statement) throws(SQLiteError) -> Result) throws(StoreError) -> Result {
        do {
            return try db.withCachedStatement(sql, body)
        } catch {
            throw StoreError.from(error, path: path)
        }
    }

    /// A change of a stored session whose idle-period entry may stay: one
    /// statement that rewrites the row in place, the index untouched. The
    /// identity columns must agree, and `idle_period` must be within the
    /// bound expiry relies on, at most `updated_at >> 26` and fewer than
    /// ``Schema/idlePeriodSlack`` (16) periods behind it (schema 6 has no
    /// trigger that keeps it); otherwise nothing changes.
    static let updateSQL: StaticString = """
        UPDATE sessions SET state = ?4, updated_at = ?6, payload_version = ?7, payload = ?8
        WHERE id = ?1 AND owner = ?2 AND flow_id = ?3 AND idle_period BETWEEN (?6 >> 26) - 15 AND ?6 >> 26
        """

    /// As ``updateSQL``, finding the row by its rowid (`?9`, a ``StoredRow``
    /// the store handed out) instead of through the primary key's index:
    /// about 2 k instructions less per change. `id = ?1` stays in the `WHERE`,
    /// so a row that is no longer the session's (a stale rowid: `VACUUM` may
    /// renumber rows) is left as it is.
    static let updateAtRowSQL: StaticString = """
        UPDATE sessions SET state = ?4, updated_at = ?6, payload_version = ?7, payload = ?8
        WHERE rowid = ?9 AND id = ?1 AND owner = ?2 AND flow_id = ?3
            AND idle_period BETWEEN (?6 >> 26) - 15 AND ?6 >> 26
        """

    /// A new session, or the same change as ``updateSQL`` moving the row's
    /// idle-period entry to the change's period: when the entry lagged too
    /// far behind (a session taken up again after about 18 minutes) or is
    /// ahead of it (the clock stepped back, or a hand edit). An id stored
    /// with another owner or flow is left as it is (no row changes).
    static let insertOrMoveSQL: StaticString = """
        INSERT INTO sessions (id, owner, flow_id, state, created_at, updated_at, payload_version, payload, idle_period)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?6 >> 26)
        ON CONFLICT (id) DO UPDATE SET
            state = excluded.state, updated_at = excluded.updated_at, payload_version = excluded.payload_version,
            payload = excluded.payload, idle_period = excluded.idle_period
        WHERE sessions.owner = excluded.owner AND sessions.flow_id = excluded.flow_id
        """

    /// Every change of a live session is an upsert of a row that exists, so
    /// the `UPDATE` comes first: SQLite's `INSERT … ON CONFLICT DO UPDATE`
    /// builds the new row and probes the primary key before it falls back
    /// to the same update, a fifth of the upsert's instructions
    /// (docs/performance.md). The insert, or the update that moves the
    /// entry, follows only when no row matched: a new session, or about once
    /// in 18 minutes of a session's activity.
    ///
    /// With `row` (where the session's row was, from an earlier load or
    /// upsert) the `UPDATE` finds the row by its rowid; when that matches
    /// nothing the insert-or-move runs at once (it is right whether the entry
    /// must move or the rowid was stale). Returns where the row is now when
    /// known: `row` after the update by rowid, the new row's rowid after an
    /// insert, nil otherwise (an update by id; a moved entry, after which a
    /// stale rowid is not told from a good one: `RETURNING rowid` would tell,
    /// but costs about 18 k instructions, an ephemeral table per statement).
    func upsert(_ session: StoredSession, row: StoredRow? = nil) throws(StoreError) -> StoredRow? {
        guard !session.id.isEmpty else { throw .invalidArgument("a session id is empty") }
        guard !session.flowID.isEmpty else { throw .invalidArgument("session \(session.id) has an empty flow id") }
        guard !session.state.isEmpty else { throw .invalidArgument("session \(session.id) has an empty state") }
        /// Binds the session's eight values (and `rowID` as `?9`), runs the
        /// statement; returns the rows it changed.
        func run(_ sql: StaticString, rowID: Int64? = nil) throws(StoreError) -> Int64 {
            try with(sql) { statement throws(SQLiteError) -> Int64 in
                // Bound one by one: no array of values per change.
                try statement.expectParameters(rowID == nil ? 8 : 9)
                try statement.bind(.text(session.id), at: 1)
                try statement.bind(.integer(Int64(session.owner)), at: 2)
                try statement.bind(.text(session.flowID), at: 3)
                try statement.bind(.text(session.state), at: 4)
                try statement.bind(.integer(session.createdAt), at: 5)
                try statement.bind(.integer(session.updatedAt), at: 6)
                try statement.bind(.integer(Int64(session.payloadVersion)), at: 7)
                try statement.bind(.blob(session.payload), at: 8)
                if let rowID { try statement.bind(.integer(rowID), at: 9) }
                try statement.run()
                return db.changes
            }
        }
        if let row {
            if try run(Self.updateAtRowSQL, rowID: row.rowID) == 1 { return row }
        } else if try run(Self.updateSQL) != 0 {
            return nil
        }
        // A new session, an entry to move, a stale rowid, or the id is taken
        // by another owner or flow (then nothing changes). Only an insert
        // sets the last inserted rowid (the counting trigger's `UPDATE` does
        // not); a rowid equal to the one before is left unknown.
        let before = db.lastInsertRowID
        guard try run(Self.insertOrMoveSQL) == 1 else { throw .identityMismatch(id: session.id) }
        let after = db.lastInsertRowID
        return after != before ? StoredRow(rowID: after) : nil
    }

    func load(id: String) throws(StoreError) -> StoredSession? {
        try loadRow(id: id)?.session
    }

    func loadRow(id: String) throws(StoreError) -> (session: StoredSession, row: StoredRow)? {
        let sql = """
            SELECT owner, flow_id, state, created_at, updated_at, payload_version, payload, rowid
            FROM sessions WHERE id = ?1
            """
        return try with(sql) { statement throws(SQLiteError) -> (session: StoredSession, row: StoredRow)? in
            try statement.bind([.text(id)])
            guard try statement.step() else { return nil }
            let session = StoredSession(
                id: id,
                owner: UInt32(truncatingIfNeeded: statement.int64(at: 0)),
                flowID: statement.string(at: 1) ?? "",
                state: statement.string(at: 2) ?? "",
                createdAt: statement.int64(at: 3),
                updatedAt: statement.int64(at: 4),
                payloadVersion: Int(statement.int64(at: 5)),
                payload: statement.blob(at: 6) ?? [])
            return (session, StoredRow(rowID: statement.int64(at: 7)))
        }
    }

    func delete(id: String) throws(StoreError) -> Bool {
        try with("DELETE FROM sessions WHERE id = ?1") { statement throws(SQLiteError) -> Bool in
            try statement.bind([.text(id)])
            try statement.run()
            return db.changes > 0
        }
    }

    func summaries(owner: UInt32?) throws(StoreError) -> [SessionSummary] {
        let columns = "SELECT id, flow_id, state, owner, created_at, updated_at FROM sessions"
        let sql: String
        let values: [SQLiteValue]
        if let owner {
            sql = columns + " WHERE owner = ?1 ORDER BY created_at, id"
            values = [.integer(Int64(owner))]
        } else {
            sql = columns + " ORDER BY created_at, id"
            values = []
        }
        return try with(sql) { statement throws(SQLiteError) -> [SessionSummary] in
            try statement.rows(binding: values) { row throws(SQLiteError) in
                SessionSummary(
                    id: row.string(at: 0) ?? "",
                    flowID: row.string(at: 1) ?? "",
                    state: row.string(at: 2) ?? "",
                    owner: UInt32(truncatingIfNeeded: row.int64(at: 3)),
                    createdAt: row.int64(at: 4),
                    updatedAt: row.int64(at: 5))
            }
        }
    }

    func count() throws(StoreError) -> Int {
        let value = try with("SELECT value FROM session_count WHERE only = 0") { statement throws(SQLiteError) -> Int64? in
            guard try statement.step() else { return nil }
            return statement.int64(at: 0)
        }
        guard let value, value >= 0 else {
            throw .malformedRow(table: "session_count", reason: "the counter row is missing or negative")
        }
        return Int(value)
    }

    func count(owner: UInt32) throws(StoreError) -> Int {
        try with("SELECT count(*) FROM sessions WHERE owner = ?1") { statement throws(SQLiteError) -> Int in
            try statement.bind([.integer(Int64(owner))])
            guard try statement.step() else { return 0 }
            return Int(statement.int64(at: 0))
        }
    }

    func expired(before cutoff: Int64, limit: Int, excludingState excluded: String? = nil) throws(StoreError) -> [String] {
        guard limit > 0 else { throw .invalidArgument("an expiry batch limit must be positive, not \(limit)") }
        // The index is on `idle_period`, at most `updated_at >> 26` and lagging
        // behind it by fewer than 16 periods (schema 5; since schema 6 kept by
        // flowd's own upsert, not by triggers): every row updated before the
        // cutoff has `idle_period <= cutoff >> 26`, so the coarse term selects
        // through the index and the exact one decides.
        let sql = """
            SELECT id FROM sessions WHERE idle_period <= (?1 >> 26) AND updated_at < ?1 AND state IS NOT ?3
            ORDER BY idle_period, updated_at LIMIT ?2
            """
        let values: [SQLiteValue] = [.integer(cutoff), .integer(Int64(limit)), excluded.map { .text($0) } ?? .null]
        return try with(sql) { statement throws(SQLiteError) -> [String] in
            try statement.rows(binding: values) { row throws(SQLiteError) in
                row.string(at: 0) ?? ""
            }
        }
    }

    func ids(inState state: String, updatedBefore cutoff: Int64, limit: Int) throws(StoreError) -> [String] {
        guard limit > 0 else { throw .invalidArgument("an expiry batch limit must be positive, not \(limit)") }
        let sql = "SELECT id FROM sessions WHERE state = ?1 AND updated_at < ?2 ORDER BY updated_at LIMIT ?3"
        return try with(sql) { statement throws(SQLiteError) -> [String] in
            try statement.rows(binding: [.text(state), .integer(cutoff), .integer(Int64(limit))]) { row throws(SQLiteError) in
                row.string(at: 0) ?? ""
            }
        }
    }

    func count(owner: UInt32, excludingState excluded: String) throws(StoreError) -> Int {
        try with("SELECT count(*) FROM sessions WHERE owner = ?1 AND state != ?2") { statement throws(SQLiteError) -> Int in
            try statement.bind([.integer(Int64(owner)), .text(excluded)])
            guard try statement.step() else { return 0 }
            return Int(statement.int64(at: 0))
        }
    }

    func countsByState() throws(StoreError) -> [String: Int] {
        let rows = try with("SELECT state, count(*) FROM sessions GROUP BY state") { statement throws(SQLiteError) in
            try statement.rows { row throws(SQLiteError) in (row.string(at: 0) ?? "", Int(row.int64(at: 1))) }
        }
        return Dictionary(rows, uniquingKeysWith: +)
    }

    func ids(inState state: String) throws(StoreError) -> [String] {
        // The state index holds `submitting` rows only (schema 2); SQLite uses
        // a partial index only for a query that names its condition literally.
        if state == Self.indexedState {
            return try with("SELECT id FROM sessions WHERE state = 'submitting' ORDER BY id") { statement throws(SQLiteError) -> [String] in
                try statement.rows { row throws(SQLiteError) in row.string(at: 0) ?? "" }
            }
        }
        return try with("SELECT id FROM sessions WHERE state = ?1 ORDER BY id") { statement throws(SQLiteError) -> [String] in
            try statement.rows(binding: [.text(state)]) { row throws(SQLiteError) in row.string(at: 0) ?? "" }
        }
    }

    /// The state the partial index `sessions_by_state` holds.
    static let indexedState = "submitting"
}
