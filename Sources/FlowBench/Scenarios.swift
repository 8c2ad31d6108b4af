import DBus
import FlowdSystem

/// The kinds of call measured.
enum CallKind: String, CaseIterable {
    case ping = "Ping"
    case setAnswers = "SetAnswers"
    case continueStep = "Continue"
    case getStep = "GetStep"
    case back = "Back"
    /// `Properties.Get(Manager, "Version")`: answered by flowd's own dispatch
    /// (member table, properties, reply) with no session work, so it splits
    /// a call's ratio into the cost of reaching flowd's code and the work.
    case propertyGet = "Get(Version)"
    /// StartSession → (SetAnswers → Continue) × 3, the last Continue being the submit.
    case walk = "Walk"
}

/// The calls one round makes on a stored session of the onboarding flow,
/// which sits on its first step ("plan"). After the round it is there again,
/// so every round does the same work:
///
///     SetAnswers {plan: …}  → {}        (one field; stored before the reply)
///     Continue              → {}        (moves to "reminders"; stored)
///     GetStep               → a{sv}     (the "reminders" step)
///     Back                              (to "plan"; stored)
///     Properties.Get(Manager, Version)  (flowd's dispatch, no session work)
///
/// The Ping that measures the floor goes in at a random place among them,
/// so it sees the same mix of before and after as the other calls.
enum Scenarios {
    static let plans = ["free", "personal", "team"]

    /// One measured round on `id`. `record` gets every call's duration.
    static func round(
        _ client: FlowClient, id: String, round: Int, pingSlot: Int, record: (CallKind, UInt64) -> Void
    ) throws(BenchError) {
        var slot = 0
        func maybePing() throws(BenchError) {
            if slot == pingSlot {
                let t0 = MonotonicClock.now().nanoseconds
                try client.ping()
                record(.ping, MonotonicClock.now().nanoseconds - t0)
            }
            slot += 1
        }
        try maybePing()
        var t0 = MonotonicClock.now().nanoseconds
        let errors = try client.setAnswers(id, ["plan": .string(plans[round % plans.count])])
        record(.setAnswers, MonotonicClock.now().nanoseconds - t0)
        guard errors == 0 else { throw .call("SetAnswers on \(id) replied with \(errors) errors") }
        try maybePing()
        t0 = MonotonicClock.now().nanoseconds
        let stayed = try client.continueStep(id)
        record(.continueStep, MonotonicClock.now().nanoseconds - t0)
        guard stayed == 0 else { throw .call("Continue on \(id) did not move (\(stayed) errors)") }
        try maybePing()
        t0 = MonotonicClock.now().nanoseconds
        let step = try client.getStep(id)
        record(.getStep, MonotonicClock.now().nanoseconds - t0)
        guard step == "reminders" else { throw .call("GetStep on \(id) says \"\(step)\", not \"reminders\"") }
        try maybePing()
        t0 = MonotonicClock.now().nanoseconds
        try client.back(id)
        record(.back, MonotonicClock.now().nanoseconds - t0)
        try maybePing()
        t0 = MonotonicClock.now().nanoseconds
        let version = try client.version()
        record(.propertyGet, MonotonicClock.now().nanoseconds - t0)
        guard !version.isEmpty else { throw .call("Properties.Get(Version) replied with an empty version") }
        try maybePing()
    }

    /// Calls a walk makes (StartSession, three SetAnswers, three Continue).
    static let callsPerWalk = 7

    /// A whole onboarding walk, timed from StartSession to the reply of the
    /// last Continue (which runs the submit action, `flowd.spool`, and
    /// replies when the submission is written). The session is closed
    /// afterwards, untimed, so the number of live sessions stays put.
    static func walk(_ client: FlowClient, round: Int) throws(BenchError) -> UInt64 {
        let t0 = MonotonicClock.now().nanoseconds
        let id = try client.startSession("onboarding")
        var errors = try client.setAnswers(id, ["plan": .string(plans[round % plans.count])])
        errors += try client.continueStep(id)
        errors += try client.setAnswers(id, ["reminderDays": .strings(["mon", "thu"])])
        errors += try client.continueStep(id)
        errors += try client.setAnswers(id, ["acceptTerms": .bool(true)])
        errors += try client.continueStep(id)
        let elapsed = MonotonicClock.now().nanoseconds - t0
        guard errors == 0 else { throw .call("the onboarding walk of \(id) met \(errors) errors") }
        let step = try client.getStep(id)
        guard step == "complete" else { throw .call("the onboarding walk of \(id) ended on \"\(step)\", not complete") }
        try client.close(id)
        return elapsed
    }

