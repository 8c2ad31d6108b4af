/// Why a ``SessionStore`` operation failed. Every case reads as a complete
/// sentence through ``message``, naming the file where there is one.
package enum StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The state directory (or a parent) could not be created or inspected;
    /// `reason` is the system's (`Permission denied (errno 13)`).
    case directory(path: String, reason: String)
    /// A path on the way to the database exists but is not a directory.
    case notADirectory(path: String)
    /// The directory of the database is writable by group or others
    /// (`mode`, for example 0777): someone else could replace the database.
    case unsafeDirectory(path: String, mode: UInt32)
    /// The database file is a symbolic link. Links among the directories
    /// above it are followed; the file itself must not be one, since
    /// whoever can change the link could point flowd's writes elsewhere.
    case symbolicLink(path: String)
    /// The database file or its `-wal`/`-shm` companion could not be
    /// created, opened or given mode 0600; `reason` is the system's.
    case file(path: String, reason: String)
    /// The database path (or a companion) is a device, a directory or
    /// anything else that is not a regular file.
    case notARegularFile(path: String)
    /// The file exists but is not a SQLite database (`SQLITE_NOTADB`).
    case notADatabase(path: String)
    /// The file is a SQLite database that flowd did not create.
    case foreignDatabase(path: String, reason: String)
    /// The database was written by a newer flowd; this one refuses to touch it.
    case newerSchema(path: String, found: Int, supported: Int)
    /// SQLite found the file damaged (`SQLITE_CORRUPT`).
    case corrupt(path: String, SQLiteError)
    /// The database cannot use write-ahead logging, for example on a
    /// file system without shared memory support.
    case walUnavailable(path: String, journalMode: String)
    /// Another connection held a lock longer than the busy timeout.
    case busy(SQLiteError)
    /// The file or directory is read-only for this process.
    case readOnly(SQLiteError)
    /// The disk (or a quota) is full.
    case diskFull(SQLiteError)
    /// The operating system reported an I/O error.
    case io(SQLiteError)
    /// An upsert would change the owner or flow of an existing session.
    case identityMismatch(id: String)
    /// A caller passed a value the store cannot accept.
    case invalidArgument(String)
    /// A row read back does not have the shape this version writes.
    case malformedRow(table: String, reason: String)
    /// The store was closed.
    case closed
    /// Any other SQLite failure.
    case sqlite(SQLiteError)

    /// A human sentence describing the failure.
    package var message: String {
        switch self {
        case .directory(let path, let reason):
            return "cannot create or open the state directory \(path): \(reason)"
        case .notADirectory(let path):
            return "\(path) is not a directory"
        case .unsafeDirectory(let path, let mode):
            let octal = String(mode, radix: 8)
            return "the state directory \(path) is writable by group or others (mode "
                + "\(String(repeating: "0", count: max(0, 4 - octal.count)) + octal)), so others could replace "
                + "the session database; flowd refuses it: make it private (chmod 0700 \(path))"
        case .symbolicLink(let path):
            return "\(path) is a symbolic link; flowd refuses a symbolic link as its database file (whoever can "
                + "change the link could point flowd's writes elsewhere), though links in the directories above "
                + "it are fine: put the database file itself there"
        case .file(let path, let reason):
            return "cannot prepare the database file \(path): \(reason)"
        case .notARegularFile(let path):
            return "\(path) is not a regular file"
        case .notADatabase(let path):
            return "\(path) is not a SQLite database; move it away and flowd starts with an empty store"
        case .foreignDatabase(let path, let reason):
            return "\(path) is not a flowd session store: \(reason)"
        case .newerSchema(let path, let found, let supported):
            return "\(path) has schema version \(found), written by a newer flowd; this flowd supports "
                + "up to version \(supported) and will not modify it"
        case .corrupt(let path, let error):
            return "\(path) is damaged: \(error.message)"
        case .walUnavailable(let path, let journalMode):
            return "\(path) cannot use write-ahead logging (journal mode stayed \"\(journalMode)\")"
        case .busy(let error):
            return "the session store is locked by another process: \(error.message)"
        case .readOnly(let error):
            return "the session store is read-only: \(error.message)"
        case .diskFull(let error):
            return "the disk holding the session store is full: \(error.message)"
        case .io(let error):
            return "I/O error in the session store: \(error.description)"
        case .identityMismatch(let id):
            return "session \(id) already exists with another owner or flow"
        case .invalidArgument(let text):
            return "invalid argument: \(text)"
        case .malformedRow(let table, let reason):
            return "malformed row in \(table): \(reason)"
        case .closed:
            return "the session store is closed"
        case .sqlite(let error):
            return error.description
        }
    }

    package var description: String { message }

    /// Classifies a SQLite failure; `path` names the file for the cases that carry it.
    static func from(_ error: SQLiteError, path: String) -> StoreError {
        switch error.code {
        case .notADatabase: return .notADatabase(path: path)
        case .corrupt: return .corrupt(path: path, error)
        case .busy, .locked: return .busy(error)
        case .readOnly: return .readOnly(error)
        case .full: return .diskFull(error)
        case .ioError: return .io(error)
        default: return .sqlite(error)
        }
    }
}
