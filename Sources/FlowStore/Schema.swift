/// The store's schema and its migrations.
///
/// `PRAGMA user_version` holds the schema version and `PRAGMA
/// application_id` marks the file as flowd's. Migration *n* (counting from
/// 1) turns version *n − 1* into version *n*; all pending migrations run in
/// one `BEGIN IMMEDIATE` transaction, so a crash mid-way leaves the old
/// version intact. A database whose version is newer than ``latestVersion``
/// is refused before anything is written to it.
enum Schema {
    /// `PRAGMA application_id`: the bytes "FLWD".
    static let applicationID: Int64 = 0x464C_5744

    /// The SQL of each migration, in order. Append only; never edit a
    /// migration that has shipped.
    static let migrations: [String] = [version1, version2, version3, version4, version5, version6]

    /// The version this build writes.
    static var latestVersion: Int { migrations.count }

    /// Version 1.
    ///
    /// - `sessions`: a rowid table (not `WITHOUT ROWID`: rows carry a payload
    ///   of about a kilobyte, where rowid tables are the better fit). `id` is
    ///   the primary key, so lookups by id use its unique index. Three more
    ///   indexes serve `ListSessions` per owner, the start-up search for
    ///   interrupted submits by state, and expiry by `updated_at`. Timestamps
    ///   are microseconds since the epoch, as on D-Bus.
    /// - `session_count`: one row holding the number of sessions, kept by
    ///   triggers, so the count is a single-row read at any size.
    ///   `AUTOINCREMENT` so a token is never reused, even after its row is deleted.
    /// - `plugin_state`: plugins disabled by the crash guard, keyed by the
    ///   plugin file's path (the column `plugin`, `path` from version 4),
    ///   with the identity of the file that was disabled.
    ///
    /// Tables are `STRICT` (SQLite 3.37 or later), so a wrongly typed value
    /// is an error instead of being stored as something else.
    static let version1 = """
        CREATE TABLE sessions (
            id              TEXT    NOT NULL PRIMARY KEY,
            owner           INTEGER NOT NULL CHECK (owner BETWEEN 0 AND 4294967295),
            flow_id         TEXT    NOT NULL,
            state           TEXT    NOT NULL,
            created_at      INTEGER NOT NULL,
            updated_at      INTEGER NOT NULL,
            payload_version INTEGER NOT NULL,
            payload         BLOB    NOT NULL
        ) STRICT;
        CREATE INDEX sessions_by_owner ON sessions (owner);
        CREATE INDEX sessions_by_state ON sessions (state);
        CREATE INDEX sessions_by_updated_at ON sessions (updated_at);

        CREATE TABLE session_count (
            only  INTEGER NOT NULL PRIMARY KEY CHECK (only = 0),
            value INTEGER NOT NULL
        ) STRICT;
        INSERT INTO session_count (only, value) VALUES (0, 0);
        CREATE TRIGGER sessions_counted_insert AFTER INSERT ON sessions BEGIN
            UPDATE session_count SET value = value + 1 WHERE only = 0;
        END;
        CREATE TRIGGER sessions_counted_delete AFTER DELETE ON sessions BEGIN
            UPDATE session_count SET value = value - 1 WHERE only = 0;
        END;

        CREATE TABLE plugin_state (
            plugin        TEXT    NOT NULL PRIMARY KEY,
            reason        TEXT    NOT NULL,
            disabled_at   INTEGER NOT NULL,
            file_device   INTEGER,
            file_inode    INTEGER,
            file_size     INTEGER,
            file_mtime_ns INTEGER
        ) STRICT;
        """

    /// Version 2: fewer index pages written per upsert (flowd-bench,
    /// docs/performance.md). Every change of a session rewrote an entry in
    /// three indexes; now in about one.
    ///
    /// - `sessions_by_state` holds only `submitting` rows: it serves the
    ///   start-up search for interrupted submits, and the state of every
    ///   other session changes (or is rewritten) without touching it.
    /// - `sessions_by_updated_at` becomes `sessions_by_idle_time`, an index
    ///   on `updated_at >> 26` (periods of about 67 s): a session changed
    ///   again within its period rewrites the same entry on the same page,
    ///   instead of moving from its old place to the index's end. Expiry
    ///   still filters on the exact `updated_at`.
    static let version2 = """
        DROP INDEX sessions_by_state;
        CREATE INDEX sessions_by_state ON sessions (state) WHERE state = 'submitting';
        DROP INDEX sessions_by_updated_at;
        CREATE INDEX sessions_by_idle_time ON sessions (updated_at >> 26);
        """

