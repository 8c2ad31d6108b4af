import DBus
import Foundation
import Testing
import TestSupport

/// Every acknowledged mutation survives `kill -9`; a restart serves the
/// sessions again at the same paths; secure values never reach the disk or
/// the log.
@Suite("Durability across kill -9 and restarts")
struct DurabilityTests {
    /// What one client thread did before the daemon was killed.
    struct WorkerLog: Sendable {
        /// Session id → path, for every session this worker created (acknowledged).
        var created: [String: ObjectPath] = [:]
        /// Session id → the last acknowledged value number of its field `n`.
        var acknowledged: [String: Int] = [:]
        /// The call in flight when the daemon died: it may or may not have
        /// taken effect, never half.
        var pending: (id: String, value: Int)?
        /// Sessions whose Close was acknowledged.
        var closed: Set<String> = []
        /// Sessions whose fate the killed call decides (a Close or a start in flight).
        var uncertain: Set<String> = []
        /// How the run ended (the first refused call).
        var ending = ""
        var mutations = 0
    }

    /// Runs numbered mutations on its own connection until a call fails:
    /// SetAnswers of `n` to "v<i>" round-robin over its sessions, a new
    /// session every 25 calls (up to 8), a Close every 40.
    static func work(address: String, initial: [SessionClient], progress: Latch) -> WorkerLog {
        var log = WorkerLog()
        let client: FlowClient
        do {
            client = try FlowClient(address: address)
        } catch {
            log.ending = "cannot connect: \(error)"
            return log
        }
        defer { client.connection.close() }
        var sessions = initial.map { client.session($0.path) }
        for session in sessions { log.created[session.id] = session.path }
        var i = 0
        while i < 1_000_000 {
            i += 1
            do {
                if i % 25 == 0 && sessions.count < 8 {
                    let session = try client.start("durable")
                    log.created[session.id] = session.path
                    sessions.append(session)
                } else if i % 40 == 0 && sessions.count > 2 {
                    let victim = sessions.removeLast()
                    log.uncertain.insert(victim.id)
                    try victim.close()
                    log.uncertain.remove(victim.id)
                    log.closed.insert(victim.id)
                } else {
                    let session = sessions[i % sessions.count]
                    log.pending = (session.id, i)
                    let errors = try session.set(["n": .string("v\(i)")])
                    guard errors.isEmpty else {
                        log.ending = "unexpected field errors \(errors)"
                        return log
                    }
                    log.acknowledged[session.id] = i
                    log.pending = nil
                }
                log.mutations += 1
                progress.countDown()
            } catch {
                log.ending = "\(error)"
                return log
            }
        }
        log.ending = "ran out of numbers"
        return log
    }

