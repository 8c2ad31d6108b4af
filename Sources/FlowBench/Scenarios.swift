import DBus
import FlowClient
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
        _ client: isolated FlowClient, id: String, round: Int, pingSlot: Int, record: (CallKind, UInt64) -> Void
    ) async throws(BenchError) {
        var slot = 0
        // Not a local async function: one would not be isolated to the
        // client, and every call would hop off its loop and back.
        try await pingIfDue(client, slot: &slot, pingSlot: pingSlot, record: record)
        var t0 = MonotonicClock.now().nanoseconds
        let errors: [String: String]
        do { errors = try await client.setAnswers(id, ["plan": .string(plans[round % plans.count])]) } catch {
            throw BenchError(error, "SetAnswers on \(id)")
        }
        record(.setAnswers, MonotonicClock.now().nanoseconds - t0)
        guard errors.isEmpty else { throw .call("SetAnswers on \(id) replied with \(errors.count) errors") }
        try await pingIfDue(client, slot: &slot, pingSlot: pingSlot, record: record)
        t0 = MonotonicClock.now().nanoseconds
        let stayed: [String: String]
        do { stayed = try await client.continueStep(id) } catch { throw BenchError(error, "Continue on \(id)") }
        record(.continueStep, MonotonicClock.now().nanoseconds - t0)
        guard stayed.isEmpty else { throw .call("Continue on \(id) did not move (\(stayed.count) errors)") }
        try await pingIfDue(client, slot: &slot, pingSlot: pingSlot, record: record)
        t0 = MonotonicClock.now().nanoseconds
        let step: String
        do { step = try await client.step(id).id } catch { throw BenchError(error, "GetStep on \(id)") }
        record(.getStep, MonotonicClock.now().nanoseconds - t0)
        guard step == "reminders" else { throw .call("GetStep on \(id) says \"\(step)\", not \"reminders\"") }
        try await pingIfDue(client, slot: &slot, pingSlot: pingSlot, record: record)
        t0 = MonotonicClock.now().nanoseconds
        do { try await client.back(id) } catch { throw BenchError(error, "Back on \(id)") }
        record(.back, MonotonicClock.now().nanoseconds - t0)
        try await pingIfDue(client, slot: &slot, pingSlot: pingSlot, record: record)
        t0 = MonotonicClock.now().nanoseconds
        let version: String
        do { version = try await client.version() } catch { throw BenchError(error, "Properties.Get(Version)") }
        record(.propertyGet, MonotonicClock.now().nanoseconds - t0)
        guard !version.isEmpty else { throw .call("Properties.Get(Version) replied with an empty version") }
        try await pingIfDue(client, slot: &slot, pingSlot: pingSlot, record: record)
    }

    /// The Ping of a round when `slot` is its place; counts the slot.
    private static func pingIfDue(
        _ client: isolated FlowClient, slot: inout Int, pingSlot: Int, record: (CallKind, UInt64) -> Void
    ) async throws(BenchError) {
        defer { slot += 1 }
        guard slot == pingSlot else { return }
        let t0 = MonotonicClock.now().nanoseconds
        do { try await client.ping() } catch { throw BenchError(error, "Ping") }
        record(.ping, MonotonicClock.now().nanoseconds - t0)
    }

    /// Calls a walk makes (StartSession, three SetAnswers, three Continue).
    static let callsPerWalk = 7

    /// A whole onboarding walk, timed from StartSession to the reply of the
    /// last Continue (which runs the submit action, `flowd.spool`, and
    /// replies when the submission is written). The session is closed
    /// afterwards, untimed, so the number of live sessions stays put.
    static func walk(_ client: isolated FlowClient, round: Int) async throws(BenchError) -> UInt64 {
        let t0 = MonotonicClock.now().nanoseconds
        let id: String
        var errors = 0
        do {
            id = try await client.startSession(flow: "onboarding", locale: nil, prefill: [:])
            errors += try await client.setAnswers(id, ["plan": .string(plans[round % plans.count])]).count
            errors += try await client.continueStep(id).count
            errors += try await client.setAnswers(id, ["reminderDays": .strings(["mon", "thu"])]).count
            errors += try await client.continueStep(id).count
            errors += try await client.setAnswers(id, ["acceptTerms": .bool(true)]).count
            errors += try await client.continueStep(id).count
        } catch {
            throw BenchError(error, "the onboarding walk")
        }
        let elapsed = MonotonicClock.now().nanoseconds - t0
        guard errors == 0 else { throw .call("the onboarding walk of \(id) met \(errors) errors") }
        let step: String
        do {
            step = try await client.step(id).id
            try await client.close(id)
        } catch {
            throw BenchError(error, "the end of the onboarding walk of \(id)")
        }
        guard step == "complete" else { throw .call("the onboarding walk of \(id) ended on \"\(step)\", not complete") }
        return elapsed
    }

    /// Latency on one connection: `rounds` rounds on sessions drawn at random
    /// from `ids`, a walk every `walkEvery` rounds. Returns the samples and
    /// the generator, moved on.
    static func latency(
        _ client: isolated FlowClient, ids: [String], rounds: Int, walkEvery: Int, generator: SeededGenerator
    ) async throws(BenchError) -> (samples: [CallKind: Samples], generator: SeededGenerator) {
        var generator = generator
        var samples: [CallKind: Samples] = [:]
        for r in 0..<rounds {
            let id = ids[Int(generator.next() % UInt64(ids.count))]
            let slot = Int(generator.next() % 6)
            try await round(client, id: id, round: r, pingSlot: slot) { kind, ns in samples[kind, default: Samples()].add(ns) }
            if r % walkEvery == walkEvery - 1 {
                // The walk makes seven calls: a Ping before it keeps the floor's share.
                let t0 = MonotonicClock.now().nanoseconds
                do { try await client.ping() } catch { throw BenchError(error, "Ping") }
                samples[.ping, default: Samples()].add(MonotonicClock.now().nanoseconds - t0)
                samples[.walk, default: Samples()].add(try await walk(client, round: r))
            }
        }
        return (samples, generator)
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
        var connections: [BenchConnection] = []
        defer { for connection in connections { connection.close() } }
        for _ in 0..<count { connections.append(try BenchConnection(address: address)) }
        let shared = connections
        let shareSize = max(1, ids.count / count)
        let phases = ["Ping", "SetAnswers", "GetStep", "Mixed round"]
        var calls: [String: Int] = [:]
        var time: [String: UInt64] = [:]
        let failures = LockedValue<[String]>([])
        for _ in 0..<repeats {
            for phase in phases {
                let elapsed = try runConcurrently(count) { i in
                    let mine = Array(ids[(i * shareSize) % ids.count..<min(ids.count, (i * shareSize) % ids.count + shareSize)])
                    do throws(BenchError) {
                        try shared[i].run { client async throws(BenchError) in
                            try await phaseCalls(client, phase: phase, ids: mine, calls: callsPerClient, seed: UInt64(i + 1))
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

    /// One connection's calls of one throughput phase, on its own sessions.
    private static func phaseCalls(
        _ client: isolated FlowClient, phase: String, ids: [String], calls: Int, seed: UInt64
    ) async throws(BenchError) {
        var generator = SeededGenerator(seed: seed &* 0x9E37_79B9)
        var done = 0
        while done < calls {
            let id = ids[Int(generator.next() % UInt64(ids.count))]
            switch phase {
            case "Ping":
                do { try await client.ping() } catch { throw BenchError(error, "Ping") }
                done += 1
            case "SetAnswers":
                do { _ = try await client.setAnswers(id, ["plan": .string(plans[done % plans.count])]) } catch {
                    throw BenchError(error, "SetAnswers on \(id)")
                }
                done += 1
            case "GetStep":
                do { _ = try await client.step(id) } catch { throw BenchError(error, "GetStep on \(id)") }
                done += 1
            default:
                try await round(client, id: id, round: done, pingSlot: -1) { _, _ in }
                done += 4
            }
        }
    }
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
