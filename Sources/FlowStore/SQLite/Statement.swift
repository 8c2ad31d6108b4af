
/// A value SQLite stores: its five storage classes.
package enum SQLiteValue: Hashable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// A prepared statement (`sqlite3_stmt *`), finalized when released.
///
/// Parameters are numbered from 1 and result columns from 0, as in SQLite's
/// C API. A statement belongs to its ``SQLiteDatabase`` and shares its
/// thread rules; after the database is closed it refuses to run.
package final class Statement {
    private var pointer: OpaquePointer?
    private let connection: ConnectionHandle
    /// The SQL text the statement was prepared from.
    package let sql: String
    /// Set while ``SQLiteDatabase/withCachedStatement(_:_:)`` lends it out.
    var isInUse = false

    init(pointer: OpaquePointer, connection: ConnectionHandle, sql: String) {
        self.pointer = pointer
        self.connection = connection
        self.sql = sql
    }

    deinit {
        finalize()
    }

    /// Finalizes the statement (`sqlite3_finalize`); later calls fail with misuse.
    func finalize() {
        guard let pointer else { return }
        LibSQLite.finalize(pointer)
        self.pointer = nil
    }

    private func live(_ operation: String) throws(SQLiteError) -> OpaquePointer {
        guard let pointer, connection.pointer != nil else {
            throw SQLiteError.misuse(
                "the statement's database connection is closed", operation: "\(operation) \(abbreviatedSQL)")
        }
        return pointer
    }

    private var abbreviatedSQL: String { SQLiteDatabase.abbreviated(sql) }

    /// Throws unless `rc` is `SQLITE_OK`. The operation's text is built only
    /// for an error: binding is on every store write's path.
    private func check(_ rc: Int32, _ operation: @autoclosure () -> String) throws(SQLiteError) {
        guard rc == LibSQLite.ok else {
            throw SQLiteError.from(rc, db: connection.pointer, operation: "\(operation()) \(abbreviatedSQL)")
        }
    }

    /// Throws unless the SQL has exactly `count` parameters, so a caller that
    /// binds them one by one cannot leave one out (as ``bind(_:)`` checks).
    package func expectParameters(_ count: Int) throws(SQLiteError) {
        guard count == parameterCount else {
            throw SQLiteError(
                extendedCode: .range,
                message: "\(count) values for \(parameterCount) parameters",
                operation: "bind \(abbreviatedSQL)")
        }
    }

    /// The number of parameters in the SQL (`sqlite3_bind_parameter_count`).
    package var parameterCount: Int {
        guard let pointer else { return 0 }
        return Int(LibSQLite.parameterCount(pointer))
    }

    /// Binds `value` to parameter `index` (from 1) with the matching
    /// `sqlite3_bind_*` function. Text and blobs are copied.
    package func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
        let stmt = try live("bind")
        let rc: Int32
        switch value {
        case .null: rc = LibSQLite.bindNull(stmt, index)
        case .integer(let v): rc = LibSQLite.bindInt64(stmt, index, v)
        case .real(let v): rc = LibSQLite.bindDouble(stmt, index, v)
        case .text(let v): rc = LibSQLite.bindText(stmt, index, v)
        case .blob(let v): rc = LibSQLite.bindBlob(stmt, index, v)
        }
        try check(rc, "bind ?\(index) of")
    }

    /// Binds `values` to parameters 1…n. The count must match the SQL's
    /// parameter count exactly, so a forgotten parameter is an error rather
    /// than a silent NULL.
    package func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        try expectParameters(values.count)
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// Advances to the next row (`sqlite3_step`): true when a row is ready
    /// to read, false when the statement has finished.
    package func step() throws(SQLiteError) -> Bool {
        let stmt = try live("step")
        let rc = LibSQLite.step(stmt)
        switch rc {
        case LibSQLite.row: return true
        case LibSQLite.done: return false
        default: throw SQLiteError.from(rc, db: connection.pointer, operation: "step \(abbreviatedSQL)")
        }
    }

    /// Runs a statement that returns no rows to completion.
    package func run() throws(SQLiteError) {
        while try step() {}
    }

    /// Binds `values`, then returns every row mapped by `row`, and resets.
    package func rows<Row>(
        binding values: [SQLiteValue] = [], _ row: (Statement) throws(SQLiteError) -> Row
    ) throws(SQLiteError) -> [Row] {
        try bind(values)
        defer { reset() }
        var result: [Row] = []
        while try step() {
            result.append(try row(self))
        }
        return result
    }

    /// Resets the statement to run again (`sqlite3_reset`), keeping its
    /// bindings. Ends any read it held open.
    func rewind() {
        guard let pointer else { return }
        LibSQLite.reset(pointer)
    }

    /// Resets the statement to run again (`sqlite3_reset`) and clears its
    /// bindings (`sqlite3_clear_bindings`). Ends any read it held open.
    package func reset() {
        guard let pointer else { return }
        LibSQLite.reset(pointer)
        LibSQLite.clearBindings(pointer)
    }

    /// The number of result columns (`sqlite3_column_count`).
    package var columnCount: Int {
        guard let pointer else { return 0 }
        return Int(LibSQLite.columnCount(pointer))
    }

    /// True when column `index` (from 0) of the current row is NULL.
    package func isNull(at index: Int32) -> Bool {
        guard let pointer else { return true }
        return LibSQLite.columnType(pointer, index) == LibSQLite.typeNull
    }

    /// Column `index` of the current row as an integer (`sqlite3_column_int64`); NULL reads as 0.
    package func int64(at index: Int32) -> Int64 {
        guard let pointer else { return 0 }
        return LibSQLite.columnInt64(pointer, index)
    }

    /// Column `index` of the current row as a double (`sqlite3_column_double`); NULL reads as 0.
    package func double(at index: Int32) -> Double {
        guard let pointer else { return 0 }
        return LibSQLite.columnDouble(pointer, index)
    }

    /// Column `index` of the current row as text (`sqlite3_column_text`); nil for NULL.
    package func string(at index: Int32) -> String? {
        guard let pointer else { return nil }
        return LibSQLite.columnText(pointer, index)
    }

    /// Column `index` of the current row as bytes (`sqlite3_column_blob`); nil for NULL.
    package func blob(at index: Int32) -> [UInt8]? {
        guard let pointer else { return nil }
        return LibSQLite.columnBlob(pointer, index)
    }

    /// Column `index` of the current row in its own storage class.
    package func value(at index: Int32) -> SQLiteValue {
        guard let pointer else { return .null }
        switch LibSQLite.columnType(pointer, index) {
        case LibSQLite.typeInteger: return .integer(LibSQLite.columnInt64(pointer, index))
        case LibSQLite.typeFloat: return .real(LibSQLite.columnDouble(pointer, index))
        case LibSQLite.typeText: return .text(LibSQLite.columnText(pointer, index) ?? "")
        case LibSQLite.typeBlob: return .blob(LibSQLite.columnBlob(pointer, index) ?? [])
        default: return .null
        }
    }
}

@available(*, unavailable, message: "a statement belongs to its connection's thread")
extension Statement: Sendable {}