    @Test("kill -9 during a run of mutations from three clients; after a restart every acknowledged one is there, at the same paths")
    func killNineMidRun() throws {
        let secret = "pin-" + (0..<4).map { _ in String(UInt32.random(in: .min ... .max), radix: 16) }.joined()
        try withDaemon(DaemonSettings(verbose: true)) { fixture in
            // A session holding a secure value and a finished first step.
            let holder = try fixture.client.start("durable")
            #expect(try holder.set(["n": "holder", "pin": .string(secret)]) == [:])
            #expect(try holder.next() == [:])
            #expect(try holder.review().group("counter")?.finished == true)

            let workers = 3
            let sessions = try (0..<workers).map { _ in try (0..<4).map { _ in try fixture.client.start("durable") } }
            // Kill after this many acknowledged mutations, while all three keep calling.
            let progress = Latch(count: 1000)
            let finished = Latch(count: workers)
            let logs = Locked<[WorkerLog]>([])
            let address = fixture.bus.address
            for index in 0..<workers {
                let initial = sessions[index]
                let thread = Foundation.Thread {
                    let log = Self.work(address: address, initial: initial, progress: progress)
                    logs.withLock { $0.append(log) }
                    finished.countDown()
                }
                thread.start()
            }
            #expect(progress.wait(timeout: .seconds(120)), "the clients did not get 1000 mutations acknowledged")
            fixture.daemon.kill()
            #expect(fixture.daemon.child.exitStatus == .signaled(.kill))
            #expect(finished.wait(timeout: .seconds(60)), "a client thread did not notice the daemon died")
            let results = logs.value
            #expect(results.count == workers)
            for log in results {
                #expect(log.mutations > 0, "\(log.ending)")
                #expect(log.ending.contains("org.freedesktop.DBus.Error"), "a run should end only because the daemon died: \(log.ending)")
            }

            // The secret is not in the state directory, whatever SQLite left there.
            let needle = Data(secret.utf8)
            for (name, bytes) in try fixture.stateFiles() {
                #expect(bytes.range(of: needle) == nil, "the secure value is in \(name)")
            }

            try fixture.startAgain()
            let client = fixture.client
            var checked = 0
            for log in results {
                for (id, path) in log.created where !log.uncertain.contains(id) {
                    if log.closed.contains(id) {
                        expectDBusError(FlowdErrorName.notFound, "closed \(id) is back") { _ = try client.getSession(id) }
                        continue
                    }
                    #expect(try client.getSession(id) == path, "session \(id) moved")
                    let value = try client.session(path).step().field("n")?.value
                    var allowed: Set<DBusValue?> = [log.acknowledged[id].map { .string("v\($0)") }]
                    if let pending = log.pending, pending.id == id { allowed.insert(.string("v\(pending.value)")) }
                    #expect(allowed.contains(value), "session \(id): found \(String(describing: value)), acknowledged \(String(describing: log.acknowledged[id]))")
                    checked += 1
                }
            }
            #expect(checked >= 12)
            let listed = Set(try client.listSessions().map(\.id))
            for log in results {
                for id in log.created.keys where !log.uncertain.contains(id) {
                    #expect(listed.contains(id) == !log.closed.contains(id))
                }
            }

            // The secure value is gone: its step is not finished, the field is
            // unset, and Submit leads there.
            #expect(try client.getSession(holder.id) == holder.path)
            let review = try holder.review()
            #expect(review.group("counter")?.finished == false)
            #expect(review.group("counter")?.status == "Not finished")
            #expect(review.group("counter")?.display("n") == "holder")
            expectDBusError(FlowdErrorName.validationFailed) { try holder.submit() }
            #expect(try holder.string("CurrentStep") == "counter")
            let pin = try #require(try holder.step().field("pin"))
            #expect(pin.isSet == false)
            #expect(pin.value == nil)

            for (name, bytes) in try fixture.stateFiles() {
                #expect(bytes.range(of: needle) == nil, "the secure value is in \(name) after the restart")
            }
            #expect(!fixture.allStandardError.contains(secret), "the secure value is in flowd's log")
            #expect(fixture.allStandardError.contains("step completed"), "the log is captured (the check could see it)")
        }
    }

    @Test("more sessions than flowd keeps in memory: the others load from the store on demand; secure answers stay")
    func moreSessionsThanTheCache() throws {
        // The service keeps 2,048 sessions in memory (FlowService's cache).
        let count = 2300
        let secret = "cache-" + String(UInt64.random(in: .min ... .max), radix: 36)
        try withDaemon(DaemonSettings(configuration: "[Limits]\nMaxSessionsPerUser=5000\n")) { fixture in
            let client = fixture.client
            let holder = try client.start("durable")
            #expect(try holder.set(["n": "holder", "pin": .string(secret)]) == [:])
            var sessions: [SessionClient] = []
            sessions.reserveCapacity(count)
            for i in 0..<count {
                let session = try client.start("durable")
                try session.set(["n": .string("s\(i)")])
                sessions.append(session)
            }
            // The oldest were evicted long ago and come back from the store.
            for i in [0, 1, 2, 500, 1000, count - 1] {
                #expect(try sessions[i].step().field("n")?.value == .string("s\(i)"), "session \(i)")
            }
            #expect(try client.manager.property("SessionCount", as: UInt32.self) == UInt32(count + 1))
            // The one holding a secure answer was never dropped from memory.
            let pin = try #require(try holder.step().field("pin"))
            #expect(pin.isSet == true, "a session with a secure answer was evicted, and its answer lost")
            #expect(try holder.next() == [:])
        }
    }

