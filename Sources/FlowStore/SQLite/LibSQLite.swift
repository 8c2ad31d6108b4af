import CSQLite

/// The one seam through which FlowStore calls the SQLite C library.
///
/// Every `sqlite3_*` call in the module goes through a function here, so the
/// set of C functions used is visible in one place and each wrapper can state
/// the contract it relies on. Nothing here throws: callers turn result codes
/// into ``SQLiteError`` values.
enum LibSQLite {
    /// The destructor value telling SQLite to copy bound text or blobs
    /// (`SQLITE_TRANSIENT`, a cast macro that Swift does not import).
    static let transient = unsafeBitCast(-1 as Int, to: sqlite3_destructor_type.self)

    /// Wraps `sqlite3_open_v2`. On failure SQLite may still return a handle,
    /// which must be closed. The process's first open configures the
    /// library first (``processConfiguration``).
    static func open(_ path: String, _ handle: inout OpaquePointer?, _ flags: Int32) -> Int32 {
        _ = processConfiguration
        return sqlite3_open_v2(path, &handle, flags, nil)
    }

    /// SQLite's process-wide settings, applied once before the library
    /// initializes (its first `sqlite3_open_v2`): no memory statistics.
    ///
    /// With statistics on (the library's default) every allocation and free
    /// takes a process-wide mutex and updates counters: 3.0 k of an
    /// upsert's 31.7 k instructions (docs/performance.md, the eighth round).
    /// flowd reads none of them (`sqlite3_memory_used`, `sqlite3_status`,
    /// heap limits). The result is SQLite's: `SQLITE_MISUSE` when something
    /// in the process initialized the library before, which leaves the
    /// statistics on and changes nothing else.
    static let processConfiguration: Int32 = flowd_sqlite3_config_no_memory_statistics()

    /// Wraps `sqlite3_memory_used`: the bytes SQLite has allocated, as its
    /// statistics count them (0 while they are off).
    static func memoryUsed() -> Int64 {
        sqlite3_memory_used()
    }

    /// Wraps `sqlite3_close_v2`: closes now, or as soon as the last
    /// prepared statement of the connection is finalized.
    static func close(_ db: OpaquePointer) -> Int32 {
        sqlite3_close_v2(db)
    }

    /// Wraps `sqlite3_errmsg`: the English message of the most recent failed call.
    static func errorMessage(_ db: OpaquePointer?) -> String {
        guard let db, let cString = sqlite3_errmsg(db) else { return "" }
        return String(cString: cString)
    }

    /// Wraps `sqlite3_errstr`: the generic English text of a result code.
    static func errorString(_ code: Int32) -> String {
        guard let cString = sqlite3_errstr(code) else { return "result code \(code)" }
        return String(cString: cString)
    }

    /// Wraps `sqlite3_extended_errcode`.
    static func extendedErrorCode(_ db: OpaquePointer) -> Int32 {
        sqlite3_extended_errcode(db)
    }

    /// Wraps `sqlite3_busy_timeout`.
    static func busyTimeout(_ db: OpaquePointer, _ milliseconds: Int32) -> Int32 {
        sqlite3_busy_timeout(db, milliseconds)
    }

