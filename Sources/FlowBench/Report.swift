/// Prints the results: a table for people, then machine-readable lines
/// (`name: value`), the last being `ratio SetAnswers/Ping: …`.
enum Report {
    static let latencyOrder: [CallKind] = [.ping, .propertyGet, .setAnswers, .continueStep, .getStep, .back, .walk]

    static func main(
        options: BenchOptions, result: SizeResult, throughput: Scenarios.Throughput?, readyCount: Int,
        readyTimes: [UInt64]
    ) {
        print("flowd-bench: \(Format.grouped(result.sessions)) stored sessions, \(Format.grouped(result.live)) of them live (loaded and called); "
            + "\(Format.grouped(options.rounds)) rounds on one connection, a walk every \(options.walkEvery)")
        print("")
        latencyTable(result)
        cpuLine(result)
        print("")
        print("first touch: GetStep on each stored session once (loaded from the store): "
            + "median \(Format.fixed(result.firstTouch.median)) µs, p99 \(Format.fixed(result.firstTouch.p99)) µs")
        if let throughput {
            print("")
            print("\(throughput.clients) connections at once: throughput")
            print(Format.left("call", 14) + Format.right("calls/s", 10) + Format.right("vs Ping", 10))
            let ping = throughput.callsPerSecond["Ping"] ?? 0
            for name in throughput.order {
                let rate = throughput.callsPerSecond[name] ?? 0
                print(Format.left(name, 14) + Format.right(Format.fixed(rate, 0), 10)
                    + Format.right(Format.fixed(rate > 0 ? ping / rate : 0, 2) + "×", 10))
            }
            print("  (vs Ping: Ping throughput / this call's throughput, the time-per-call ratio)")
        }
        print("")
        memory(result)
        print("start-up: READY=1 \(Format.fixed(Double(result.ready) / 1e6)) ms after the spawn with "
            + "\(Format.grouped(result.sessions)) stored sessions and \(Harness.shippedPlugins.count) plugins")
        let sortedReady = readyTimes.sorted()
        if !sortedReady.isEmpty {
            let ms = sortedReady.map { Double($0) / 1e6 }
            print("start-up: READY=1 with \(Format.grouped(readyCount)) stored sessions, \(ms.count) starts: "
                + "median \(Format.fixed(ms[ms.count / 2])) ms, min \(Format.fixed(ms.first ?? 0)) ms, "
                + "max \(Format.fixed(ms.last ?? 0)) ms")
        }

        print("")
        for kind in latencyOrder where kind != .ping && kind != .setAnswers {
            print("ratio \(kind.rawValue)/Ping: \(Format.fixed(result.ratio(kind), 2))")
        }
        if let throughput {
            let ping = throughput.callsPerSecond["Ping"] ?? 0
            for name in throughput.order where name != "Ping" {
                let rate = throughput.callsPerSecond[name] ?? 0
                // Without spaces ("Mixed round" → "Mixedround"), for a machine-readable key.
                let key = name.filter { $0 != " " }
                print("throughput\(throughput.clients) \(key)/Ping: "
                    + "\(Format.fixed(rate > 0 ? ping / rate : 0, 2))")
            }
        }
        print("memory bytes/live session: \(Format.fixed(result.bytesPerSession, 0))")
        if !sortedReady.isEmpty {
            print("ready ms at \(readyCount) stored sessions: \(Format.fixed(Double(sortedReady[sortedReady.count / 2]) / 1e6, 1))")
        }
        print("ratio SetAnswers/Ping: \(Format.fixed(result.ratio(.setAnswers), 2))")
    }

    static func scaling(options: BenchOptions, results: [SizeResult]) {
        let live = options.live > 0 ? "\(Format.grouped(options.live)) live sessions at most" : "every stored session live"
        print("flowd-bench scaling: \(Format.grouped(options.rounds)) rounds per size on one connection, \(live); "
            + "median µs (ratio to Ping)")
        print("")
        var header = Format.left("stored", 9) + Format.right("live", 8)
        for kind in latencyOrder { header += Format.right(kind.rawValue, kind == .walk ? 18 : 16) }
        header += Format.right("flowd CPU/call", 16) + Format.right("B/session", 11) + Format.right("READY ms", 10)
        print(header)
        for r in results {
            var line = Format.left(Format.grouped(r.sessions), 9) + Format.right(Format.grouped(r.live), 8)
            for kind in latencyOrder {
                let median = r.latency[kind]?.median ?? 0
                let cell = kind == .ping
                    ? Format.fixed(median) : "\(Format.fixed(median)) (\(Format.fixed(r.ratio(kind), 2)))"
                line += Format.right(cell, kind == .walk ? 18 : 16)
            }
            line += Format.right(Format.fixed(Double(r.cpu.flowd) / Double(max(1, r.calls))) + " µs", 16)
            line += Format.right(Format.fixed(r.bytesPerSession, 0), 11)
            line += Format.right(Format.fixed(Double(r.ready) / 1e6), 10)
            print(line)
        }
        print("")
        for r in results {
            print("sessions \(r.sessions) first-touch GetStep µs: \(Format.fixed(r.firstTouch.median))")
        }
        for r in results {
            print("sessions \(r.sessions) ratio SetAnswers/Ping: \(Format.fixed(r.ratio(.setAnswers), 2))")
        }
    }

    private static func latencyTable(_ result: SizeResult) {
        print(Format.left("call", 24) + Format.right("median µs", 11) + Format.right("p99 µs", 10)
            + Format.right("mean µs", 10) + Format.right("calls/s", 10) + Format.right("vs Ping", 10) + Format.right("n", 7))
        for kind in latencyOrder {
            guard let s = result.latency[kind] else { continue }
            let name = kind == .walk ? "Walk (\(Scenarios.callsPerWalk) calls, submit)" : kind.rawValue
            print(Format.left(name, 24) + Format.right(Format.fixed(s.median), 11) + Format.right(Format.fixed(s.p99), 10)
                + Format.right(Format.fixed(s.mean), 10) + Format.right(Format.fixed(s.throughput, 0), 10)
                + Format.right(Format.fixed(result.ratio(kind), 2) + "×", 10) + Format.right(String(s.count), 7))
        }
        if let walk = result.latency[.walk], let ping = result.latency[.ping], ping.median > 0 {
            print("  (a walk is \(Scenarios.callsPerWalk) calls: \(Format.fixed(walk.median / Double(Scenarios.callsPerWalk) / ping.median, 2))× Ping per call)")
        }
    }

    /// Where the time of a call goes: CPU per call of each process, over the measured rounds.
    private static func cpuLine(_ result: SizeResult) {
        guard result.calls > 0 else { return }
        let n = Double(result.calls)
        print("CPU per call (all calls of the rounds, walks' GetStep and Close included): "
            + "flowd \(Format.fixed(Double(result.cpu.flowd) / n)) µs "
            + "(\(Format.fixed(Double(result.cpu.flowdSystem) / n)) in the kernel), "
            + "dbus-daemon \(Format.fixed(Double(result.cpu.bus) / n)) µs, "
            + "flowd-bench \(Format.fixed(Double(result.cpu.client) / n)) µs")
    }

    private static func memory(_ result: SizeResult) {
        let mib = 1024.0 * 1024.0
        print("memory: flowd RSS \(Format.fixed(Double(result.residentBefore) / mib)) MiB before loading, "
            + "\(Format.fixed(Double(result.residentAfter) / mib)) MiB after loading "
            + "\(Format.grouped(result.live)) live sessions: \(Format.fixed(result.bytesPerSession, 0)) bytes per session")
    }
}
