import FlowClient
import FlowStore
import FlowdSystem

/// What one size measured: latency on one connection, first-touch loading,
/// memory and start-up.
struct SizeResult {
    var sessions: Int
    /// The sessions in use: loaded, then called.
    var live: Int
    var latency: [CallKind: Samples]
    /// `GetStep` on every stored session once, in store order (each loaded from the store).
    var firstTouch: Samples
    var residentBefore: Int
    var residentAfter: Int
    /// Time from spawn to `READY=1` with `sessions` stored, in ns.
    var ready: UInt64
    /// CPU time used during the measured rounds, and the calls they made.
    var cpu: CPUTimes
    var calls: Int
    /// When the store was filled (µs since the epoch): the sessions' last write.
    var filledAt: Int64

    var bytesPerSession: Double { Double(residentAfter - residentBefore) / Double(max(1, live)) }

    func ratio(_ kind: CallKind) -> Double {
        let floor = latency[.ping]?.median ?? 0
        return floor > 0 ? (latency[kind]?.median ?? 0) / floor : 0
    }
}

/// One benchmark run: set up, measure, report.
struct Bench {
    let options: BenchOptions

    func run() throws(BenchError) {
        if options.pluginModes {
            try PluginModes.run(options: options, buildDirectory: Harness.buildDirectory(options))
        } else if options.callgrind {
            try runInstructions()
        } else if options.scaling.isEmpty {
            try runMain()
        } else {
            try runScaling()
        }
    }

    private func progress(_ text: String) {
        FileDescriptor.printError("flowd-bench: \(text)")
    }

    /// Fills, starts, loads and measures one size. `keepRunning` is handed the
    /// harness (flowd still up) and the ids before tear-down.
    private func measureSize(
        _ sessions: Int, keepRunning: ((Harness, [String], inout SeededGenerator) throws(BenchError) -> Void)? = nil
    ) throws(BenchError) -> SizeResult {
        let harness = try Harness(options: options)
        defer { harness.tearDown() }
        var generator = SeededGenerator(seed: options.seed)
        let flow = try harness.onboardingFlow()
        progress("filling the store with \(Format.grouped(sessions)) sessions (\(harness.root))")
        let filler = StoreFiller(flow: flow, owner: CurrentProcess.userID, databasePath: harness.databasePath)
        let idle = options.callgrind ? Instructions.idleSessions(calls: options.rounds, available: Self.used(options, of: sessions)) : 0..<0
        let stored = try filler.fill(to: sessions, idle: idle, generator: &generator)
        // The sessions in use; the others are only stored (ids are random, so any prefix is a random pick).
        let ids = options.live > 0 ? Array(stored.prefix(options.live)) : stored
        try harness.startBus()
        progress("starting flowd")
        let ready = try harness.startFlowd()
        let connection = try BenchConnection(address: harness.busAddress)
        defer { connection.close() }

        // Warm up on a few sessions: code paths, statement cache, allocator.
        let warmIDs = Array(ids.prefix(Self.warmSessions))
        let warmRounds = min(200, options.rounds)
        let warmSeed = options.seed ^ 0xFFFF
        _ = try connection.run { client async throws(BenchError) in
            try await Scenarios.latency(
                client, ids: warmIDs, rounds: warmRounds, walkEvery: 10, generator: SeededGenerator(seed: warmSeed))
        }

        progress("loading \(Format.grouped(ids.count)) live sessions (GetStep on each)")
        guard let before = harness.flowdResidentBytes() else { throw .process("cannot read flowd's memory") }
        let firstTouch = try connection.run { client async throws(BenchError) in
            var samples = Samples()
            for id in ids {
                let t0 = MonotonicClock.now().nanoseconds
                do throws(FlowClientError) { _ = try await client.step(id) } catch { throw BenchError(error, "GetStep on \(id)") }
                samples.add(MonotonicClock.now().nanoseconds - t0)
            }
            return samples
        }
        guard let after = harness.flowdResidentBytes() else { throw .process("cannot read flowd's memory") }
        if options.callgrind {
            // Counted, not timed: the phases run in `keepRunning`.
            try keepRunning?(harness, ids, &generator)
            return SizeResult(
                sessions: sessions, live: ids.count, latency: [:], firstTouch: firstTouch, residentBefore: before,
                residentAfter: after, ready: ready, cpu: CPUTimes(flowd: 0, flowdSystem: 0, bus: 0, client: 0), calls: 0,
                filledAt: filler.filledAt)
        }
        // Under callgrind, count the measured rounds only.
        try harness.zeroCallgrindCounters { () throws(BenchError) in try connection.ping() }

        progress("measuring \(Format.grouped(options.rounds)) rounds on one connection")
        let cpuBefore = harness.cpuTimes()
        let rounds = options.rounds
        let walkEvery = options.walkEvery
        let measuring = generator
        let (latency, moved) = try connection.run { client async throws(BenchError) in
            try await Scenarios.latency(client, ids: ids, rounds: rounds, walkEvery: walkEvery, generator: measuring)
        }
        generator = moved
        let cpu = harness.cpuTimes() - cpuBefore
        let calls = latency.reduce(0) { sum, entry in
            sum + entry.value.count * (entry.key == .walk ? Scenarios.callsPerWalk + 2 : 1)
        }
        try keepRunning?(harness, ids, &generator)
        return SizeResult(
            sessions: sessions, live: ids.count, latency: latency, firstTouch: firstTouch, residentBefore: before,
            residentAfter: after, ready: ready, cpu: cpu, calls: calls, filledAt: filler.filledAt)
    }