    /// Wraps `sqlite3_exec` without a row callback; the error text, if any,
    /// is copied out and freed with `sqlite3_free`.
    static func exec(_ db: OpaquePointer, _ sql: String, _ message: inout String?) -> Int32 {
        var errorText: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &errorText)
        if let errorText {
            message = String(cString: errorText)
            sqlite3_free(errorText)
        }
        return rc
    }

    /// Wraps `sqlite3_prepare_v3`. `remainder` receives the SQL text after the
    /// first statement, so callers can refuse a string holding more than one.
    static func prepare(
        _ db: OpaquePointer, _ sql: String, _ flags: UInt32,
        _ statement: inout OpaquePointer?, _ remainder: inout String
    ) -> Int32 {
        var utf8 = Array(sql.utf8)
        utf8.append(0)
        return utf8.withUnsafeBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return SQLITE_MISUSE }
            return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { start -> Int32 in
                var tail: UnsafePointer<CChar>?
                let rc = sqlite3_prepare_v3(db, start, Int32(buffer.count), flags, &statement, &tail)
                if let tail {
                    remainder = String(cString: tail)
                }
                return rc
            }
        }
    }

    /// Wraps `sqlite3_finalize`.
    @discardableResult
    static func finalize(_ statement: OpaquePointer) -> Int32 {
        sqlite3_finalize(statement)
    }

    /// Wraps `sqlite3_reset`.
    @discardableResult
    static func reset(_ statement: OpaquePointer) -> Int32 {
        sqlite3_reset(statement)
    }

    /// Wraps `sqlite3_clear_bindings`.
    @discardableResult
    static func clearBindings(_ statement: OpaquePointer) -> Int32 {
        sqlite3_clear_bindings(statement)
    }

    /// Wraps `sqlite3_step`.
    static func step(_ statement: OpaquePointer) -> Int32 {
        sqlite3_step(statement)
    }

    /// Wraps `sqlite3_bind_parameter_count`.
    static func parameterCount(_ statement: OpaquePointer) -> Int32 {
        sqlite3_bind_parameter_count(statement)
    }

    /// Wraps `sqlite3_bind_int64`.
    static func bindInt64(_ statement: OpaquePointer, _ index: Int32, _ value: Int64) -> Int32 {
        sqlite3_bind_int64(statement, index, value)
    }

    /// Wraps `sqlite3_bind_double`.
    static func bindDouble(_ statement: OpaquePointer, _ index: Int32, _ value: Double) -> Int32 {
        sqlite3_bind_double(statement, index, value)
    }

    /// Wraps `sqlite3_bind_text64` with UTF-8 encoding and a copied buffer.
    static func bindText(_ statement: OpaquePointer, _ index: Int32, _ value: String) -> Int32 {
        var value = value
        return value.withUTF8 { bytes -> Int32 in
            bytes.withMemoryRebound(to: CChar.self) { chars -> Int32 in
                guard let base = chars.baseAddress else {
                    // An empty string may have no buffer; SQLite needs a
                    // non-null pointer to store '' rather than NULL.
                    return sqlite3_bind_text64(statement, index, "", 0, transient, UInt8(SQLITE_UTF8))
                }
                return sqlite3_bind_text64(
                    statement, index, base, UInt64(chars.count), transient, UInt8(SQLITE_UTF8))
            }
        }
    }

    /// Wraps `sqlite3_bind_blob64` with a copied buffer. An empty array binds
    /// a zero-length blob, not NULL (`sqlite3_bind_zeroblob`).
    static func bindBlob(_ statement: OpaquePointer, _ index: Int32, _ value: [UInt8]) -> Int32 {
        if value.isEmpty {
            return sqlite3_bind_zeroblob(statement, index, 0)
        }
        return value.withUnsafeBytes { bytes -> Int32 in
            sqlite3_bind_blob64(statement, index, bytes.baseAddress, UInt64(bytes.count), transient)
        }
    }

    /// Wraps `sqlite3_bind_null`.
    static func bindNull(_ statement: OpaquePointer, _ index: Int32) -> Int32 {
        sqlite3_bind_null(statement, index)
    }

    /// Wraps `sqlite3_column_count`.
    static func columnCount(_ statement: OpaquePointer) -> Int32 {
        sqlite3_column_count(statement)
    }

    /// Wraps `sqlite3_column_type`.
    static func columnType(_ statement: OpaquePointer, _ index: Int32) -> Int32 {
        sqlite3_column_type(statement, index)
    }

    /// Wraps `sqlite3_column_int64`.
    static func columnInt64(_ statement: OpaquePointer, _ index: Int32) -> Int64 {
        sqlite3_column_int64(statement, index)
    }

    /// Wraps `sqlite3_column_double`.
    static func columnDouble(_ statement: OpaquePointer, _ index: Int32) -> Double {
        sqlite3_column_double(statement, index)
    }

    /// Wraps `sqlite3_column_text` and `sqlite3_column_bytes` (in that order,
    /// as SQLite requires); nil for SQL NULL.
    static func columnText(_ statement: OpaquePointer, _ index: Int32) -> String? {
        guard let text = sqlite3_column_text(statement, index) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, index))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// Wraps `sqlite3_column_blob` and `sqlite3_column_bytes`; nil for SQL
    /// NULL, an empty array for a zero-length blob.
    static func columnBlob(_ statement: OpaquePointer, _ index: Int32) -> [UInt8]? {
        if sqlite3_column_type(statement, index) == SQLITE_NULL { return nil }
        let bytes = sqlite3_column_blob(statement, index)
        let count = Int(sqlite3_column_bytes(statement, index))
        guard let bytes, count > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// Wraps `sqlite3_changes64`.
    static func changes(_ db: OpaquePointer) -> Int64 {
        sqlite3_changes64(db)
    }

    /// Wraps `sqlite3_last_insert_rowid`.
    static func lastInsertRowID(_ db: OpaquePointer) -> Int64 {
        sqlite3_last_insert_rowid(db)
    }

    /// Wraps `sqlite3_get_autocommit`: true when no transaction is open.
    static func isAutocommit(_ db: OpaquePointer) -> Bool {
        sqlite3_get_autocommit(db) != 0
    }

    /// Wraps `sqlite3_wal_checkpoint_v2` on the main database.
    static func walCheckpoint(
        _ db: OpaquePointer, _ mode: Int32, _ logFrames: inout Int32, _ checkpointedFrames: inout Int32
    ) -> Int32 {
        sqlite3_wal_checkpoint_v2(db, nil, mode, &logFrames, &checkpointedFrames)
    }

    /// Wraps `sqlite3_libversion`.
    static func version() -> String {
        String(cString: sqlite3_libversion())
    }
}

