import FlowdSystem

/// A plugin the crash guard disabled.
package struct DisabledPlugin: Hashable, Sendable {
    /// The plugin file's path, which the daemon records the plugin under.
    package var path: String
    /// The name the plugin registered under; empty when it was recorded by
    /// a version before schema 4, which did not keep it.
    package var name: String
    /// Why it was disabled, for `ListPlugins` and the journal.
    package var reason: String
    /// When, in microseconds since the epoch.
    package var disabledAt: Int64
    /// The file that was disabled; nil when it was not known.
    package var file: FileIdentity?

    /// A record from its parts.
    package init(path: String, name: String, reason: String, disabledAt: Int64, file: FileIdentity?) {
        self.path = path
        self.name = name
        self.reason = reason
        self.disabledAt = disabledAt
        self.file = file
    }
}

/// Plugins kept disabled across restarts: the daemon records here the
/// plugins its crash guard (in `PluginHost`) found crashed at start-up. The
/// store only keeps the records; `PluginHost`'s loader decides when a
/// record no longer applies (its file changed), and the daemon then clears it
/// with ``enablePlugin(path:)``.
extension SessionStore {
    /// Records the plugin file at `path`, registered as `name`, as disabled
    /// (replacing an earlier record), with the identity of the file that
    /// crashed.
    package func disablePlugin(path: String, name: String, reason: String, file: FileIdentity?) throws(StoreError) {
        guard !path.isEmpty else { throw .invalidArgument("a plugin path is empty") }
        let now = configuration.clock()
        try withDatabase { db throws(StoreError) in
            try SessionQueries(db: db, path: self.path).disablePlugin(path, name: name, reason: reason, file: file, at: now)
        }
    }

    /// Clears the disabled record of the plugin file at `path`; returns
    /// whether there was one.
    @discardableResult
    package func enablePlugin(path: String) throws(StoreError) -> Bool {
        try withDatabase { db throws(StoreError) -> Bool in
            try SessionQueries(db: db, path: self.path).enablePlugin(path)
        }
    }

    /// Every disabled plugin, by path.
    package func disabledPlugins() throws(StoreError) -> [DisabledPlugin] {
        try withDatabase { db throws(StoreError) -> [DisabledPlugin] in
            try SessionQueries(db: db, path: self.path).disabledPlugins()
        }
    }
}

extension SessionQueries {
    func disablePlugin(
        _ pluginPath: String, name: String, reason: String, file: FileIdentity?, at time: Int64
    ) throws(StoreError) {
        let sql = """
            INSERT OR REPLACE INTO plugin_state
                (path, reason, disabled_at, file_device, file_inode, file_size, file_mtime_ns, name)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
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
            try statement.bind([.text(pluginPath), .text(reason), .integer(time)] + identity + [.text(name)])
            try statement.run()
        }
    }

    func enablePlugin(_ pluginPath: String) throws(StoreError) -> Bool {
        try with("DELETE FROM plugin_state WHERE path = ?1") { statement throws(SQLiteError) -> Bool in
            try statement.bind([.text(pluginPath)])
            try statement.run()
            return db.changes > 0
        }
    }

    func disabledPlugins() throws(StoreError) -> [DisabledPlugin] {
        let sql = """
            SELECT path, reason, disabled_at, file_device, file_inode, file_size, file_mtime_ns, name FROM plugin_state
            ORDER BY path
            """
        return try with(sql) { statement throws(SQLiteError) -> [DisabledPlugin] in
            try statement.rows(binding: []) { row throws(SQLiteError) -> DisabledPlugin in
                var file: FileIdentity?
                if !row.isNull(at: 3) && !row.isNull(at: 4) && !row.isNull(at: 5) && !row.isNull(at: 6) {
                    file = FileIdentity(
                        device: UInt64(bitPattern: row.int64(at: 3)), inode: UInt64(bitPattern: row.int64(at: 4)),
                        size: row.int64(at: 5), modificationTime: row.int64(at: 6))
                }
                return DisabledPlugin(
                    path: row.string(at: 0) ?? "", name: row.string(at: 7) ?? "", reason: row.string(at: 1) ?? "",
                    disabledAt: row.int64(at: 2), file: file)
            }
        }
    }
}