    /// How many sessions (the first ones) the warm-up before measuring calls.
    static let warmSessions = 50

    /// The sessions a run of `sessions` stored ones uses (`--live`).
    static func used(_ options: BenchOptions, of sessions: Int) -> Int {
        options.live > 0 ? min(options.live, sessions) : sessions
    }

    // MARK: - The main run

    private func runMain() throws(BenchError) {
        var throughput: Scenarios.Throughput?
        var readyTimes: [UInt64] = []
        var readyCount = 0
        let clients = min(options.clients, options.live > 0 ? min(options.live, options.sessions) : options.sessions)
        let result = try measureSize(options.sessions) { harness, ids, generator throws(BenchError) in
            if clients > 0 {
                progress("measuring throughput with \(clients) connections")
                throughput = try Scenarios.throughput(
                    address: harness.busAddress, ids: ids, clients: clients,
                    callsPerClient: options.callsPerClient, repeats: 3)
            }
            guard options.readySessions > 0 else { return }
            harness.stopFlowd()
            readyCount = max(options.readySessions, options.sessions)
            if readyCount > options.sessions {
                progress("filling the store up to \(Format.grouped(readyCount)) sessions")
                let filler = StoreFiller(flow: try harness.onboardingFlow(), owner: CurrentProcess.userID, databasePath: harness.databasePath)
                _ = try filler.fill(to: readyCount, generator: &generator)
            }
            progress("starting flowd \(options.readyStarts) times with \(Format.grouped(readyCount)) stored sessions")
            for _ in 0..<options.readyStarts {
                readyTimes.append(try harness.startFlowd())
                // It answers, and it really holds them all.
                let connection = try BenchConnection(address: harness.busAddress)
                try connection.ping()
                connection.close()
                harness.stopFlowd()
            }
        }
        Report.main(options: options, result: result, throughput: throughput, readyCount: readyCount, readyTimes: readyTimes)
    }

    // MARK: - Counted instructions

    private func runInstructions() throws(BenchError) {
        var phases: [Instructions.Phase] = []
        var endedAt: Int64 = 0
        let result = try measureSize(options.sessions) { harness, ids, generator throws(BenchError) in
            progress("counting instructions: phases of \(Format.grouped(options.rounds)) calls under callgrind")
            let connection = try BenchConnection(address: harness.busAddress)
            defer { connection.close() }
            phases = try Instructions.measure(
                harness: harness, connection: connection, ids: ids,
                idle: Instructions.idleSessions(calls: options.rounds, available: ids.count), calls: options.rounds,
                rounds: options.rounds, walkEvery: options.walkEvery, generator: &generator)
            endedAt = WallClock.microsecondsSinceEpoch()
        }
        let over = Instructions.report(sessions: result.sessions, live: result.live, phases: phases)
        if endedAt - result.filledAt > SessionStore.idleEntryStays {
            // Then some changes of sessions written at the fill moved their
            // idle-period entries: the figures are not those of other runs.
            print("note: the phases ended \((endedAt - result.filledAt) / 1_000_000) s after the fill, over the "
                + "\(SessionStore.idleEntryStays / 1_000_000) s within which a change leaves its idle-period entry in place: "
                + "SetAnswers and the mixed rounds include moved entries")
        }
        guard over.isEmpty else { throw .call("\(over.count) of the calls cost more instructions than their budget") }
    }

    // MARK: - Scaling

    private func runScaling() throws(BenchError) {
        var results: [SizeResult] = []
        for size in options.scaling {
            results.append(try measureSize(size))
        }
        Report.scaling(options: options, results: results)
    }
}
