import Glibc

/// Which file a plugin was loaded from, so a disabled plugin is enabled
/// again once that file changes (an administrator installs a fix, or runs
/// `touch` on it).
public struct PluginFileIdentity: Hashable, Sendable {
    /// `st_dev` of the file.
    public var device: UInt64
    /// `st_ino` of the file.
    public var inode: UInt64
    /// `st_size` of the file, in bytes.
    public var size: Int64
    /// Modification time in nanoseconds since the Unix epoch.
    public var modificationTime: Int64

    /// An identity from its four parts.
    public init(device: UInt64, inode: UInt64, size: Int64, modificationTime: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modificationTime = modificationTime
    }

    /// The identity in a `stat` result, for example from the loader's `fstat`.
    public init(_ status: stat) {
        self.device = UInt64(status.st_dev)
        self.inode = UInt64(status.st_ino)
        self.size = Int64(status.st_size)
        self.modificationTime = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
    }

    /// The identity of the file at `path` (`stat(2)`).
    public static func of(path: String) throws(StoreError) -> PluginFileIdentity {
        let result = Posix.status(path)
        guard let status = result.status else { throw .file(path: path, errno: result.errno) }
        return PluginFileIdentity(status)
    }
}

/// A plugin the crash guard disabled.
public struct DisabledPlugin: Hashable, Sendable {
    /// The name the daemon recorded the plugin under.
    public var name: String
    /// Why it was disabled, for `ListPlugins` and the journal.
    public var reason: String
    /// When, in microseconds since the epoch.
    public var disabledAt: Int64
    /// The file that was disabled; nil when it was not known.
    public var file: PluginFileIdentity?
}

/// Plugins kept disabled across restarts: the daemon records here the
/// plugins its crash guard (in `PluginHost`) found in the middle of a call
/// at start-up. A plugin stays disabled until its file changes or
/// ``enablePlugin(_:)`` clears it.
extension SessionStore {
    /// Disables `name` (replacing an earlier record) until its file changes
    /// from `file`, or until ``enablePlugin(_:)``.
    public func disablePlugin(_ name: String, reason: String, file: PluginFileIdentity?) throws(StoreError) {
        guard !name.isEmpty else { throw .invalidArgument("a plugin name is empty") }
        let now = configuration.clock()
        try withDatabase { db throws(StoreError) in
            try SessionQueries(db: db, path: path).disablePlugin(name, reason: reason, file: file, at: now)
        }
    }

    /// Whether `name` is disabled, given the identity of the file the
    /// loader is about to load (nil if unknown).
    ///
    /// When the record names a file and `currentFile` differs from it, the
    /// file was replaced or touched: the record is deleted and nil returned.
    public func disabledPlugin(named name: String, currentFile: PluginFileIdentity?) throws(StoreError) -> DisabledPlugin? {
        try transaction { tx throws(StoreError) -> DisabledPlugin? in
            guard let record = try tx.queries.disabledPlugins(named: name).first else { return nil }
            if let recorded = record.file, let currentFile, recorded != currentFile {
                _ = try tx.queries.enablePlugin(name)
                return nil
            }
            return record
        }
    }

    /// Clears the disabled record of `name`; returns whether there was one.
    @discardableResult
    public func enablePlugin(_ name: String) throws(StoreError) -> Bool {
        try withDatabase { db throws(StoreError) -> Bool in try SessionQueries(db: db, path: path).enablePlugin(name) }
    }

    /// Every disabled plugin, by name.
    public func disabledPlugins() throws(StoreError) -> [DisabledPlugin] {
        try withDatabase { db throws(StoreError) -> [DisabledPlugin] in
            try SessionQueries(db: db, path: path).disabledPlugins(named: nil)
        }
    }
}

extension SessionQueries {
    func disablePlugin(_ name: String, reason: String, file: PluginFileIdentity?, at time: Int64) throws(StoreError) {
        let sql = """
            INSERT OR REPLACE INTO plugin_state
                (plugin, reason, disabled_at, file_device, file_inode, file_size, file_mtime_ns)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            """
        let identity: [SQLiteValue]
        if let file {
            identity = [
                .integer(Int64(bitPattern: file.device)), .integer(Int64(bitPattern: file.inode)),
                .integer(file.size), .integer(file.modificationTime),
            ]
        } else {
            identity = [.null, .null, .null, .null]
        }
        try with(sql) { statement throws(SQLiteError) in
            try statement.bind([.text(name), .text(reason), .integer(time)] + identity)
            try statement.run()
        }
    }

    func enablePlugin(_ name: String) throws(StoreError) -> Bool {
        try with("DELETE FROM plugin_state WHERE plugin = ?1") { statement throws(SQLiteError) -> Bool in
            try statement.bind([.text(name)])
            try statement.run()
            return db.changes > 0
        }
    }

    func disabledPlugins(named name: String?) throws(StoreError) -> [DisabledPlugin] {
        let columns = """
            SELECT plugin, reason, disabled_at, file_device, file_inode, file_size, file_mtime_ns FROM plugin_state
            """
        let sql = name == nil ? columns + " ORDER BY plugin" : columns + " WHERE plugin = ?1"
        let values: [SQLiteValue] = name.map { [.text($0)] } ?? []
        return try with(sql) { statement throws(SQLiteError) -> [DisabledPlugin] in
            try statement.rows(binding: values) { row throws(SQLiteError) -> DisabledPlugin in
                var file: PluginFileIdentity?
                if !row.isNull(at: 3) && !row.isNull(at: 4) && !row.isNull(at: 5) && !row.isNull(at: 6) {
                    file = PluginFileIdentity(
                        device: UInt64(bitPattern: row.int64(at: 3)), inode: UInt64(bitPattern: row.int64(at: 4)),
                        size: row.int64(at: 5), modificationTime: row.int64(at: 6))
                }
                return DisabledPlugin(
                    name: row.string(at: 0) ?? "", reason: row.string(at: 1) ?? "", disabledAt: row.int64(at: 2),
                    file: file)
            }
        }
    }
}
