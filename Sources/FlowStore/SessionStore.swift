import FlowdSystem

/// The daemon's persistent sessions: one SQLite database in WAL mode.
///
/// Every method commits before it returns (autocommit, or the end of
/// ``transaction(_:)``), so a mutation the daemon acknowledges after the
/// call returns survives `kill -9` of the daemon; see ``Durability`` for
/// power loss.
///
/// The store is `Sendable`: one connection behind a mutex, so calls from
/// the event-loop thread and from plugin-call threads are serialized.
/// Opening reads a few pragmas and never scans the sessions.
package final class SessionStore: Sendable {
    /// How much a committed transaction survives.
    package enum Durability: Sendable, Hashable {
        /// `PRAGMA synchronous = NORMAL` (the default). A commit is written
        /// to the WAL file without `fsync`: it is in the kernel's page cache
        /// when the call returns, so it survives the daemon being killed or
        /// crashing. Power loss or a kernel panic can lose the last
        /// transactions (never corrupt the database). WAL is synced at each
        /// checkpoint.
        case processCrash
        /// `PRAGMA synchronous = FULL`: every commit also `fsync`s the WAL,
        /// so it survives power loss, at the cost of one `fsync` per
        /// mutation (see the measurements in the FlowStore documentation).
        case powerLoss
    }

    /// Settings for opening a store.
    package struct Configuration: Sendable {
        /// See ``Durability``; `.processCrash` by default.
        package var durability: Durability
        /// How long a statement waits for a lock held by another process
        /// (an administrator's `sqlite3` shell, say) before failing with
        /// ``StoreError/busy(_:)``. One second by default: long enough for
        /// a short outside transaction, short enough not to stall the bus.
        package var busyTimeout: Duration
        /// `PRAGMA wal_autocheckpoint`, in pages (SQLite's default is 1000).
        /// Zero turns automatic checkpoints off; then call ``checkpoint()``.
        package var autoCheckpointPages: Int
        /// `PRAGMA journal_size_limit`: the WAL file is truncated to this many
        /// bytes after a checkpoint, so one burst does not leave a large file.
        package var journalSizeLimit: Int
        /// `PRAGMA page_size` of a database this store creates, in bytes (a
        /// power of two from 512 to 65536). An existing database keeps the
        /// page size it was created with: WAL mode cannot change it.
        package var pageSize: Int
        /// The clock for the store's own timestamps (crash-guard records),
        /// in microseconds since the epoch; the system's real-time clock when nil.
        package var clock: @Sendable () -> Int64

        /// Settings with SQLite's and flowd's defaults; see each property.
        package init(
            durability: Durability = .processCrash,
            busyTimeout: Duration = .seconds(1),
            autoCheckpointPages: Int = 1000,
            journalSizeLimit: Int = 4 << 20,
            pageSize: Int = SessionStore.defaultPageSize,
            clock: (@Sendable () -> Int64)? = nil
        ) {
            self.durability = durability
            self.busyTimeout = busyTimeout
            self.autoCheckpointPages = autoCheckpointPages
            self.journalSizeLimit = journalSizeLimit
            self.pageSize = pageSize
            self.clock = clock ?? { WallClock.microsecondsSinceEpoch() }
        }
    }

    /// The page size of a new database (SQLite's default is 4096): every
    /// commit writes each page it changed to the WAL as a whole frame and
    /// checksums it, so a smaller page makes each change cheaper. 2048 bytes
    /// still hold a session record of up to about 1.9 KiB without an overflow
    /// page; 1024 would spill records of a kilobyte, which then cost more
    /// than with 4096 (docs/performance.md, the sixth round).
    package static let defaultPageSize = 2048

    /// How long after a session's last write (µs) a change of it still
    /// leaves its idle-period index entry in place, at the least: 15 periods
    /// of 2²⁶ µs, about 16.8 minutes (the upsert moves the entry once it lags
    /// by 16: schema 5's triggers, flowd's own upsert since schema 6). A
    /// change after a longer pause moves the entry: two more index pages in
    /// its commit. flowd-bench measures both cases.
    package static let idleEntryStays: Int64 = Int64(Schema.idlePeriodSlack - 1) << 26

    /// The database file's conventional name inside the state directory.
    package static let defaultFileName = "sessions.sqlite"

    /// The schema version this build reads and writes.
    package static var schemaVersion: Int { Schema.latestVersion }

    /// The path of the database file.
    package let path: String
    /// The same with the directories' symbolic links resolved: what SQLite
    /// opens (its no-follow flag refuses a link anywhere in a path).
    private let openPath: String
    /// The settings the store was opened with.
    package let configuration: Configuration
    private let connection: LockedValue<SQLiteDatabase?>
    /// A second connection used only by ``checkpoint()``, opened on first use,
    /// so a checkpoint never holds the lock that upserts wait on.
    private let checkpointConnection: LockedValue<CheckpointConnection>

    /// Opens (creating if needed) the store at `path`.
    ///
    /// The parent directory is created with mode 0700 if missing, and must
    /// not be writable by group or others; symbolic links among the
    /// directories are followed. The file is created (or tightened) to mode
    /// 0600 and must not be a symbolic link itself. Then WAL mode, the durability, `busy_timeout`, `foreign_keys`
    /// and `trusted_schema = OFF` are set, and the schema is migrated. A
    /// file that is not a database, a database from another program and a
    /// database from a newer flowd are refused with their own errors.
    package init(path: String, configuration: Configuration = Configuration()) throws(StoreError) {
        guard !path.isEmpty else { throw .invalidArgument("the database path is empty") }
        let pageSize = configuration.pageSize
        guard (512...65536).contains(pageSize), pageSize & (pageSize - 1) == 0 else {
            throw .invalidArgument("a page size must be a power of two from 512 to 65536, not \(pageSize)")
        }
        self.path = path
        self.configuration = configuration
        var openPath = path
        if let slash = path.lastIndex(of: "/") {
            let directory = slash == path.startIndex ? "/" : String(path[..<slash])
            let canonical = try StoreFiles.ensureDirectory(directory)
            openPath = (canonical == "/" ? "" : canonical) + path[slash...]
        }
        self.openPath = openPath
        try StoreFiles.ensurePrivateFiles(openPath)
        let db: SQLiteDatabase
        do {
            db = try SQLiteDatabase(path: openPath, flags: [.readWrite, .create, .noFollow, .noMutex])
        } catch {
            throw StoreError.from(error, path: path)
        }
        do {
            try Self.configure(db, configuration, path: path)
            try Schema.prepare(db, path: path)
        } catch {
            try? db.close()
            throw error
        }
        self.connection = LockedValue(db)
        self.checkpointConnection = LockedValue(CheckpointConnection())
    }

    private static func configure(_ db: SQLiteDatabase, _ configuration: Configuration, path: String) throws(StoreError) {
        do {
            try db.setBusyTimeout(milliseconds: milliseconds(configuration.busyTimeout))
        } catch {
            throw StoreError.from(error, path: path)
        }
        // Identify the file before any pragma writes to it: a file that is not
        // a database, another program's database and one from a newer flowd
        // are refused untouched (not even switched to WAL).
        let (applicationID, _) = try Schema.identify(db, path: path)
        if applicationID == 0 {
            // A new, empty file (identify refuses one with tables but no id):
            // the page size takes effect only before the first page is written.
            do {
                try db.execute("PRAGMA page_size = \(configuration.pageSize)")
            } catch {
                throw StoreError.from(error, path: path)
            }
        }
        let mode: String
        do {
            mode = try db.scalarText("PRAGMA journal_mode = WAL") ?? ""
        } catch {
            throw StoreError.from(error, path: path)
        }
        guard mode.lowercased() == "wal" else { throw .walUnavailable(path: path, journalMode: mode) }
        let synchronous = configuration.durability == .powerLoss ? "FULL" : "NORMAL"
        do {
            try db.execute(
                """
                PRAGMA synchronous = \(synchronous);
                PRAGMA foreign_keys = ON;
                PRAGMA trusted_schema = OFF;
                PRAGMA wal_autocheckpoint = \(max(0, configuration.autoCheckpointPages));
                PRAGMA journal_size_limit = \(max(-1, configuration.journalSizeLimit));
                """)
        } catch {
            throw StoreError.from(error, path: path)
        }
    }

    /// Closes the store. Calling it again does nothing; every other call
    /// afterwards fails with ``StoreError/closed``.
    package func close() throws(StoreError) {
        let path = self.path
        try checkpointConnection.withLock { (state: inout CheckpointConnection) throws(StoreError) in
            state.isClosed = true
            guard let open = state.database else { return }
            do throws(SQLiteError) {
                try open.close()
            } catch {
                throw StoreError.from(error, path: path)
            }
            state.database = nil
        }
        try connection.withLock { (db: inout SQLiteDatabase?) throws(StoreError) in
            guard let open = db else { return }
            do throws(SQLiteError) {
                try open.close()
            } catch {
                throw StoreError.from(error, path: path)
            }
            db = nil
        }
    }

    /// Runs `body` with the open connection, under the lock, turning SQLite
    /// errors into store errors.
    func withDatabase<Result: Sendable>(
        _ body: (SQLiteDatabase) throws(StoreError) -> Result
    ) throws(StoreError) -> Result {
        try connection.withLock { (db: inout SQLiteDatabase?) throws(StoreError) -> Result in
            guard let open = db else { throw .closed }
            return try body(open)
        }
    }

    // MARK: - Sessions

    /// Inserts `session`, or replaces its state, `updatedAt`, payload version
    /// and payload if the id exists. `owner`, `flowID` and `createdAt` are
    /// fixed at the first insert; an upsert that disagrees on owner or flow
    /// fails with ``StoreError/identityMismatch(id:)`` and changes nothing.
    package func upsert(_ session: StoredSession) throws(StoreError) {
        try withDatabase { db throws(StoreError) in _ = try SessionQueries(db: db, path: path).upsert(session) }
    }

    /// As ``upsert(_:)``, given where the session's row was (`row`, from an
    /// earlier call; nil when not known): returns where it is now, for the
    /// session's next change, or nil when that is not known.
    @discardableResult
    package func upsert(_ session: StoredSession, row: StoredRow?) throws(StoreError) -> StoredRow? {
        try withDatabase { db throws(StoreError) in try SessionQueries(db: db, path: path).upsert(session, row: row) }
    }

    /// The session with `id`, or nil.
    package func load(id: String) throws(StoreError) -> StoredSession? {
        try withDatabase { db throws(StoreError) in try SessionQueries(db: db, path: path).load(id: id) }
    }

    /// As ``load(id:)``, with where its row is (for ``upsert(_:row:)``).
    package func loadRow(id: String) throws(StoreError) -> (session: StoredSession, row: StoredRow)? {
        try withDatabase { db throws(StoreError) in try SessionQueries(db: db, path: path).loadRow(id: id) }
    }

    /// Deletes the session with `id`; returns whether it existed.
    @discardableResult
    package func delete(id: String) throws(StoreError) -> Bool {
        try withDatabase { db throws(StoreError) in try SessionQueries(db: db, path: path).delete(id: id) }
    }

    /// Every session's summary, or those of `owner`, oldest first. Reads
    /// only the indexed columns, never payloads.
    package func summaries(owner: UInt32? = nil) throws(StoreError) -> [SessionSummary] {
        try withDatabase { db throws(StoreError) in try SessionQueries(db: db, path: path).summaries(owner: owner) }
    }

    /// The number of stored sessions: one row read from a counter kept by
    /// triggers, cheap at any size.
    package func count() throws(StoreError) -> Int {
        try withDatabase { db throws(StoreError) in try SessionQueries(db: db, path: path).count() }
    }

    /// The number of sessions owned by `owner` (a range count on the owner index).
    package func count(owner: UInt32) throws(StoreError) -> Int {
        try withDatabase { db throws(StoreError) in try SessionQueries(db: db, path: path).count(owner: owner) }
    }

    /// Ids of sessions last updated before `cutoff` (µs since the epoch),
    /// in the order of their idle-period entries (least recently updated
    /// first, give or take the entries' lag of up to 18 minutes, schema 5),
    /// at most `limit` of them. The daemon
    /// deletes them in batches, so one expiry pass never holds the lock long.
    package func expired(before cutoff: Int64, limit: Int) throws(StoreError) -> [String] {
        try withDatabase { db throws(StoreError) in
            try SessionQueries(db: db, path: path).expired(before: cutoff, limit: limit)
        }
    }

    /// As ``expired(before:limit:)``, leaving out the sessions in `state`
    /// (settled ones, which have a retention of their own).
    package func expired(before cutoff: Int64, limit: Int, excludingState state: String) throws(StoreError) -> [String] {
        try withDatabase { db throws(StoreError) in
            try SessionQueries(db: db, path: path).expired(before: cutoff, limit: limit, excludingState: state)
        }
    }

    /// Ids of the sessions in `state` last updated before `cutoff` (µs since
    /// the epoch), least recently updated first, at most `limit`.
    package func ids(inState state: String, updatedBefore cutoff: Int64, limit: Int) throws(StoreError) -> [String] {
        try withDatabase { db throws(StoreError) in
            try SessionQueries(db: db, path: path).ids(inState: state, updatedBefore: cutoff, limit: limit)
        }
    }

    /// The number of sessions owned by `owner` that are not in `state`.
    package func count(owner: UInt32, excludingState state: String) throws(StoreError) -> Int {
        try withDatabase { db throws(StoreError) in
            try SessionQueries(db: db, path: path).count(owner: owner, excludingState: state)
        }
    }

    /// The number of sessions in each state that has any (a scan: for
    /// status reports, not for every call).
    package func countsByState() throws(StoreError) -> [String: Int] {
        try withDatabase { db throws(StoreError) in try SessionQueries(db: db, path: path).countsByState() }
    }

    /// Ids of the sessions in `state`, such as the `submitting` sessions
    /// the daemon must mark interrupted at start-up.
    package func ids(inState state: String) throws(StoreError) -> [String] {
        try withDatabase { db throws(StoreError) in try SessionQueries(db: db, path: path).ids(inState: state) }
    }

    /// Runs `body` in one write transaction (`BEGIN IMMEDIATE`): every change
    /// it makes commits together when it returns, or none when it throws.
    ///
    /// The store stays locked while `body` runs, so `body` must not call
    /// the store itself (that would deadlock); it uses the transaction it is
    /// given, which cannot escape it.
    package func transaction<Result: Sendable>(
        _ body: (borrowing StoreTransaction) throws(StoreError) -> Result
    ) throws(StoreError) -> Result {
        let path = self.path
        return try withDatabase { db throws(StoreError) -> Result in
            guard !db.isInTransaction else { throw .invalidArgument("transactions do not nest") }
            do throws(SQLiteError) {
                try db.withCachedStatement("BEGIN IMMEDIATE") { begin throws(SQLiteError) in try begin.run() }
            } catch {
                throw StoreError.from(error, path: path)
            }
            let result: Result
            do throws(StoreError) {
                result = try body(StoreTransaction(queries: SessionQueries(db: db, path: path)))
            } catch {
                db.rollback()
                throw error
            }
            do throws(SQLiteError) {
                try db.withCachedStatement("COMMIT") { commit throws(SQLiteError) in try commit.run() }
            } catch {
                db.rollback()
                throw StoreError.from(error, path: path)
            }
            return result
        }
    }

    /// Runs a passive WAL checkpoint now: copies committed pages from the WAL
    /// back into the database file and syncs both, without waiting for
    /// readers. Returns the number of WAL frames checkpointed: 0 when
    /// another checkpoint was running at that moment (SQLite's BUSY).
    ///
    /// It runs on a second connection, not under the store's lock, so it can
    /// run on a background thread while the event loop keeps committing.
    /// That is the way to keep the checkpoint's `fsync` and page copies out
    /// of the latency of upserts: open the store with
    /// ``Configuration/autoCheckpointPages`` set high (a backstop) and call
    /// this periodically from another thread.
    @discardableResult
    package func checkpoint() throws(StoreError) -> Int {
        let path = self.path
        let openPath = self.openPath
        let busyTimeout = configuration.busyTimeout
        let isClosed = connection.withLock { $0 == nil }
        guard !isClosed else { throw .closed }
        return try checkpointConnection.withLock { (state: inout CheckpointConnection) throws(StoreError) -> Int in
            guard !state.isClosed else { throw .closed }
            do throws(SQLiteError) {
                let db: SQLiteDatabase
                if let open = state.database {
                    db = open
                } else {
                    db = try SQLiteDatabase(path: openPath, flags: [.readWrite, .noFollow, .noMutex])
                    try db.setBusyTimeout(milliseconds: Self.milliseconds(busyTimeout))
                    // A connection learns that the file is in WAL mode only by
                    // reading it; until then a checkpoint silently does nothing.
                    _ = try db.scalarInteger("PRAGMA user_version")
                    state.database = db
                }
                return try db.checkpoint(.passive).checkpointed
            } catch where error.code == .busy {
                // A passive checkpoint never waits: SQLite answers BUSY when
                // another checkpoint (the main connection's automatic one)
                // runs at that moment. Nothing was copied; the next one will.
                return 0
            } catch {
                throw StoreError.from(error, path: path)
            }
        }
    }

    static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}

