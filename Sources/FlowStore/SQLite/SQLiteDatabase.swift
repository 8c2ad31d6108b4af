
/// The C connection pointer, shared by a database and its statements so a
/// statement can tell that its connection was closed. Nil once closed.
final class ConnectionHandle {
    var pointer: OpaquePointer?

    init(_ pointer: OpaquePointer) {
        self.pointer = pointer
    }
}

/// One SQLite connection (`sqlite3 *`), owned by this object.
///
/// A connection is not thread-safe here: it is opened in SQLite's
/// multi-thread mode (`SQLITE_OPEN_NOMUTEX`) and the caller serializes access
/// (``SessionStore`` does, behind a mutex). ``close()`` may be called any
/// number of times; `deinit` closes a connection that is still open.
///
/// Frequently run SQL goes through ``withCachedStatement(_:_:)``, which
/// prepares each distinct SQL string once and keeps it for the life of the
/// connection.
package final class SQLiteDatabase {
    /// Flags for `sqlite3_open_v2`.
    package struct OpenFlags: OptionSet, Sendable {
        /// The `SQLITE_OPEN_*` bits.
        package var rawValue: Int32
        /// Flags from their `SQLITE_OPEN_*` bits.
        package init(rawValue: Int32) { self.rawValue = rawValue }
    }

    /// How ``transaction(_:_:)`` begins: `BEGIN DEFERRED`, `IMMEDIATE` or `EXCLUSIVE`.
    package enum TransactionKind: String, Sendable {
        case deferred = "DEFERRED"
        case immediate = "IMMEDIATE"
        case exclusive = "EXCLUSIVE"
    }

    /// The path the connection was opened with.
    package let path: String
    let handle: ConnectionHandle
    private var cache: [String: Statement] = [:]
    /// The statements of SQL given as literals, by the address of the
    /// literal's text: hashing an address instead of the whole text.
    private var literalCache: [UnsafeRawPointer: Statement] = [:]

    /// Opens a connection with `sqlite3_open_v2`.
    ///
    /// `SQLITE_OPEN_EXRESCODE` is always added, so failures carry extended
    /// result codes. Note that SQLite opens lazily: a file that is not a
    /// database is only detected by the first statement that reads it.
    package init(path: String, flags: OpenFlags = [.readWrite, .create]) throws(SQLiteError) {
        var pointer: OpaquePointer?
        let rc = LibSQLite.open(path, &pointer, flags.rawValue | LibSQLite.openExtendedResultCodes)
        guard rc == LibSQLite.ok, let pointer else {
            let error = SQLiteError.from(rc, db: pointer, operation: "open \(path)")
            if let pointer { _ = LibSQLite.close(pointer) }
            throw error
        }
        self.path = path
        self.handle = ConnectionHandle(pointer)
    }

    deinit {
        try? close()
    }

    /// True until ``close()`` succeeds.
    package var isOpen: Bool { handle.pointer != nil }

    /// Finalizes the cached statements and closes the connection with
    /// `sqlite3_close_v2`. Calling it again does nothing.
    ///
    /// Statements from ``prepare(_:)`` that are still alive keep the C
    /// connection alive until they are released, but refuse to run.
    package func close() throws(SQLiteError) {
        guard let pointer = handle.pointer else { return }
        for statement in cache.values { statement.finalize() }
        for statement in literalCache.values { statement.finalize() }
        cache.removeAll()
        literalCache.removeAll()
        let rc = LibSQLite.close(pointer)
        guard rc == LibSQLite.ok else {
            throw SQLiteError.from(rc, db: pointer, operation: "close")
        }
        handle.pointer = nil
    }

    /// The open C pointer, or a misuse error after ``close()``.
    func pointer(for operation: String) throws(SQLiteError) -> OpaquePointer {
        guard let pointer = handle.pointer else {
            throw SQLiteError.misuse("the database connection is closed", operation: operation)
        }
        return pointer
    }

    /// Runs one or more SQL statements that return no rows (`sqlite3_exec`).
    /// Use it for schema changes and pragmas, never with caller-supplied text.
    package func execute(_ sql: String) throws(SQLiteError) {
        let db = try pointer(for: "execute")
        var message: String?
        let rc = LibSQLite.exec(db, sql, &message)
        guard rc == LibSQLite.ok else {
            var error = SQLiteError.from(rc, db: db, operation: "execute \(Self.abbreviated(sql))")
            if let message, !message.isEmpty { error.message = message }
            throw error
        }
    }

    /// Prepares one SQL statement (`sqlite3_prepare_v3`). Text after the
    /// first statement is refused, so a string cannot smuggle in a second one.
    package func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        try prepare(sql, persistent: false)
    }

    private func prepare(_ sql: String, persistent: Bool) throws(SQLiteError) -> Statement {
        let db = try pointer(for: "prepare")
        var statement: OpaquePointer?
        var remainder = ""
        let flags: UInt32 = persistent ? LibSQLite.preparePersistent : 0
        let rc = LibSQLite.prepare(db, sql, flags, &statement, &remainder)
        let operation = "prepare \(Self.abbreviated(sql))"
        guard rc == LibSQLite.ok else {
            if let statement { LibSQLite.finalize(statement) }
            throw SQLiteError.from(rc, db: db, operation: operation)
        }
        guard let statement else {
            throw SQLiteError.misuse("the SQL text holds no statement", operation: operation)
        }
        guard remainder.allSatisfy({ $0.isWhitespace || $0 == ";" }) else {
            LibSQLite.finalize(statement)
            throw SQLiteError.misuse("the SQL text holds more than one statement", operation: operation)
        }
        return Statement(pointer: statement, connection: handle, sql: sql)
    }

    /// Runs `body` with the cached prepared statement for `sql`, preparing it
    /// on first use (with `SQLITE_PREPARE_PERSISTENT`).
    ///
    /// The statement is reset when `body` returns, so a half-read query never
    /// holds a read transaction open (which would stop WAL checkpoints). Its
    /// bindings are not cleared: every use binds all of them again
    /// (``Statement/bind(_:)`` refuses fewer), and SQLite reuses the memory of
    /// a text or blob it copied for the next one of the same size or smaller.
    /// A nested use of the same SQL gets a fresh, uncached statement.
    package func withCachedStatement<Result>(
        _ sql: String, _ body: (Statement) throws(SQLiteError) -> Result
    ) throws(SQLiteError) -> Result {
        let statement: Statement
        // One lookup: hashing the SQL text is most of the cost of a hit.
        if let cached = cache[sql] {
            statement = cached.isInUse ? try prepare(sql, persistent: false) : cached
        } else {
            statement = try prepare(sql, persistent: true)
            cache[sql] = statement
        }
        return try lend(statement, body)
    }

    /// As ``withCachedStatement(_:_:)-(String,_)``, for SQL written as a
    /// literal: found by the literal's address, without hashing its text
    /// (the store's upsert runs on every change of a session).
    package func withCachedStatement<Result>(
        _ sql: StaticString, _ body: (Statement) throws(SQLiteError) -> Result
    ) throws(SQLiteError) -> Result {
        // A one-character literal may be kept as a scalar, without an address.
        guard sql.hasPointerRepresentation else { return try withCachedStatement(sql.description, body) }
        let key = UnsafeRawPointer(sql.utf8Start)
        let statement: Statement
        if let cached = literalCache[key] {
            statement = cached.isInUse ? try prepare(sql.description, persistent: false) : cached
        } else {
            statement = try prepare(sql.description, persistent: true)
            literalCache[key] = statement
        }
        return try lend(statement, body)
    }

    private func lend<Result>(
        _ statement: Statement, _ body: (Statement) throws(SQLiteError) -> Result
    ) throws(SQLiteError) -> Result {
        statement.isInUse = true
        defer {
            statement.isInUse = false
            statement.rewind()
        }
        return try body(statement)
    }

    /// The number of statements held in the statement cache.
    package var cachedStatementCount: Int { cache.count + literalCache.count }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE (`sqlite3_changes64`).
    package var changes: Int64 {
        guard let pointer = handle.pointer else { return 0 }
        return LibSQLite.changes(pointer)
    }

    /// The rowid of the most recent successful INSERT (`sqlite3_last_insert_rowid`).
    package var lastInsertRowID: Int64 {
        guard let pointer = handle.pointer else { return 0 }
        return LibSQLite.lastInsertRowID(pointer)
    }

    /// True while a transaction is open (`sqlite3_get_autocommit` is false).
    package var isInTransaction: Bool {
        guard let pointer = handle.pointer else { return false }
        return !LibSQLite.isAutocommit(pointer)
    }

    /// Sets how long a statement waits for another connection's lock before
    /// failing with `SQLITE_BUSY` (`sqlite3_busy_timeout`).
    package func setBusyTimeout(milliseconds: Int32) throws(SQLiteError) {
        let db = try pointer(for: "busy_timeout")
        let rc = LibSQLite.busyTimeout(db, milliseconds)
        guard rc == LibSQLite.ok else { throw SQLiteError.from(rc, db: db, operation: "busy_timeout") }
    }

    /// Runs `body` in a transaction: `COMMIT` when it returns, `ROLLBACK`
    /// when it throws. Transactions do not nest.
    package func transaction<Result>(
        _ kind: TransactionKind = .immediate, _ body: () throws(SQLiteError) -> Result
    ) throws(SQLiteError) -> Result {
        guard !isInTransaction else {
            throw SQLiteError.misuse("a transaction is already open", operation: "begin")
        }
        try withCachedStatement("BEGIN \(kind.rawValue)") { begin throws(SQLiteError) in try begin.run() }
        let result: Result
        do {
            result = try body()
        } catch {
            rollback()
            throw error
        }
        do {
            try withCachedStatement("COMMIT") { commit throws(SQLiteError) in try commit.run() }
        } catch {
            rollback()
            throw error
        }
        return result
    }

    /// Rolls back an open transaction, if any; failures are ignored because
    /// SQLite may already have rolled back on its own (for example on `SQLITE_FULL`).
    func rollback() {
        guard isInTransaction else { return }
        _ = try? withCachedStatement("ROLLBACK") { rollback throws(SQLiteError) in try rollback.run() }
    }

    /// The first column of the first row of `sql`, as text; nil when there
    /// is no row or the value is NULL. Meant for pragmas.
    package func scalarText(_ sql: String) throws(SQLiteError) -> String? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.string(at: 0)
    }

    /// The first column of the first row of `sql` as an integer; nil when
    /// there is no row or the value is NULL.
    package func scalarInteger(_ sql: String) throws(SQLiteError) -> Int64? {
        let statement = try prepare(sql)
        guard try statement.step(), !statement.isNull(at: 0) else { return nil }
        return statement.int64(at: 0)
    }

    /// `sqlite3_wal_checkpoint_v2` modes.
    package enum CheckpointMode: Int32, Sendable {
        case passive = 0  // SQLITE_CHECKPOINT_PASSIVE
        case full = 1  // SQLITE_CHECKPOINT_FULL
        case restart = 2  // SQLITE_CHECKPOINT_RESTART
        case truncate = 3  // SQLITE_CHECKPOINT_TRUNCATE
    }

    /// Copies WAL frames back into the database file
    /// (`sqlite3_wal_checkpoint_v2`). Returns the WAL size and the number of
    /// frames checkpointed, both in pages.
    @discardableResult
    package func checkpoint(_ mode: CheckpointMode = .passive) throws(SQLiteError) -> (walFrames: Int, checkpointed: Int) {
        let db = try pointer(for: "checkpoint")
        var logFrames: Int32 = 0
        var done: Int32 = 0
        let rc = LibSQLite.walCheckpoint(db, mode.rawValue, &logFrames, &done)
        guard rc == LibSQLite.ok else { throw SQLiteError.from(rc, db: db, operation: "checkpoint") }
        return (Int(logFrames), Int(done))
    }

    /// The SQLite library version string, such as "3.40.1".
    package static var libraryVersion: String { LibSQLite.version() }

    /// The bytes SQLite's memory statistics count as allocated: 0 once a
    /// connection was opened, since flowd turns the statistics off
    /// (``LibSQLite/processConfiguration``).
    package static var countedMemoryUsed: Int64 { LibSQLite.memoryUsed() }

    static func abbreviated(_ sql: String) -> String {
        let flat = sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return flat.count > 60 ? String(flat.prefix(57)) + "..." : flat
    }
}

@available(*, unavailable, message: "a connection is used by one thread at a time; SessionStore adds the lock")
extension SQLiteDatabase: Sendable {}
