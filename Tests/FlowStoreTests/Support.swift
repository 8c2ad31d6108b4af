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

/// A database as schema `version` (1 or 2) made it, holding `sessions`: the
/// starting point of the migration tests.
func databaseAtSchemaVersion(_ version: Int, at path: String, sessions: [StoredSession]) throws {
    let db = try SQLiteDatabase(path: path)
    try db.execute("PRAGMA journal_mode = WAL")
    try db.execute("PRAGMA application_id = \(Schema.applicationID)")
    try db.execute(Schema.version1)
    if version >= 2 { try db.execute(Schema.version2) }
    try db.execute("PRAGMA user_version = \(version)")
    for s in sessions {
        let insert = try db.prepare(
            "INSERT INTO sessions (id, owner, flow_id, state, created_at, updated_at, payload_version, payload) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7)")
        try insert.bind([.text(s.id), .integer(Int64(s.owner)), .text(s.flowID), .text(s.state),
                         .integer(s.createdAt), .integer(s.updatedAt), .blob(s.payload)])
        _ = try insert.step()
    }
    try db.close()
}
