import FlowClient
import FlowdSystem

/// Counted instructions per call (`--callgrind`): flowd runs under
/// `valgrind --tool=callgrind`, and after loading the live sessions the
/// bench runs phases of one kind of call each. Before a phase flowd's
/// counters are zeroed and after it they are dumped (`callgrind_control`),
/// so each dump holds that phase's calls and nothing else; its total divided
/// by the calls is what flowd spent per call: reading the message, routing,
/// the handler, the store, the reply, the signals and log lines after it,
/// and the loop's own turn. Counting whole phases needs no function names,
/// so it survives any refactoring of the code it measures, and counted
/// instructions do not move with the machine's load.
enum Instructions {
    /// One measured phase.
    struct Phase {
        var name: String
        /// The target for this measure, in instructions (nil: none).
        var target: Int?
        /// More than this per call is a regression: a FAIL line and a
        /// failed run (nil: not checked). Set about a quarter above what
        /// docs/performance.md records, so that a small change passes and a
        /// lost fast path does not.
        var budget: Int?
        var calls: Int
        var instructions: Int

        var perCall: Int { calls > 0 ? instructions / calls : 0 }
    }

    /// The valgrind command flowd runs under, writing its dumps to `outFile`.N.
    static func wrapper(outFile: String) -> [String] {
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + outFile, "--dump-instr=no", "--dump-line=no"]
    }

    /// The sessions (positions in the fill) that `SetAnswersAfterIdle` calls:
    /// `calls` of them after those that `SetAnswers` calls and the warm-up
    /// touches, if the run has them (none otherwise, and no such phase).
    /// They are filled as last written an hour before the others
    /// (``StoreFiller/idleAge``).
    static func idleSessions(calls: Int, available: Int) -> Range<Int> {
        let first = max(calls, Bench.warmSessions)
        return available >= first + calls ? first..<(first + calls) : 0..<0
    }

    /// The phases, on sessions drawn from `ids` (each on its first step);
    /// `idle` are the positions in `ids` of the sessions filled as idle.
    ///
    /// A change of a session written less than
    /// ``SessionStore/idleEntryStays`` (about 17 minutes) before leaves its
    /// idle-period index entry in place; after a longer pause it moves the
    /// entry, two more index pages in its commit. `SetAnswers` changes
    /// sessions written at the fill (a session answered step after step),
    /// `SetAnswersAfterIdle` sessions last written an hour before (one taken
    /// up again): each is the one case on every call, wherever the run falls
    /// on the clock, as long as the run stays under those 17 minutes
    /// (``Bench`` says when it did not).
    static func measure(
        harness: Harness, connection: BenchConnection, ids: [String], idle: Range<Int>, calls: Int, rounds: Int,
        walkEvery: Int, generator: inout SeededGenerator
    ) throws(BenchError) -> [Phase] {
        var phases: [Phase] = []
        let dumps = DumpReader(harness: harness)
        try dumps.zero(wake: connection)
        // Each phase returns the number of messages flowd received.
        func phase(_ name: String, target: Int?, budget: Int?, _ body: @escaping @Sendable (isolated FlowClient) async throws(BenchError) -> Int)
            throws(BenchError)
        {
            let sent = try connection.run(body)
            // The label passes through callgrind_control's shell: letters only.
            let total = try dumps.dump(label: String(name.filter { $0.isASCII && $0.isLetter }), wake: connection)
            phases.append(Phase(name: name, target: target, budget: budget, calls: sent, instructions: total))
        }
        try phase("Ping", target: nil, budget: Budget.ping) { client async throws(BenchError) in
            for _ in 0..<calls {
                do throws(FlowClientError) { try await client.ping() } catch { throw BenchError(error, "Ping") }
            }
            return calls
        }
        try phase("Get(Version)", target: nil, budget: Budget.propertyGet) { client async throws(BenchError) in
            for _ in 0..<calls {
                do throws(FlowClientError) { _ = try await client.version() } catch { throw BenchError(error, "Properties.Get(Version)") }
            }
            return calls
        }
        let picks = (0..<calls).map { _ in ids[Int(generator.next() % UInt64(ids.count))] }
        try phase("GetStep", target: 60_000, budget: Budget.getStep) { client async throws(BenchError) in
            for id in picks {
                do throws(FlowClientError) { _ = try await client.step(id) } catch { throw BenchError(error, "GetStep on \(id)") }
            }
            return calls
        }
        // Every session in turn, a new value on each pass, so that every call changes something.
        try phase("SetAnswers", target: 80_000, budget: Budget.setAnswers) { client async throws(BenchError) in
            for i in 0..<calls {
                let id = ids[i % ids.count]
                let plan = Scenarios.plans[(i / ids.count + 1) % Scenarios.plans.count]
                let errors: [String: String]
                do throws(FlowClientError) { errors = try await client.setAnswers(id, ["plan": .string(plan)]) } catch {
                    throw BenchError(error, "SetAnswers on \(id)")
                }
                guard errors.isEmpty else { throw .call("SetAnswers on \(id) replied with \(errors.count) errors") }
            }
            return calls
        }
        // Sessions untouched for an hour, each changed once.
        if !idle.isEmpty {
            let idleIDs = Array(ids[idle])
            try phase("SetAnswersAfterIdle", target: nil, budget: Budget.setAnswersAfterIdle) { client async throws(BenchError) in
                for id in idleIDs {
                    let errors: [String: String]
                    do throws(FlowClientError) { errors = try await client.setAnswers(id, ["plan": .string(Scenarios.plans[1])]) } catch {
                        throw BenchError(error, "SetAnswers on \(id)")
                    }
                    guard errors.isEmpty else { throw .call("SetAnswers on \(id) replied with \(errors.count) errors") }
                }
                return idleIDs.count
            }
        }
        let mixed = generator
        try phase("dispatch (mixed rounds)", target: 60_000, budget: Budget.dispatch) { client async throws(BenchError) in
            let (samples, _) = try await Scenarios.latency(
                client, ids: ids, rounds: rounds, walkEvery: walkEvery, generator: mixed)
            return samples.reduce(0) { sum, entry in
                sum + entry.value.count * (entry.key == .walk ? Scenarios.callsPerWalk + 2 : 1)
            }
        }
        return phases
    }

    /// The regression budgets, in instructions per call (see ``Phase/budget``).
    enum Budget {
        static let ping = 12_000
        static let propertyGet = 30_000
        static let getStep = 55_000
        static let setAnswers = 103_000
        static let setAnswersAfterIdle = 145_000
        static let dispatch = 94_000
    }

    /// Prints the table, one `instructions NAME: N` line per phase, and a
    /// FAIL line for each phase over its budget; returns those phases.
    @discardableResult
    static func report(sessions: Int, live: Int, phases: [Phase]) -> [Phase] {
        print("flowd-bench --callgrind: flowd's instructions per call, counted by callgrind; "
            + "\(Format.grouped(sessions)) stored sessions, \(Format.grouped(live)) live")
        print("")
        print(Format.left("phase", 26) + Format.right("calls", 8) + Format.right("instructions", 16)
            + Format.right("per call", 12) + Format.right("target", 10) + "  ")
        for p in phases {
            let verdict = p.target.map { p.perCall <= $0 ? "met" : "not met" } ?? ""
            print(Format.left(p.name, 26) + Format.right(Format.grouped(p.calls), 8)
                + Format.right(Format.grouped(p.instructions), 16) + Format.right(Format.grouped(p.perCall), 12)
                + Format.right(p.target.map { "≤ " + Format.grouped($0) } ?? "", 10) + "  " + verdict)
        }
        print("  (all of flowd per call: reading, routing, the handler, the store, the reply, what is sent after it)")
        print("")
        for p in phases {
            print("instructions \(p.name.split(separator: " ").first.map(String.init) ?? p.name): \(p.perCall)")
        }
        let over = phases.filter { p in p.budget.map { p.perCall > $0 } ?? false }
        for p in over {
            print("FAIL: \(p.name) costs \(Format.grouped(p.perCall)) instructions per call, "
                + "over its budget of \(Format.grouped(p.budget ?? 0))")
        }
        return over
    }
}