/// The state of the checkpoint connection: not yet opened, open, or closed with the store.
struct CheckpointConnection {
    var database: SQLiteDatabase?
    var isClosed = false
}

/// The store's operations inside one ``SessionStore/transaction(_:)``.
///
/// It cannot be copied and is only lent to the transaction's body, so it
/// cannot outlive the transaction.
package struct StoreTransaction: ~Copyable {
    let queries: SessionQueries

    /// As ``SessionStore/upsert(_:)``, committed with the transaction.
    package func upsert(_ session: StoredSession) throws(StoreError) {
        _ = try queries.upsert(session)
    }

    /// As ``SessionStore/load(id:)``, seeing the transaction's own changes.
    package func load(id: String) throws(StoreError) -> StoredSession? {
        try queries.load(id: id)
    }

    /// As ``SessionStore/delete(id:)``, committed with the transaction.
    @discardableResult
    package func delete(id: String) throws(StoreError) -> Bool {
        try queries.delete(id: id)
    }

    /// As ``SessionStore/count()``, seeing the transaction's own changes.
    package func count() throws(StoreError) -> Int {
        try queries.count()
    }

    /// As ``SessionStore/count(owner:)``, seeing the transaction's own changes.
    package func count(owner: UInt32) throws(StoreError) -> Int {
        try queries.count(owner: owner)
    }

    /// As ``SessionStore/count(owner:excludingState:)``, seeing the transaction's own changes.
    package func count(owner: UInt32, excludingState state: String) throws(StoreError) -> Int {
        try queries.count(owner: owner, excludingState: state)
    }

    /// As ``SessionStore/ids(inState:)``, seeing the transaction's own changes.
    package func ids(inState state: String) throws(StoreError) -> [String] {
        try queries.ids(inState: state)
    }
}