    /// Runs the `sqlite3` shell on the stopped daemon's database.
    static func sqlite(_ database: String, _ sql: String) throws -> String {
        let result = try ChildProcess.run("sqlite3", ["-batch", "-bail", database, sql])
        guard result.status == .exited(0) else { throw TestSupportError("sqlite3: \(result.standardError)") }
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Bytes from upper- or lower-case hex digits.
    static func bytes(hex: String) -> Data {
        var data = Data()
        var iterator = hex.utf8.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            guard let h = UInt8(String(UnicodeScalar(high)), radix: 16), let l = UInt8(String(UnicodeScalar(low)), radix: 16) else { break }
            data.append(h << 4 | l)
        }
        return data
    }

    @Test("a session stored as submitting (the daemon died during the action) comes back failed, 'interrupted', never re-submitted",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "needs the sqlite3 shell"))
    func interruptedSubmit() throws {
        // Without a plugin a submit never stays running, so the record is
        // set to `submitting` with the sqlite3 shell while flowd is stopped:
        // what a kill -9 during a submit action leaves behind.
        try withDaemon { fixture in
            let session = try fixture.client.start("quick")
            try session.set(["stars": .int64(3)])
            try session.next()
            try session.set(["comment": "Almost sent"])
            #expect(fixture.stop() == .exited(0))

            let database = fixture.stateDirectory + "/sessions.sqlite"
            let hex = try Self.sqlite(database, "SELECT hex(payload) FROM sessions WHERE id = '\(session.id)';")
            var record = try #require(try JSONSerialization.jsonObject(with: Self.bytes(hex: hex)) as? [String: Any])
            #expect(record["state"] as? String == "editing")
            record["state"] = "submitting"
            let edited = try JSONSerialization.data(withJSONObject: record)
            let newHex = edited.map { String(format: "%02X", $0) }.joined()
            _ = try Self.sqlite(
                database, "UPDATE sessions SET state = 'submitting', payload = X'\(newHex)' WHERE id = '\(session.id)';")
            #expect(try Self.sqlite(database, "SELECT state FROM sessions WHERE id = '\(session.id)';") == "submitting")

            try fixture.startAgain()
            #expect(try session.state() == "failed")
            let message = try session.string("LastError")
            #expect(message.localizedCaseInsensitiveContains("interrupted"), "\(message)")
            #expect(fixture.daemon.standardError.contains("interrupted"), "\(fixture.daemon.standardError)")
            // Nothing was sent again on its own; the answers are kept and the person may retry.
            #expect(try session.answers() == ["stars": .int64(3), "comment": "Almost sent"])
            #expect(try session.next() == [:])
            #expect(try session.state() == "submitted")
            #expect(try session.string("LastError").isEmpty)
        }
    }

    @Test("a session's secure value is never written to the state directory, even while the daemon runs")
    func secureValuesStayInMemory() throws {
        let secret = "hunter-" + String(UInt64.random(in: .min ... .max), radix: 36)
        try withDaemon(DaemonSettings(verbose: true)) { fixture in
            let session = try fixture.client.start("trip")
            try session.next()
            try session.set(["name": "Ada", "email": "ada@example.org"])
            try session.next()
            try session.set(["mode": "train"])
            try session.next()
            try session.set(["terms": true])
            try session.next()
            #expect(try session.set(["password": .string(secret), "confirm": .string(secret)]) == [:])
            #expect(try session.next() == [:])
            // The held value still counts while the daemon runs.
            #expect(try session.review().group("account")?.finished == true)
            let display = try #require(try session.review().group("account")?.display("password"))
            #expect(!display.contains(secret))
            for (name, bytes) in try fixture.stateFiles() {
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "the secure value is in \(name)")
            }
            // And the non-secure answers are on disk (the check could see it).
            let files = try fixture.stateFiles()
            #expect(files.values.contains { $0.range(of: Data("ada@example.org".utf8)) != nil })
            try session.submit()
            #expect(try session.state() == "submitted")
            #expect(!fixture.daemon.standardError.contains(secret))
            // Other users cannot read the answers: the directory flowd made is
            // 0700 and the database files are the owner's alone.
            func mode(_ path: String) throws -> Int {
                try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
            }
            #expect(try mode(fixture.stateDirectory) == 0o700)
            for name in try FileManager.default.contentsOfDirectory(atPath: fixture.stateDirectory) {
                #expect(try mode(fixture.stateDirectory + "/" + name) & 0o077 == 0, "\(name) is open to others")
            }
        }
    }
}