    /// Version 3: an upsert writes one page, the row's, while a session stays
    /// in its idle period (flowd-bench, docs/performance.md).
    ///
    /// SQLite rewrites the entry of every index that depends on a column an
    /// `UPDATE` assigns, even when the key comes out the same, so the index on
    /// `updated_at >> 26` cost a second page at every change. The period is
    /// now a column of its own, `idle_period`, indexed: the upsert writes it
    /// on insert only, and a trigger corrects it when `updated_at` moves into
    /// another period (its `WHEN` skips the write otherwise). The triggers
    /// keep `idle_period = updated_at >> 26` for any writer, an administrator's
    /// `sqlite3` included. Expiry still filters on the exact `updated_at`.
    static let version3 = """
        ALTER TABLE sessions ADD COLUMN idle_period INTEGER NOT NULL DEFAULT 0;
        UPDATE sessions SET idle_period = updated_at >> 26;
        DROP INDEX sessions_by_idle_time;
        CREATE INDEX sessions_by_idle_period ON sessions (idle_period);
        CREATE TRIGGER sessions_idle_period_on_insert AFTER INSERT ON sessions
        WHEN NEW.idle_period IS NOT NEW.updated_at >> 26 BEGIN
            UPDATE sessions SET idle_period = NEW.updated_at >> 26 WHERE rowid = NEW.rowid;
        END;
        CREATE TRIGGER sessions_idle_period_on_update AFTER UPDATE OF updated_at, idle_period ON sessions
        WHEN NEW.idle_period IS NOT NEW.updated_at >> 26 BEGIN
            UPDATE sessions SET idle_period = NEW.updated_at >> 26 WHERE rowid = NEW.rowid;
        END;
        """

    /// Version 4: the plugin table says what it holds. Its key, the plugin
    /// file's path, was a column named `plugin`, read as the plugin's name
    /// (and on the way back the real name was lost): it is now `path`, and a
    /// `name` column keeps the name the plugin registered under (empty in
    /// rows recorded before this version).
    static let version4 = """
        ALTER TABLE plugin_state RENAME COLUMN plugin TO path;
        ALTER TABLE plugin_state ADD COLUMN name TEXT NOT NULL DEFAULT '';
        """

    /// The idle periods `idle_period` may lag behind `updated_at >> 26`
    /// (schema 5): 16 periods of 2²⁶ µs, about 18 minutes. The triggers of
    /// ``version5`` and, since version 6, flowd's own `UPDATE`
    /// (`SessionQueries.updateSQL`) spell the number out: a shipped
    /// migration never changes.
    static let idlePeriodSlack = 16

    /// Version 5: a session's idle-period entry moves once in about 18
    /// minutes of activity instead of whenever its change falls into another
    /// 67-second period (flowd-bench, docs/performance.md, the seventh round).
    ///
    /// Moving the entry wrote two more index pages per change (the entry's
    /// old page and the index's end), and a session answered step after step
    /// crossed a 67-second boundary at about every other change. Now
    /// `idle_period` is a lower bound of `updated_at >> 26` that lags by fewer
    /// than ``idlePeriodSlack`` periods: the triggers correct it only when it
    /// is ahead of `updated_at` or that far behind. Expiry stays exact: it
    /// selects `idle_period <= cutoff >> 26` through the index (every row
    /// updated before the cutoff is among those) and decides on `updated_at`;
    /// a lagging entry only adds a candidate it reads and leaves. Rows
    /// written by version 3 or 4 hold the exact period, which is within the
    /// bound, so the migration only replaces the triggers.
    static let version5 = """
        DROP TRIGGER sessions_idle_period_on_insert;
        DROP TRIGGER sessions_idle_period_on_update;
        CREATE TRIGGER sessions_idle_period_on_insert AFTER INSERT ON sessions
        WHEN NEW.idle_period > NEW.updated_at >> 26 OR NEW.idle_period <= (NEW.updated_at >> 26) - 16 BEGIN
            UPDATE sessions SET idle_period = NEW.updated_at >> 26 WHERE rowid = NEW.rowid;
        END;
        CREATE TRIGGER sessions_idle_period_on_update AFTER UPDATE OF updated_at, idle_period ON sessions
        WHEN NEW.idle_period > NEW.updated_at >> 26 OR NEW.idle_period <= (NEW.updated_at >> 26) - 16 BEGIN
            UPDATE sessions SET idle_period = NEW.updated_at >> 26 WHERE rowid = NEW.rowid;
        END;
        """

