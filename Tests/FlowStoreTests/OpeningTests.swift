import Foundation
import Glibc
import Testing

@testable import FlowStore

@Suite("SessionStore: opening, files and schema")
struct OpeningTests {
    @Test func createsTheDirectory0700AndTheFile0600() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.file("state/flowd/sessions.sqlite")
        let store = try SessionStore(path: path)
        try store.upsert(makeSession("a"))
        #expect(mode(of: dir.file("state")) == 0o700)
        #expect(mode(of: dir.file("state/flowd")) == 0o700)
        #expect(mode(of: path) == 0o600)
        #expect(mode(of: path + "-wal") == 0o600)
        #expect(mode(of: path + "-shm") == 0o600)
        try store.close()
    }

    @Test func keepsTheModeOfAnExistingDirectory() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        try FileManager.default.createDirectory(atPath: dir.file("shared"), withIntermediateDirectories: false)
        chmod(dir.file("shared"), 0o750)
        let store = try SessionStore(path: dir.file("shared/s.sqlite"))
        #expect(mode(of: dir.file("shared")) == 0o750)
        try store.close()
    }

    @Test func tightensAnExistingWorldReadableFile() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.file("s.sqlite")
        try SessionStore(path: path).close()
        chmod(path, 0o644)
        let store = try SessionStore(path: path)
        #expect(mode(of: path) == 0o600)
        try store.close()
    }

    @Test func refusesASymbolicLink() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let target = dir.file("real.sqlite")
        try SessionStore(path: target).close()
        try FileManager.default.createSymbolicLink(atPath: dir.file("link.sqlite"), withDestinationPath: target)
        let error = #expect(throws: StoreError.symbolicLink(path: dir.file("link.sqlite"))) {
            try SessionStore(path: dir.file("link.sqlite"))
        }
        #expect(error?.message.contains("refuses a symbolic link as its database file") == true)
    }

    @Test func followsSymbolicLinksAmongTheDirectories() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        try FileManager.default.createDirectory(atPath: dir.file("real"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: dir.file("link"), withDestinationPath: dir.file("real"))
        let store = try SessionStore(path: dir.file("link/state/s.sqlite"))
        #expect(store.path == dir.file("link/state/s.sqlite"))
        #expect(try store.count() == 0)
        #expect(try store.checkpoint() >= 0)
        try store.close()
        #expect(FileManager.default.fileExists(atPath: dir.file("real/state/s.sqlite")))
        #expect(mode(of: dir.file("real/state")) == 0o700)
    }

    @Test func refusesADirectoryOthersMayWrite() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        for mode: mode_t in [0o777, 0o1777, 0o770, 0o720, 0o702] {
            let state = dir.file("state-\(String(mode, radix: 8))")
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
            chmod(state, mode)
            #expect(throws: StoreError.unsafeDirectory(path: state, mode: UInt32(mode))) {
                try SessionStore(path: state + "/s.sqlite")
            }
            #expect(!FileManager.default.fileExists(atPath: state + "/s.sqlite"))
        }
        let fine = dir.file("state-755")
        try FileManager.default.createDirectory(atPath: fine, withIntermediateDirectories: false)
        chmod(fine, 0o755)
        try SessionStore(path: fine + "/s.sqlite").close()
    }

    @Test func refusesADirectoryOrAFileInTheWay() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        try FileManager.default.createDirectory(atPath: dir.file("adir"), withIntermediateDirectories: false)
        #expect(throws: StoreError.self) { try SessionStore(path: dir.file("adir")) }
        try writeFile(dir.file("plain"), Data("x".utf8))
        #expect(throws: StoreError.notADirectory(path: dir.file("plain"))) {
            try SessionStore(path: dir.file("plain/sub/s.sqlite"))
        }
        #expect(throws: StoreError.invalidArgument("the database path is empty")) { try SessionStore(path: "") }
    }

    @Test func refusesAFileThatIsNotADatabase() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.file("s.sqlite")
        let text = Data(String(repeating: "this is not a database\n", count: 200).utf8)
        try writeFile(path, text)
        let error = #expect(throws: StoreError.notADatabase(path: path)) { try SessionStore(path: path) }
        #expect(error?.message.contains("is not a SQLite database") == true)
        // The file was left exactly as it was.
        #expect(FileManager.default.contents(atPath: path) == text)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test func aDamagedDatabaseGivesAnErrorNotACrash() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.file("s.sqlite")
        let store = try SessionStore(path: path)
        try store.transaction { tx throws(StoreError) in
            for i in 0..<400 { try tx.upsert(makeSession("s\(i)", payload: Array(repeating: 0x5a, count: 900))) }
        }
        try store.close()  // the last connection checkpoints the WAL into the file
        // Overwrite every page after the first two with garbage.
        var bytes = try #require(FileManager.default.contents(atPath: path))
        #expect(bytes.count > 16 * 4096)
        for i in (2 * 4096)..<bytes.count { bytes[i] = UInt8(truncatingIfNeeded: i &* 7919 >> 3) }
        try bytes.write(to: URL(fileURLWithPath: path))

        var failures: [StoreError] = []
        do throws(StoreError) {
            let damaged = try SessionStore(path: path)
            do throws(StoreError) { _ = try damaged.load(id: "s7") } catch { failures.append(error) }
            do throws(StoreError) { _ = try damaged.summaries() } catch { failures.append(error) }
            do throws(StoreError) { try damaged.upsert(makeSession("new")) } catch { failures.append(error) }
        } catch {
            failures.append(error)
        }
        #expect(!failures.isEmpty)
        for failure in failures {
            switch failure {
            case .corrupt, .notADatabase, .foreignDatabase: break
            default: Issue.record("unexpected error for a damaged file: \(failure)")
            }
        }
    }

    @Test func setsTheSchemaVersionAndApplicationID() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.file("s.sqlite")
        try SessionStore(path: path).close()
        let db = try SQLiteDatabase(path: path, flags: [.readOnly])
        #expect(try db.scalarInteger("PRAGMA user_version") == Int64(SessionStore.schemaVersion))
        #expect(try db.scalarInteger("PRAGMA application_id") == 0x464C_5744)
        #expect(try db.scalarText("PRAGMA journal_mode") == "wal")
        let tables = try db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
            .rows { s throws(SQLiteError) in s.string(at: 0) ?? "" }
        #expect(tables.contains("sessions") && tables.contains("plugin_state") && !tables.contains("plugin_calls"))
    }

    @Test func refusesANewerSchemaWithoutTouchingIt() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.file("s.sqlite")
        let store = try SessionStore(path: path)
        try store.upsert(makeSession("a"))
        try store.close()
        let db = try SQLiteDatabase(path: path)
        try db.execute("PRAGMA user_version = 99")
        try db.close()

        let error = #expect(throws: StoreError.newerSchema(path: path, found: 99, supported: SessionStore.schemaVersion)) {
            try SessionStore(path: path)
        }
        #expect(error?.message.contains("newer flowd") == true)
        let check = try SQLiteDatabase(path: path, flags: [.readOnly])
        #expect(try check.scalarInteger("PRAGMA user_version") == 99)
        #expect(try check.scalarInteger("SELECT count(*) FROM sessions") == 1)
    }

    @Test func refusesAnotherProgramsDatabase() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let tables = dir.file("other.sqlite")
        let other = try SQLiteDatabase(path: tables)
        try other.execute("CREATE TABLE contacts (name TEXT)")
        try other.close()
        let error = #expect(throws: StoreError.self) { try SessionStore(path: tables) }
        guard case .foreignDatabase = error else {
            Issue.record("expected foreignDatabase, got \(String(describing: error))")
            return
        }
        // Refused untouched: still in its own journal mode, no WAL created.
        let check = try SQLiteDatabase(path: tables, flags: [.readOnly])
        #expect(try check.scalarText("PRAGMA journal_mode") == "delete")
        #expect(try check.scalarInteger("PRAGMA application_id") == 0)
        #expect(!FileManager.default.fileExists(atPath: tables + "-wal"))
        let stamped = dir.file("stamped.sqlite")
        let app = try SQLiteDatabase(path: stamped)
        try app.execute("PRAGMA application_id = 1234")
        try app.close()
        #expect(throws: StoreError.foreignDatabase(path: stamped, reason: "its application id is 1234")) {
            try SessionStore(path: stamped)
        }
    }

    @Test func migratesAnEmptyDatabaseFileCreatedElsewhere() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.file("empty.sqlite")
        try writeFile(path, Data())
        let store = try SessionStore(path: path)
        try store.upsert(makeSession("a"))
        #expect(try store.count() == 1)
        try store.close()
    }

    @Test func busyWhenAnotherProcessHoldsTheWriteLock() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.file("s.sqlite")
        let store = try SessionStore(path: path, configuration: .init(busyTimeout: .milliseconds(20)))
        let other = try SQLiteDatabase(path: path)
        try other.execute("BEGIN IMMEDIATE")
        let error = #expect(throws: StoreError.self) { try store.upsert(makeSession("a")) }
        guard case .busy(let detail) = error else {
            Issue.record("expected busy, got \(String(describing: error))")
            return
        }
        #expect(detail.code == .busy)
        try other.execute("ROLLBACK")
        try store.upsert(makeSession("a"))
        #expect(try store.count() == 1)
    }
}
