import Foundation
import Glibc
import Testing

@testable import FlowStore

/// A fresh directory under the system temporary directory, removed by `cleanup()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        var base = NSTemporaryDirectory()
        while base.hasSuffix("/") { base.removeLast() }
        path = "\(base)/flowstore-test-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { "\(path)/\(name)" }

    func cleanup() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Writes `contents` to a new file at `path`.
func writeFile(_ path: String, _ contents: Data) throws {
    try #require(FileManager.default.createFile(atPath: path, contents: contents), "cannot create \(path)")
}

/// The permission bits of `path` (lstat, so a symbolic link reports itself).
func mode(of path: String) -> mode_t? {
    var st = stat()
    guard lstat(path, &st) == 0 else { return nil }
    return st.st_mode & 0o7777
}

func makeSession(
    _ id: String, owner: UInt32 = 1000, flow: String = "consultation", state: String = "editing",
    created: Int64 = 1_700_000_000_000_000, updated: Int64? = nil, payload: [UInt8]? = nil
) -> StoredSession {
    StoredSession(
        id: id, owner: owner, flowID: flow, state: state, createdAt: created, updatedAt: updated ?? created,
        payloadVersion: 1, payload: payload ?? Array("{\"id\":\"\(id)\"}".utf8))
}

/// The plan SQLite makes for `sql` in a new, empty store: the details of
/// `EXPLAIN QUERY PLAN`'s rows joined by "; ", every parameter bound to NULL.
/// The tests that an index is used share this set-up.
func queryPlan(of sql: String) throws -> String {
    let dir = try TemporaryDirectory()
    defer { dir.cleanup() }
    let store = try SessionStore(path: dir.file("s.sqlite"))
    defer { try? store.close() }
    return try store.withDatabase { db throws(StoreError) -> String in
        do throws(SQLiteError) {
            let statement = try db.prepare("EXPLAIN QUERY PLAN " + sql)
            let nulls = [SQLiteValue](repeating: .null, count: statement.parameterCount)
            return try statement.rows(binding: nulls) { s throws(SQLiteError) in s.string(at: 3) ?? "" }
                .joined(separator: "; " as String)
        } catch {
            throw StoreError.from(error, path: store.path)
        }
    }
}

/// Writes `line` and a newline to descriptor 3 with one write(2), so a line
/// is either wholly in the pipe or not at all.
func writeToParent(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(3, $0.baseAddress, $0.count) }
}

/// Reads from `fd` until `condition` fails on the lines read so far, end of
/// file, or `deadline`. Returns the complete lines read.
func readLines(from fd: Int32, until deadline: ContinuousClock.Instant, while condition: ([String]) -> Bool) -> [String] {
    var buffer: [UInt8] = []
    var lines: [String] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while condition(lines) && ContinuousClock.now < deadline {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 200) >= 0 else { break }
        if poller.revents == 0 { continue }
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { break }
        buffer.append(contentsOf: chunk[0..<n])
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: buffer[..<newline], as: UTF8.self))
            buffer.removeSubrange(...newline)
        }
    }
    return lines
}

/// A database as schema `version` made it, holding `sessions` and
/// `disabledPlugins` (their names are lost before version 4): the
/// starting point of the migration tests.
func databaseAtSchemaVersion(
    _ version: Int, at path: String, sessions: [StoredSession], disabledPlugins: [DisabledPlugin] = []
) throws {
    let db = try SQLiteDatabase(path: path)
    try db.execute("PRAGMA journal_mode = WAL")
    try db.execute("PRAGMA application_id = \(Schema.applicationID)")
    for migration in Schema.migrations.prefix(version) { try db.execute(migration) }
    try db.execute("PRAGMA user_version = \(version)")
    for p in disabledPlugins {
        // Before version 4 the path's column was `plugin`, and no name was kept.
        let insert = try db.prepare(
            version < 4
                ? "INSERT INTO plugin_state (plugin, reason, disabled_at, file_device, file_inode, file_size, file_mtime_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
                : "INSERT INTO plugin_state (path, reason, disabled_at, file_device, file_inode, file_size, file_mtime_ns, name) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")
        let file: [SQLiteValue] = p.file.map {
            [.integer(Int64(bitPattern: $0.device)), .integer(Int64(bitPattern: $0.inode)), .integer($0.size), .integer($0.modificationTime)]
        } ?? [.null, .null, .null, .null]
        try insert.bind([.text(p.path), .text(p.reason), .integer(p.disabledAt)] + file + (version < 4 ? [] : [.text(p.name)]))
        _ = try insert.step()
    }
    for s in sessions {
        let insert = try db.prepare(
            "INSERT INTO sessions (id, owner, flow_id, state, created_at, updated_at, payload_version, payload) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7)")
        try insert.bind([.text(s.id), .integer(Int64(s.owner)), .text(s.flowID), .text(s.state),
                         .integer(s.createdAt), .integer(s.updatedAt), .blob(s.payload)])
        _ = try insert.step()
    }
    try db.close()
}