    /// Version 6: no idle-period triggers; flowd keeps the bound in its own
    /// statements (docs/performance.md, the ninth round, C1).
    ///
    /// The update trigger ran on every change, and SQLite allocates and
    /// zeroes a trigger's frame before it evaluates `WHEN`: 5.2 k of an
    /// upsert's 28.7 k instructions, to correct nothing nearly every time.
    /// flowd's `UPDATE` now rewrites a row in place only while its
    /// `idle_period` is within the bound (in its `WHERE`); otherwise its
    /// `INSERT … ON CONFLICT DO UPDATE` assigns the period too, as it does
    /// for a new row. Rows of version 5 are within the bound, so the
    /// migration only drops the triggers. Other writers (an administrator's
    /// `sqlite3`) are no longer corrected: a row whose `updated_at` is moved
    /// by hand keeps its entry until flowd next changes it, and expiry can
    /// then come later, never earlier, than `updated_at` says (docs/admin.md).
    static let version6 = """
        DROP TRIGGER sessions_idle_period_on_insert;
        DROP TRIGGER sessions_idle_period_on_update;
        """

    /// Checks that `db` is empty or flowd's own, refuses a newer schema, and
    /// runs the pending migrations. Reads two pragmas and, for an empty
    /// file, the schema table: it never scans sessions.
    static func prepare(_ db: SQLiteDatabase, path: String) throws(StoreError) {
        let (applicationID, version) = try identify(db, path: path)
        guard version < latestVersion else { return }
        do {
            try db.transaction(.immediate) { () throws(SQLiteError) in
                // Read again under the write lock: another process may have
                // migrated between the check above and BEGIN IMMEDIATE.
                let current = Int(try db.scalarInteger("PRAGMA user_version") ?? 0)
                guard current < latestVersion else { return }
                if applicationID == 0 {
                    try db.execute("PRAGMA application_id = \(Schema.applicationID)")
                }
                for migration in migrations[current...] {
                    try db.execute(migration)
                }
                try db.execute("PRAGMA user_version = \(latestVersion)")
            }
        } catch {
            throw StoreError.from(error, path: path)
        }
        // A concurrent opener may have raced to a newer version meanwhile.
        _ = try identify(db, path: path)
    }

    /// Reads the application id and schema version, and refuses a foreign
    /// or newer database.
    static func identify(_ db: SQLiteDatabase, path: String) throws(StoreError) -> (Int64, Int) {
        let applicationID: Int64
        let version: Int
        let objectCount: Int64
        do {
            // The first statement to read the file: a file that is not a
            // database fails here with SQLITE_NOTADB.
            applicationID = try db.scalarInteger("PRAGMA application_id") ?? 0
            version = Int(try db.scalarInteger("PRAGMA user_version") ?? 0)
            objectCount = version == 0 ? try db.scalarInteger("SELECT count(*) FROM sqlite_schema") ?? 0 : 0
        } catch {
            throw StoreError.from(error, path: path)
        }
        if applicationID != 0 && applicationID != Schema.applicationID {
            throw .foreignDatabase(path: path, reason: "its application id is \(applicationID)")
        }
        if applicationID == 0 && (version != 0 || objectCount != 0) {
            throw .foreignDatabase(path: path, reason: "it already holds tables but no flowd application id")
        }
        guard version <= latestVersion else {
            throw .newerSchema(path: path, found: version, supported: latestVersion)
        }
        return (applicationID, version)
    }
}
