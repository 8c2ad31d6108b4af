import Testing

@testable import FlowStore

@Suite("SQLiteDatabase and Statement")
struct SQLiteDatabaseTests {
    @Test func roundTripsEveryStorageClass() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let db = try SQLiteDatabase(path: dir.file("t.db"))
        try db.execute("CREATE TABLE t (a, b, c, d, e)")
        let insert = try db.prepare("INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5)")
        let values: [SQLiteValue] = [.integer(-42), .real(2.5), .text("grüße\u{0}tail"), .blob([0, 1, 255]), .null]
        try insert.bind(values)
        try insert.run()
        let select = try db.prepare("SELECT a, b, c, d, e FROM t")
        #expect(try select.step())
        #expect((0..<5).map { select.value(at: Int32($0)) } == values)
        #expect(select.string(at: 2) == "grüße\u{0}tail")
        #expect(select.blob(at: 4) == nil)
        #expect(try select.step() == false)
    }

    /// SQLite keeps no memory statistics in flowd's process (each
    /// allocation would take a process-wide mutex): configured before the
    /// first open, and still off while a store holds statements, a page
    /// cache and bound values.
    @Test func sqliteKeepsNoMemoryStatistics() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let store = try SessionStore(path: dir.file("sessions.sqlite"))
        for i in 0..<50 { try store.upsert(makeSession("s\(i)", payload: Array(repeating: UInt8(i), count: 600))) }
        #expect(try store.load(id: "s7")?.payload.count == 600)
        #expect(LibSQLite.processConfiguration == LibSQLite.ok)
        #expect(SQLiteDatabase.countedMemoryUsed == 0)
        try store.close()
    }

    @Test func emptyTextAndBlobAreNotNull() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let db = try SQLiteDatabase(path: dir.file("t.db"))
        try db.execute("CREATE TABLE t (a, b)")
        let insert = try db.prepare("INSERT INTO t VALUES (?1, ?2)")
        try insert.bind([.text(""), .blob([])])
        try insert.run()
        #expect(try db.scalarText("SELECT typeof(a) || ',' || typeof(b) FROM t") == "text,blob")
        let select = try db.prepare("SELECT a, b FROM t")
        #expect(try select.step())
        #expect(select.string(at: 0) == "")
        #expect(select.blob(at: 1) == [])
    }

    @Test func refusesMoreThanOneStatement() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let db = try SQLiteDatabase(path: dir.file("t.db"))
        let error = #expect(throws: SQLiteError.self) { try db.prepare("SELECT 1; DROP TABLE x") }
        #expect(error?.code == .misuse)
        #expect(error?.message.contains("more than one statement") == true)
        // A trailing semicolon and whitespace are fine.
        _ = try db.prepare("SELECT 1;  \n")
    }

    @Test func bindCountMustMatch() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let db = try SQLiteDatabase(path: dir.file("t.db"))
        let statement = try db.prepare("SELECT ?1 + ?2")
        let error = #expect(throws: SQLiteError.self) { try statement.bind([.integer(1)]) }
        #expect(error?.code == .range)
        #expect(throws: SQLiteError.self) { try statement.bind(.integer(1), at: 3) }
    }

    @Test func errorsCarryCodesAndMessage() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let db = try SQLiteDatabase(path: dir.file("t.db"))
        try db.execute("CREATE TABLE t (id TEXT PRIMARY KEY)")
        try db.execute("INSERT INTO t VALUES ('a')")
        let error = #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES ('a')") }
        #expect(error?.code == .constraint)
        #expect(error?.extendedCode.rawValue == 1555)  // SQLITE_CONSTRAINT_PRIMARYKEY
        #expect(error?.message.contains("UNIQUE constraint failed") == true)

        let syntax = #expect(throws: SQLiteError.self) { try db.prepare("SELEKT 1") }
        #expect(syntax?.code == .error)
        #expect(syntax?.description.contains("syntax error") == true)
    }

    @Test func openFailureIsAnError() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let error = #expect(throws: SQLiteError.self) {
            try SQLiteDatabase(path: dir.file("missing/dir/t.db"))
        }
        #expect(error?.code == .cantOpen)
        #expect(throws: SQLiteError.self) {
            try SQLiteDatabase(path: dir.file("absent.db"), flags: [.readWrite])
        }
    }

    @Test func closeIsIdempotentAndStatementsRefuseAfterwards() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let db = try SQLiteDatabase(path: dir.file("t.db"))
        let statement = try db.prepare("SELECT 1")
        try db.withCachedStatement("SELECT 2") { s throws(SQLiteError) in _ = try s.step() }
        try db.close()
        try db.close()
        #expect(!db.isOpen)
        let error = #expect(throws: SQLiteError.self) { try statement.step() }
        #expect(error?.code == .misuse)
        #expect(throws: SQLiteError.self) { try db.prepare("SELECT 1") }
        #expect(throws: SQLiteError.self) { try db.execute("SELECT 1") }
        #expect(db.cachedStatementCount == 0)
    }

    @Test func cachedStatementsArePreparedOnceAndReset() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let db = try SQLiteDatabase(path: dir.file("t.db"))
        try db.execute("CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1), (2), (3)")
        let sql = "SELECT v FROM t ORDER BY v"
        for _ in 0..<3 {
            // Read only the first row; the cache must reset the statement so
            // the next use starts again from the first row.
            let first = try db.withCachedStatement(sql) { s throws(SQLiteError) -> Int64 in
                _ = try s.step()
                return s.int64(at: 0)
            }
            #expect(first == 1)
        }
        #expect(db.cachedStatementCount == 1)
        // Nested use of the same SQL gets its own statement.
        let pairs = try db.withCachedStatement(sql) { outer throws(SQLiteError) -> [Int64] in
            _ = try outer.step()
            let inner = try db.withCachedStatement(sql) { s throws(SQLiteError) -> Int64 in
                _ = try s.step()
                _ = try s.step()
                return s.int64(at: 0)
            }
            return [outer.int64(at: 0), inner]
        }
        #expect(pairs == [1, 2])
        #expect(!db.isInTransaction)
    }

    /// SQL given as a literal is cached by the literal's address; its
    /// statement is reset between uses, keeps its bindings until they are
    /// bound again, and still refuses too few values.
    @Test func literalStatementsAreCachedByAddressAndRebound() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let db = try SQLiteDatabase(path: dir.file("t.db"))
        try db.execute("CREATE TABLE t (k TEXT, v BLOB); INSERT INTO t VALUES ('a', x'01'), ('b', x'0203')")
        let sql: StaticString = "SELECT v FROM t WHERE k = ?1"
        for (key, value) in [("a", [UInt8(1)]), ("b", [2, 3]), ("a", [1]), ("c", [])] {
            let read = try db.withCachedStatement(sql) { s throws(SQLiteError) -> [UInt8]? in
                try s.bind([.text(key)])
                return try s.step() ? s.blob(at: 0) : []
            }
            #expect(read == value, "\(key)")
        }
        #expect(db.cachedStatementCount == 1)
        let nested = try db.withCachedStatement(sql) { outer throws(SQLiteError) -> [[UInt8]?] in
            try outer.bind([.text("a")])
            _ = try outer.step()
            let inner = try db.withCachedStatement(sql) { s throws(SQLiteError) -> [UInt8]? in
                try s.bind([.text("b")])
                _ = try s.step()
                return s.blob(at: 0)
            }
            return [outer.blob(at: 0), inner]
        }
        #expect(nested == [[1], [2, 3]])
        #expect(db.cachedStatementCount == 1)
        let error = #expect(throws: SQLiteError.self) {
            try db.withCachedStatement(sql) { s throws(SQLiteError) in try s.expectParameters(0) }
        }
        #expect(error?.code == .range)
        #expect(throws: SQLiteError.self) {
            try db.withCachedStatement(sql) { s throws(SQLiteError) in try s.bind([]) }
        }
    }

    @Test func transactionCommitsOrRollsBack() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let db = try SQLiteDatabase(path: dir.file("t.db"))
        try db.execute("CREATE TABLE t (v INTEGER)")
        try db.transaction { () throws(SQLiteError) in try db.execute("INSERT INTO t VALUES (1)") }
        #expect(throws: SQLiteError.self) {
            try db.transaction { () throws(SQLiteError) in
                try db.execute("INSERT INTO t VALUES (2)")
                try db.execute("INSERT INTO nowhere VALUES (3)")
            }
        }
        #expect(!db.isInTransaction)
        #expect(try db.scalarText("SELECT group_concat(v) FROM t") == "1")
    }
}
