// flowstore-bench: measures the session store (upsert cost per durability,
// counting, opening, loading) on a real file. Never installed; run it with
//   swift build -c release --product flowstore-bench
//   .build/release/flowstore-bench [--rows 10000,100000] [--payload 1024] [--ops 2000] [--dir DIR]
// or, to count the instructions of an upsert that rewrites a stored session
// (the daemon's SetAnswers: `countedUpserts` is the function to read):
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/store.cg .build/release/flowstore-bench --count 300 [--gap µs]
//   callgrind_annotate --inclusive=yes /tmp/store.cg | swift demangle --simplified | grep countedUpserts
import Dispatch
import FlowStore
import FlowdSystem
import Synchronization

struct Options {
    var rows = [10_000, 100_000]
    var payload = 1024
    var payloadGiven = false
    var ops = 2000
    var directory = "/var/tmp"
    var only: String?
    var journalLimit = 4 << 20
    var autoCheckpoint = 1000
    /// Upserts to count under callgrind (`--count N`) instead of timing.
    var count: Int?
    /// The page size of the databases the bench creates.
    var pageSize = SessionStore.defaultPageSize
    /// `--count`: microseconds from a session's last write (the fill) to its
    /// counted change. The default stays within the fill's idle period;
    /// 70000000 (70 s) is the next period, which moved the index entry
    /// before schema 5; 1100000000 (over 16 periods) moves it now.
    var gap: Int64 = 1000
}

func parse() -> Options {
    var options = Options()
    var arguments = CommandLine.arguments.dropFirst()
    while let flag = arguments.popFirst() {
        guard let value = arguments.popFirst() else { usage("\(flag) needs a value") }
        switch flag {
        case "--rows": options.rows = value.split(separator: ",").compactMap { Int($0) }
        case "--payload":
            options.payload = Int(value) ?? options.payload
            options.payloadGiven = true
        case "--ops": options.ops = Int(value) ?? options.ops
        case "--dir": options.directory = value
        case "--only": options.only = value
        case "--count": options.count = Int(value)
        case "--page-size": options.pageSize = Int(value) ?? options.pageSize
        case "--gap": options.gap = Int64(value) ?? options.gap
        case "--auto-checkpoint": options.autoCheckpoint = Int(value) ?? options.autoCheckpoint
        case "--journal-limit": options.journalLimit = Int(value) ?? options.journalLimit
        default: usage("unknown option \(flag)")
        }
    }
    return options
}

func printError(_ message: String) {
    FileDescriptor.printError("flowstore-bench: \(message)")
}

func usage(_ message: String) -> Never {
    printError(message)
    CurrentProcess.exit(SysExits.usage.rawValue)
}

/// `x` with one decimal, right-aligned in `width` characters.
func fixed(_ x: Double, _ width: Int = 8) -> String {
    let tenths = Int((x * 10).rounded())
    let text = "\(tenths / 10).\(tenths % 10)"
    return String(repeating: " ", count: max(0, width - text.count)) + text
}

func micros(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
}

struct Stats: CustomStringConvertible {
    var samples: [Double]
    var description: String {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return "no samples" }
        let mean = sorted.reduce(0, +) / Double(sorted.count)
        func pct(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
        return "mean \(fixed(mean)) µs  p50 \(fixed(pct(0.5)))  p99 \(fixed(pct(0.99)))  max \(fixed(sorted.last ?? 0, 9))"
    }
}

func session(_ i: Int, payload: [UInt8], now: Int64) -> StoredSession {
    let id = String(repeating: "0", count: 16) + String(String(i, radix: 16).reversed()).padding(16)
    return StoredSession(
        id: id, owner: UInt32(1000 + i % 50), flowID: "consultation", state: "editing",
        createdAt: now, updatedAt: now + Int64(i), payload: payload)
}

extension String {
    func padding(_ width: Int) -> String {
        count >= width ? String(prefix(width)) : self + String(repeating: "0", count: width - count)
    }
}

