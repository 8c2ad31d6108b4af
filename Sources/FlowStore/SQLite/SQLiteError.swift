/// A SQLite result code, primary or extended (`SQLITE_BUSY`,
/// `SQLITE_IOERR_WRITE`, …).
///
/// Only the primary codes FlowStore reacts to are named; every other code
/// still round-trips through ``rawValue``.
package struct SQLiteResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The C result code.
    package var rawValue: Int32

    /// The code for a C result code.
    package init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The primary code: the low eight bits of an extended code.
    package var primary: SQLiteResultCode {
        SQLiteResultCode(rawValue: rawValue & 0xff)
    }

    /// SQLite's own short English name for the code (`sqlite3_errstr`).
    package var description: String {
        "\(LibSQLite.errorString(rawValue)) (\(rawValue))"
    }
}

/// A failed SQLite call: the result code, the extended code and SQLite's
/// message (`sqlite3_errmsg`), plus what FlowStore was doing.
package struct SQLiteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The primary result code, for example ``SQLiteResultCode/busy``.
    package var code: SQLiteResultCode
    /// The extended result code, for example `SQLITE_IOERR_FSYNC`; equal to
    /// ``code`` when SQLite gave no extended code.
    package var extendedCode: SQLiteResultCode
    /// SQLite's English message for the failure.
    package var message: String
    /// The operation that failed, such as `prepare` or `step`, and the SQL if any.
    package var operation: String

    /// An error for `extendedCode`; ``code`` is derived from it.
    package init(extendedCode: SQLiteResultCode, message: String, operation: String) {
        self.code = extendedCode.primary
        self.extendedCode = extendedCode
        self.message = message
        self.operation = operation
    }

    /// A one-line message for logs and error replies.
    package var description: String {
        let text = message.isEmpty ? LibSQLite.errorString(extendedCode.rawValue) : message
        return "SQLite \(operation): \(text) (code \(code.rawValue), extended \(extendedCode.rawValue))"
    }

    /// The error after a failed call on `db`: the extended code from the
    /// return value (the connection is opened with `SQLITE_OPEN_EXRESCODE`)
    /// and the message from `sqlite3_errmsg`.
    static func from(_ rc: Int32, db: OpaquePointer?, operation: String) -> SQLiteError {
        var extended = rc
        if let db, rc & 0xff == rc {
            // Not already extended: ask the connection for the extended code
            // of the same failure.
            let fromHandle = LibSQLite.extendedErrorCode(db)
            if fromHandle & 0xff == rc { extended = fromHandle }
        }
        return SQLiteError(
            extendedCode: SQLiteResultCode(rawValue: extended),
            message: LibSQLite.errorMessage(db),
            operation: operation)
    }

    /// A misuse of this module's API found before any C call.
    static func misuse(_ message: String, operation: String) -> SQLiteError {
        SQLiteError(extendedCode: .misuse, message: message, operation: operation)
    }
}