// MARK: the C constants, under the names the rest of the module uses

extension LibSQLite {
    /// `SQLITE_OK`.
    static let ok = SQLITE_OK
    /// `SQLITE_ROW`: `sqlite3_step` has a row.
    static let row = SQLITE_ROW
    /// `SQLITE_DONE`: `sqlite3_step` has finished.
    static let done = SQLITE_DONE
    /// `SQLITE_OPEN_EXRESCODE`: extended result codes from `sqlite3_open_v2` on.
    static let openExtendedResultCodes = SQLITE_OPEN_EXRESCODE
    /// `SQLITE_PREPARE_PERSISTENT`.
    static let preparePersistent = UInt32(SQLITE_PREPARE_PERSISTENT)
    /// `SQLITE_NULL`, a column type.
    static let typeNull = SQLITE_NULL
    /// `SQLITE_INTEGER`, a column type.
    static let typeInteger = SQLITE_INTEGER
    /// `SQLITE_FLOAT`, a column type.
    static let typeFloat = SQLITE_FLOAT
    /// `SQLITE_TEXT`, a column type.
    static let typeText = SQLITE_TEXT
    /// `SQLITE_BLOB`, a column type.
    static let typeBlob = SQLITE_BLOB
}

extension SQLiteResultCode {
    /// `SQLITE_OK`.
    package static let ok = SQLiteResultCode(rawValue: SQLITE_OK)
    /// `SQLITE_ERROR`.
    package static let error = SQLiteResultCode(rawValue: SQLITE_ERROR)
    /// `SQLITE_BUSY`.
    package static let busy = SQLiteResultCode(rawValue: SQLITE_BUSY)
    /// `SQLITE_LOCKED`.
    package static let locked = SQLiteResultCode(rawValue: SQLITE_LOCKED)
    /// `SQLITE_READONLY`.
    package static let readOnly = SQLiteResultCode(rawValue: SQLITE_READONLY)
    /// `SQLITE_IOERR`.
    package static let ioError = SQLiteResultCode(rawValue: SQLITE_IOERR)
    /// `SQLITE_CORRUPT`.
    package static let corrupt = SQLiteResultCode(rawValue: SQLITE_CORRUPT)
    /// `SQLITE_FULL`.
    package static let full = SQLiteResultCode(rawValue: SQLITE_FULL)
    /// `SQLITE_CANTOPEN`.
    package static let cantOpen = SQLiteResultCode(rawValue: SQLITE_CANTOPEN)
    /// `SQLITE_CONSTRAINT`.
    package static let constraint = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT)
    /// `SQLITE_MISUSE`.
    package static let misuse = SQLiteResultCode(rawValue: SQLITE_MISUSE)
    /// `SQLITE_RANGE`.
    package static let range = SQLiteResultCode(rawValue: SQLITE_RANGE)
    /// `SQLITE_NOTADB`.
    package static let notADatabase = SQLiteResultCode(rawValue: SQLITE_NOTADB)
    /// `SQLITE_ROW`.
    package static let row = SQLiteResultCode(rawValue: SQLITE_ROW)
    /// `SQLITE_DONE`.
    package static let done = SQLiteResultCode(rawValue: SQLITE_DONE)
}

extension SQLiteDatabase.OpenFlags {
    /// `SQLITE_OPEN_READONLY`.
    package static let readOnly = Self(rawValue: SQLITE_OPEN_READONLY)
    /// `SQLITE_OPEN_READWRITE`.
    package static let readWrite = Self(rawValue: SQLITE_OPEN_READWRITE)
    /// `SQLITE_OPEN_CREATE`: create the file if it does not exist.
    package static let create = Self(rawValue: SQLITE_OPEN_CREATE)
    /// `SQLITE_OPEN_NOFOLLOW`: refuse a path whose last component is a symbolic link.
    package static let noFollow = Self(rawValue: SQLITE_OPEN_NOFOLLOW)
    /// `SQLITE_OPEN_NOMUTEX`: multi-thread mode; the caller serializes use of the connection.
    package static let noMutex = Self(rawValue: SQLITE_OPEN_NOMUTEX)
    /// `SQLITE_OPEN_FULLMUTEX`: serialized mode, for connections shared without a lock.
    package static let fullMutex = Self(rawValue: SQLITE_OPEN_FULLMUTEX)
    /// `SQLITE_OPEN_URI`: interpret the path as a `file:` URI.
    package static let uri = Self(rawValue: SQLITE_OPEN_URI)
}
