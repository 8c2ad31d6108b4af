import DBus
import FlowClient
import FlowProtocol
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
    static func work(address: String, initial: [String], progress: Locked<Int>) async -> WorkerLog {
        var log = WorkerLog()
        let client: FlowClient
        do {
            client = try FlowClient(bus: .address(address))
        } catch {
            log.ending = "cannot connect: \(error)"
            return log
        }
        var sessions = initial
        for session in sessions { log.created[session] = sessionPath(session) }
        var i = 0
        while i < 1_000_000 {
            i += 1
            do throws(FlowClientError) {
                if i % 25 == 0 && sessions.count < 8 {
                    let session = try await client.startSession(flow: "durable", locale: nil, prefill: [:])
                    log.created[session] = sessionPath(session)
                    sessions.append(session)
                } else if i % 40 == 0 && sessions.count > 2 {
                    let victim = sessions.removeLast()
                    log.uncertain.insert(victim)
                    try await client.close(victim)
                    log.uncertain.remove(victim)
                    log.closed.insert(victim)
                } else {
                    let session = sessions[i % sessions.count]
                    log.pending = (session, i)
                    let errors = try await client.setAnswers(session, ["n": .string("v\(i)")])
                    guard errors.isEmpty else {
                        log.ending = "unexpected field errors \(errors)"
                        break
                    }
                    log.acknowledged[session] = i
                    log.pending = nil
                }
                log.mutations += 1
                progress.withLock { $0 += 1 }
            } catch {
                log.ending = "\(error)"
                break
            }
        }
        if log.ending.isEmpty { log.ending = "ran out of numbers" }
        await client.close()
        return log
    }

    @Test("kill -9 during a run of mutations from three clients; after a restart every acknowledged one is there, at the same paths")
    func killNineMidRun() async throws {
        let secret = "pin-" + (0..<4).map { _ in String(UInt32.random(in: .min ... .max), radix: 16) }.joined()
        try await withDaemon(DaemonSettings(verbose: true)) { fixture in
            // A session holding a secure value and a finished first step.
            let client = fixture.client
            let holder = try await client.startSession(flow: "durable", locale: nil, prefill: [:])
            #expect(try await client.setAnswers(holder, ["n": "holder", "pin": .string(secret)]) == [:])
            #expect(try await client.continueStep(holder) == [:])
            #expect(try await client.review(holder).group("counter")?.finished == true)

            let workers = 3
            var sessions: [[String]] = []
            for _ in 0..<workers {
                var mine: [String] = []
                for _ in 0..<4 { mine.append(try await client.startSession(flow: "durable", locale: nil, prefill: [:])) }
                sessions.append(mine)
            }
            // Kill after this many acknowledged mutations, while all three keep calling.
            let progress = Locked(0)
            let address = fixture.bus.address
            let running = sessions.map { initial in
                Task { await Self.work(address: address, initial: initial, progress: progress) }
            }
            #expect(await waitUntil(timeout: .seconds(120)) { progress.value >= 1000 },
                    "the clients did not get 1000 mutations acknowledged")
            await fixture.daemon.kill()
            #expect(fixture.daemon.child.exitStatus == .signaled(.kill))
            var results: [WorkerLog] = []
            for worker in running { results.append(await worker.value) }
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

            try await fixture.startAgain()
            var checked = 0
            for log in results {
                for (id, path) in log.created where !log.uncertain.contains(id) {
                    if log.closed.contains(id) {
                        await expectDBusError(FlowdErrorName.notFound, "closed \(id) is back") { _ = try await client.getSession(id) }
                        continue
                    }
                    #expect(try await client.getSession(id) == path, "session \(id) moved")
                    let value = try await client.step(id).field("n")?.value
                    var allowed: Set<DBusValue?> = [log.acknowledged[id].map { .string("v\($0)") }]
                    if let pending = log.pending, pending.id == id { allowed.insert(.string("v\(pending.value)")) }
                    #expect(allowed.contains(value), "session \(id): found \(String(describing: value)), acknowledged \(String(describing: log.acknowledged[id]))")
                    checked += 1
                }
            }
            #expect(checked >= 12)
            let listed = Set(try await client.listSessions().map(\.id))
            for log in results {
                for id in log.created.keys where !log.uncertain.contains(id) {
                    #expect(listed.contains(id) == !log.closed.contains(id))
                }
            }

            // The secure value is gone: its step is not finished, the field is
            // unset, and Submit leads there.
            #expect(try await client.getSession(holder) == sessionPath(holder))
            let review = try await client.review(holder)
            #expect(review.group("counter")?.finished == false)
            #expect(review.group("counter")?.status == "Not finished")
            #expect(review.group("counter")?.display("n") == "holder")
            await expectDBusError(FlowdErrorName.validationFailed) { try await client.submit(holder) }
            #expect(try await client.property(.currentStep, of: holder) == "counter")
            let pin = try #require(try await client.step(holder).field("pin"))
            #expect(pin.isSet == false)
            #expect(pin.value == nil)

            for (name, bytes) in try fixture.stateFiles() {
                #expect(bytes.range(of: needle) == nil, "the secure value is in \(name) after the restart")
            }
            #expect(!fixture.allStandardError.contains(secret), "the secure value is in flowd's log")
            #expect(fixture.allStandardError.contains("completed"), "the log is captured (the check could see it)")
        }
    }

    @Test("more sessions than flowd keeps in memory: the others load from the store on demand; secure answers stay")
    func moreSessionsThanTheCache() async throws {
        // The service keeps 2,048 sessions in memory (FlowService's cache).
        let count = 2300
        let secret = "cache-" + String(UInt64.random(in: .min ... .max), radix: 36)
        try await withDaemon(DaemonSettings(configuration: "[Limits]\nMaxSessionsPerUser=5000\n")) { fixture in
            let client = fixture.client
            let holder = try await client.startSession(flow: "durable", locale: nil, prefill: [:])
            #expect(try await client.setAnswers(holder, ["n": "holder", "pin": .string(secret)]) == [:])
            var sessions: [String] = []
            sessions.reserveCapacity(count)
            for i in 0..<count {
                let session = try await client.startSession(flow: "durable", locale: nil, prefill: [:])
                try await client.setAnswers(session, ["n": .string("s\(i)")])
                sessions.append(session)
            }
            // The oldest were evicted long ago and come back from the store.
            for i in [0, 1, 2, 500, 1000, count - 1] {
                #expect(try await client.step(sessions[i]).field("n")?.value == .string("s\(i)"), "session \(i)")
            }
            #expect(try await client.sessionCount() == UInt32(count + 1))
            // The one holding a secure answer was never dropped from memory.
            let pin = try #require(try await client.step(holder).field("pin"))
            #expect(pin.isSet == true, "a session with a secure answer was evicted, and its answer lost")
            #expect(try await client.continueStep(holder) == [:])
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
    func interruptedSubmit() async throws {
        // Without a plugin a submit never stays running, so the record is
        // set to `submitting` with the sqlite3 shell while flowd is stopped:
        // what a kill -9 during a submit action leaves behind.
        try await withDaemon { fixture in
            let client = fixture.client
            let session = try await client.startSession(flow: "quick", locale: nil, prefill: [:])
            try await client.setAnswers(session, ["stars": .int64(3)])
            try await client.continueStep(session)
            try await client.setAnswers(session, ["comment": "Almost sent"])
            #expect(await fixture.stop() == .exited(0))

            let database = fixture.stateDirectory + "/sessions.sqlite"
            let hex = try Self.sqlite(database, "SELECT hex(payload) FROM sessions WHERE id = '\(session)';")
            var record = try #require(try JSONSerialization.jsonObject(with: Self.bytes(hex: hex)) as? [String: Any])
            #expect(record["state"] as? String == "editing")
            record["state"] = "submitting"
            let edited = try JSONSerialization.data(withJSONObject: record)
            let newHex = edited.map { String(format: "%02X", $0) }.joined()
            _ = try Self.sqlite(
                database, "UPDATE sessions SET state = 'submitting', payload = X'\(newHex)' WHERE id = '\(session)';")
            #expect(try Self.sqlite(database, "SELECT state FROM sessions WHERE id = '\(session)';") == "submitting")

            try await fixture.startAgain()
            #expect(try await client.property(.state, of: session) == "failed")
            let message = try #require(try await client.property(.lastError, of: session).string)
            #expect(message.localizedCaseInsensitiveContains("interrupted"), "\(message)")
            #expect(fixture.daemon.standardError.contains("interrupted"), "\(fixture.daemon.standardError)")
            // Nothing was sent again on its own; the answers are kept and the person may retry.
            #expect(try await client.answers(session) == ["stars": .int64(3), "comment": "Almost sent"])
            #expect(try await client.continueStep(session) == [:])
            #expect(try await client.property(.state, of: session) == "submitted")
            #expect(try await client.property(.lastError, of: session) == "")
        }
    }

    @Test("a session's secure value is never written to the state directory, even while the daemon runs")
    func secureValuesStayInMemory() async throws {
        let secret = "hunter-" + String(UInt64.random(in: .min ... .max), radix: 36)
        try await withDaemon(DaemonSettings(verbose: true)) { fixture in
            let client = fixture.client
            let session = try await client.startSession(flow: "trip", locale: nil, prefill: [:])
            try await client.continueStep(session)
            try await client.setAnswers(session, ["name": "Ada", "email": "ada@example.org"])
            try await client.continueStep(session)
            try await client.setAnswers(session, ["mode": "train"])
            try await client.continueStep(session)
            try await client.setAnswers(session, ["terms": true])
            try await client.continueStep(session)
            #expect(try await client.setAnswers(session, ["password": .string(secret), "confirm": .string(secret)]) == [:])
            #expect(try await client.continueStep(session) == [:])
            // The held value still counts while the daemon runs.
            #expect(try await client.review(session).group("account")?.finished == true)
            let display = try #require(try await client.review(session).group("account")?.display("password"))
            #expect(!display.contains(secret))
            for (name, bytes) in try fixture.stateFiles() {
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "the secure value is in \(name)")
            }
            // And the non-secure answers are on disk (the check could see it).
            let files = try fixture.stateFiles()
            #expect(files.values.contains { $0.range(of: Data("ada@example.org".utf8)) != nil })
            try await client.submit(session)
            #expect(try await client.property(.state, of: session) == "submitted")
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
