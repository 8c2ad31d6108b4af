// flowstore-bench: measures the session store (upsert cost per durability,
// counting, opening, loading) on a real file. Never installed; run it with
//   swift build -c release --product flowstore-bench
//   .build/release/flowstore-bench [--rows 10000,100000] [--payload 1024] [--ops 2000] [--dir DIR]
import Dispatch
import FlowStore
import FlowdSystem
import Synchronization

struct Options {
    var rows = [10_000, 100_000]
    var payload = 1024
    var ops = 2000
    var directory = "/var/tmp"
    var only: String?
    var journalLimit = 4 << 20
    var autoCheckpoint = 1000
}

func parse() -> Options {
    var options = Options()
    var arguments = CommandLine.arguments.dropFirst()
    while let flag = arguments.popFirst() {
        guard let value = arguments.popFirst() else { usage("\(flag) needs a value") }
        switch flag {
        case "--rows": options.rows = value.split(separator: ",").compactMap { Int($0) }
        case "--payload": options.payload = Int(value) ?? options.payload
        case "--ops": options.ops = Int(value) ?? options.ops
        case "--dir": options.directory = value
        case "--only": options.only = value
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
                journalSizeLimit: options.journalLimit)
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

do {
    try run(parse())
} catch {
    printError(error.message)
    CurrentProcess.exit(SysExits.failure.rawValue)
}