    /// Latency on one connection: `rounds` rounds on sessions drawn at random
    /// from `ids`, a walk every `walkEvery` rounds.
    static func latency(
        _ client: FlowClient, ids: [String], rounds: Int, walkEvery: Int, generator: inout SeededGenerator
    ) throws(BenchError) -> [CallKind: Samples] {
        var samples: [CallKind: Samples] = [:]
        for r in 0..<rounds {
            let id = ids[Int(generator.next() % UInt64(ids.count))]
            let slot = Int(generator.next() % 6)
            try round(client, id: id, round: r, pingSlot: slot) { kind, ns in samples[kind, default: Samples()].add(ns) }
            if r % walkEvery == walkEvery - 1 {
                // The walk makes seven calls: a Ping before it keeps the floor's share.
                let t0 = MonotonicClock.now().nanoseconds
                try client.ping()
                samples[.ping, default: Samples()].add(MonotonicClock.now().nanoseconds - t0)
                samples[.walk, default: Samples()].add(try walk(client, round: r))
            }
        }
        return samples
    }

    /// What the throughput phase measured: calls per second with all
    /// connections calling at once.
    struct Throughput {
        var clients = 0
        var callsPerSecond: [String: Double] = [:]
        var order: [String] = []
    }

    /// Throughput with `clients` connections calling at once, each on its
    /// own share of `ids`. Phases of one kind of call alternate (Ping,
    /// SetAnswers, GetStep, the mixed round) and repeat `repeats` times, so
    /// drift on a noisy machine hits every kind alike.
    static func throughput(
        address: String, ids: [String], clients count: Int, callsPerClient: Int, repeats: Int
    ) throws(BenchError) -> Throughput {
        var clients: [FlowClient] = []
        for _ in 0..<count { clients.append(try FlowClient(address: address)) }
        let shared = SharedClients(clients)
        let shareSize = max(1, ids.count / count)
        let phases = ["Ping", "SetAnswers", "GetStep", "Mixed round"]
        var calls: [String: Int] = [:]
        var time: [String: UInt64] = [:]
        let failures = LockedValue<[String]>([])
        for _ in 0..<repeats {
            for phase in phases {
                let elapsed = try runConcurrently(count) { i in
                    let client = shared.clients[i]
                    let mine = ids[(i * shareSize) % ids.count..<min(ids.count, (i * shareSize) % ids.count + shareSize)]
                    var generator = SeededGenerator(seed: UInt64(i + 1) &* 0x9E37_79B9)
                    do throws(BenchError) {
                        var done = 0
                        while done < callsPerClient {
                            let id = mine[mine.startIndex + Int(generator.next() % UInt64(mine.count))]
                            switch phase {
                            case "Ping":
                                try client.ping()
                                done += 1
                            case "SetAnswers":
                                try client.setAnswers(id, ["plan": .string(plans[done % plans.count])])
                                done += 1
                            case "GetStep":
                                try client.getStep(id)
                                done += 1
                            default:
                                try round(client, id: id, round: done, pingSlot: -1) { _, _ in }
                                done += 4
                            }
                        }
                    } catch {
                        failures.withLock { $0.append(error.description) }
                    }
                }
                if let first = failures.withLock({ $0.first }) { throw .call("with \(count) connections: \(first)") }
                let perClient = phase == "Mixed round" ? (callsPerClient + 3) / 4 * 4 : callsPerClient
                calls[phase, default: 0] += perClient * count
                time[phase, default: 0] += elapsed
            }
        }
        var result = Throughput()
        result.clients = count
        for phase in phases {
            result.order.append(phase)
            result.callsPerSecond[phase] = Double(calls[phase] ?? 0) / (Double(time[phase] ?? 1) / 1e9)
        }
        return result
    }
}

/// The throughput phase's connections, each used by one thread at a time.
final class SharedClients: @unchecked Sendable {
    let clients: [FlowClient]
    init(_ clients: [FlowClient]) { self.clients = clients }
}

/// Runs `body(i)` for `i` in `0..<count`, each on a thread of its own, and
/// returns the wall time from the first start to the last end in
/// nanoseconds. Real threads, not a pool: the point is `count` connections
/// calling at the same time on a 2-core machine.
func runConcurrently(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) throws(BenchError) -> UInt64 {
    var threads: [SystemThread] = []
    defer { threads.forEach { $0.join() } }
    let started = MonotonicClock.now()
    for i in 0..<count {
        do {
            threads.append(try SystemThread.spawn(name: "bench-client-\(i)") { body(i) })
        } catch {
            throw .setup("\(error)")
        }
    }
    threads.forEach { $0.join() }
    threads = []
    return MonotonicClock.now().nanoseconds - started.nanoseconds
}