/// Zeroes and dumps flowd's callgrind counters and reads each dump's total.
struct DumpReader {
    let harness: Harness
    var outFile: String { harness.root + "/callgrind.out" }

    /// Zeroes the counters: what follows is counted.
    func zero(wake: BenchConnection) throws(BenchError) {
        try harness.callgrindControl(["--zero"], wake: { () throws(BenchError) in try wake.ping() })
    }

    /// Dumps (and zeroes) the counters; returns the dump's instruction total.
    func dump(label: String, wake: BenchConnection) throws(BenchError) -> Int {
        let before = Set(files())
        try harness.callgrindControl(["--dump=" + label], wake: { () throws(BenchError) in try wake.ping() })
        guard let file = files().first(where: { !before.contains($0) }) else {
            throw .process("callgrind wrote no dump for \(label) (see \(harness.root)/callgrind_control.log)")
        }
        return try Self.total(of: harness.root + "/" + file)
    }

    private func files() -> [String] {
        ((try? FileSystem.directoryEntries(harness.root)) ?? []).filter { $0.hasPrefix("callgrind.out.") }
    }

    /// The `summary:` line of a callgrind output file: the instructions
    /// the dump holds (the only event collected is `Ir`), what
    /// `callgrind_annotate` shows as the program's total. (Its `totals:`
    /// line can be larger: functions running when the counters were zeroed
    /// keep some of their earlier cost there.)
    static func total(of path: String) throws(BenchError) -> Int {
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(path, limit: 1 << 30)
        } catch {
            throw .process("cannot read \(path): \(error)")
        }
        var summary: Int?
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("summary:") {
            summary = Int(line.dropFirst(8).split(separator: " ").first ?? "")
            break
        }
        guard let summary else { throw .process("\(path) has no summary line") }
        return summary
    }
}