func run(_ options: Options) throws(StoreError) {
    let clock = ContinuousClock()
    var rng = SystemRandomNumberGenerator()
    let payload = (0..<options.payload).map { _ in UInt8.random(in: 0...255, using: &rng) }
    print("SQLite \(SQLiteDatabase.libraryVersion), payload \(options.payload) B, \(options.ops) ops per figure")
    let modes: [(String, SessionStore.Durability, Bool)] = [
        ("processCrash, automatic checkpoints", .processCrash, false),
        ("processCrash, background checkpoints", .processCrash, true),
        ("powerLoss, automatic checkpoints", .powerLoss, false),
    ]
    for (name, durability, background) in modes where options.only.map({ name.contains($0) }) ?? true {
        for rows in options.rows {
            let directory = "\(options.directory)/flowstore-bench-\(CurrentProcess.id)"
            let path = "\(directory)/\(SessionStore.defaultFileName)"
            defer { FileSystem.removeTree(directory) }
            let configuration = SessionStore.Configuration(
                durability: durability, autoCheckpointPages: background ? 20_000 : options.autoCheckpoint,
                journalSizeLimit: options.journalLimit, pageSize: options.pageSize)
            var store = try SessionStore(path: path, configuration: configuration)
            let now: Int64 = 1_700_000_000_000_000
            var i = 0
            while i < rows {
                let end = min(rows, i + 5000)
                try store.transaction { tx throws(StoreError) in
                    for j in i..<end { try tx.upsert(session(j, payload: payload, now: now)) }
                }
                i = end
            }
            _ = try store.checkpoint()
            let ops = durability == .powerLoss ? min(options.ops, 500) : options.ops
            let stop = Atomic<Bool>(false)
            let checkpoints = LockedValue<[Double]>([])
            let finished = DispatchSemaphore(value: 0)
            if background {
                let checkpointing = store
                DispatchQueue.global().async {
                    while !stop.load(ordering: .relaxed) {
                        let t = ContinuousClock().measure { _ = try? checkpointing.checkpoint() }
                        checkpoints.withLock { $0.append(micros(t)) }
                        MonotonicClock.sleep(for: .milliseconds(20))
                    }
                    finished.signal()
                }
            }
            var update: [Double] = []
            for k in 0..<ops {
                var s = session(Int.random(in: 0..<rows, using: &rng), payload: payload, now: now)
                s.updatedAt = now + Int64(rows + k)
                s.state = k % 10 == 0 ? "review" : "editing"
                let t = clock.measure { _ = try? store.upsert(s) }
                update.append(micros(t))
            }
            var insert: [Double] = []
            for k in 0..<ops {
                let s = session(rows + k, payload: payload, now: now)
                insert.append(micros(clock.measure { _ = try? store.upsert(s) }))
            }
            stop.store(true, ordering: .relaxed)
            if background { finished.wait() }
            var load: [Double] = []
            for _ in 0..<ops {
                let id = session(Int.random(in: 0..<rows, using: &rng), payload: payload, now: now).id
                load.append(micros(clock.measure { _ = try? store.load(id: id) }))
            }
            var counter: [Double] = []
            for _ in 0..<50 { counter.append(micros(clock.measure { _ = try? store.count() })) }
            try store.close()

            // SELECT count(*) straight on the table, for comparison with the counter.
            var scan: [Double] = []
            do {
                let db = try SQLiteDatabase(path: path, flags: [.readOnly])
                for _ in 0..<20 {
                    scan.append(micros(clock.measure { _ = try? db.scalarInteger("SELECT count(*) FROM sessions") }))
                }
            } catch {
                print("raw count failed: \(error)")
            }
            var open: [Double] = []
            for _ in 0..<20 {
                open.append(micros(clock.measure {
                    if let reopened = try? SessionStore(path: path, configuration: configuration) {
                        store = reopened
                        _ = try? store.count()
                        try? store.close()
                    }
                }))
            }
            print("\(name), rows \(rows):")
            print("  upsert (update)  \(Stats(samples: update))  over 5 ms: \(update.filter { $0 > 5000 }.count)")
            print("  upsert (insert)  \(Stats(samples: insert))  over 5 ms: \(insert.filter { $0 > 5000 }.count)")
            print("  load(id:)        \(Stats(samples: load))")
            print("  count() counter  \(Stats(samples: counter))")
            print("  count(*) scan    \(Stats(samples: scan))")
            print("  open + count     \(Stats(samples: open))")
            if background {
                print("  checkpoint (bg)  \(Stats(samples: checkpoints.withLock { $0 }))")
            }
        }
    }
}

/// A record as flowd stores it after a `SetAnswers` (about 510 bytes of
/// JSON), with the revision and time that every change moves.
func recordPayload(_ id: String, revision: Int, updatedAt: Int64, size: Int) -> [UInt8] {
    let padding = String(repeating: "x", count: max(0, size - 520))
    let text = """
        {"formatVersion":1,"id":"\(id)","flowID":"onboarding","flowFingerprint":"b207fc97fe198419",\
        "owner":1000,"locale":"en","createdAt":1796182855856002,"updatedAt":\(updatedAt),"revision":\(revision),\
        "state":"editing","currentStep":"plan","returningToReview":false,"visited":["plan","reminders"],\
        "completed":["plan"],"shownErrors":["plan"],"answers":{"plan":"personal-\(revision % 10)"},\
        "secureFieldsSet":[],"dynamicOptions":{},"stepMessages":{},"announcement":"Step 1 of 3, Choose a plan\(padding)",\
        "announcementSequence":9,"announcedWarnings":{}}
        """
    return Array(text.utf8)
}

/// Fills a store with 1,000 sessions, then rewrites `count` of them one after
/// the other, as flowd's `SetAnswers` does; run it under callgrind.
func count(_ count: Int, _ options: Options) throws(StoreError) {
    let directory = "\(options.directory)/flowstore-bench-\(CurrentProcess.id)"
    defer { FileSystem.removeTree(directory) }
    let store = try SessionStore(
        path: "\(directory)/\(SessionStore.defaultFileName)",
        configuration: SessionStore.Configuration(pageSize: options.pageSize))
    let now: Int64 = 1_796_182_855_856_002
    let rows = 1000
    // The fill at `now`; the k-th counted change `gap` and k µs later.
    func stored(_ i: Int, revision: Int) -> StoredSession {
        var s = session(i, payload: [], now: now)
        s.updatedAt = revision == 1 ? now : now + options.gap + Int64(revision)
        s.payload = recordPayload(s.id, revision: revision, updatedAt: s.updatedAt, size: options.payloadGiven ? options.payload : 0)
        return s
    }
    try store.transaction { tx throws(StoreError) in
        for i in 0..<rows { try tx.upsert(stored(i, revision: 1)) }
    }
    let sessions = (0..<count).map { k in stored((k * 7919) % rows, revision: 2 + k) }
    try countedUpserts(store, sessions)
    try store.close()
    print("counted \(count) upserts; read countedUpserts in the callgrind profile")
}

/// The measured part of `--count`: kept out of line so its inclusive cost is the figure.
@inline(never)
func countedUpserts(_ store: SessionStore, _ sessions: [StoredSession]) throws(StoreError) {
    for s in sessions { try store.upsert(s) }
}

do {
    let options = parse()
    if let n = options.count {
        try count(n, options)
    } else {
        try run(options)
    }
} catch {
    printError(error.message)
    CurrentProcess.exit(SysExits.failure.rawValue)
}
