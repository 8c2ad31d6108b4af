/// What `flowd-bench` was asked to do (its command line).
struct BenchOptions {
    /// Stored sessions the main run holds (`--sessions`).
    var sessions = 10_000
    /// How many of them are in use (loaded, then called); 0: all (`--live`).
    var live = 0
    /// Measured rounds on one connection; each round is one call of every kind (`--rounds`).
    var rounds = 5000
    /// A whole-flow walk every this many rounds (`--walk-every`).
    var walkEvery = 10
    /// Concurrent client connections for the throughput phase (`--clients`).
    var clients = 8
    /// Calls per client per throughput phase (`--calls-per-client`).
    var callsPerClient = 500
    /// Stored sessions for the start-up measurement (`--ready-sessions`); 0 skips it.
    var readySessions = 100_000
    /// How many times flowd is started for the start-up measurement (`--ready-starts`).
    var readyStarts = 5
    /// Sizes for a scaling table (`--scaling 1000,10000,100000`); empty: one size.
    var scaling: [Int] = []
    /// Where the run's directory is made (`--dir`).
    var directory = "/var/tmp"
    /// The directory holding `flowd` and the plugin libraries (`--build-dir`).
    var buildDirectory: String?
    /// The flows flowd serves (`--flows-dir`).
    var flowsDirectory: String?
    /// A command that runs flowd, such as `valgrind --tool=callgrind` (`--wrap`).
    var wrapper: [String] = []
    /// Count flowd's instructions per call under callgrind instead of timing (`--callgrind`).
    var callgrind = false
    /// Measure one plugin call in-process and isolated instead (`--plugin-modes`).
    var pluginModes = false
    /// Keep the run's directory (`--keep`).
    var keep = false
    /// Small numbers for a smoke test (`--quick`).
    var quick = false
    /// flowd's `[Daemon] Durability=` (`--durability process|power`).
    var durability = "process"
    /// Seed of the random choice of sessions (`--seed`).
    var seed: UInt64 = 0x5EED_F10D

    static let usage = """
        usage: flowd-bench [--sessions N] [--live N] [--rounds N] [--clients N] [--ready-sessions N]
                           [--scaling N,N,...] [--quick] [--dir DIR] [--build-dir DIR]
                           [--flows-dir DIR] [--wrap 'COMMAND ARGS'] [--durability process|power]
                           [--keep] [--seed N] [--callgrind] [--plugin-modes]

        Starts a private dbus-daemon and flowd, fills flowd's store with N stored
        sessions (default 10000), loads them, and measures Peer.Ping (the floor),
        SetAnswers, Continue, GetStep and a whole onboarding walk on one connection,
        interleaved; then throughput with --clients connections (default 8); resident
        memory per live session; and the time to READY=1 with --ready-sessions stored
        sessions (default 100000) and every shipped plugin loaded.
        The last lines are machine-readable ("ratio SetAnswers/Ping: 1.34").

          --sessions N         stored sessions for the main run
          --live N             how many of them are in use: loaded, then called (default all)
          --rounds N           measured rounds on one connection (default 5000)
          --walk-every N       one onboarding walk every N rounds (default 10)
          --clients N          connections for the throughput phase (default 8; 0 skips it)
          --calls-per-client N calls per connection per throughput phase (default 500)
          --ready-sessions N   stored sessions for the start-up measurement (0 skips it)
          --ready-starts N     starts measured (default 5)
          --scaling LIST       run the per-call measurement at each size and print a table
          --quick              a smoke test: 100 sessions, few rounds, no 100k start-up
          --dir DIR            where the run's directory is made (default /var/tmp)
          --build-dir DIR      where flowd and lib*Plugin.so are (default: next to flowd-bench)
          --flows-dir DIR      the flows to serve (default: ./flows, else the checkout's)
          --wrap 'CMD ARGS'    run flowd under CMD (for example valgrind --tool=callgrind)
          --durability MODE    flowd's Durability= setting: process (default) or power
          --callgrind          count flowd's instructions per call under valgrind's callgrind
                               (GetStep, SetAnswers, a message of the mixed rounds, Ping,
                               Get(Version)) instead of timing; defaults: 1000 sessions,
                               --rounds 300 (calls per phase), no throughput, no start-up
          --plugin-modes       instead: one validator call through the plugin call path,
                               loaded in-process and isolated (flowd-plugin-host),
                               median and CPU per call, and their ratio
          --keep               keep the run's directory (the store, logs, config)
          --seed N             seed for the choice of sessions
        """

    /// Parses `arguments` (without the program name).
    static func parse(_ arguments: [String]) throws(BenchError) -> BenchOptions {
        var options = BenchOptions()
        var sessionsGiven = false
        var readyGiven = false
        var roundsGiven = false
        var rest = arguments[...]
        func value(_ flag: String) throws(BenchError) -> String {
            guard let v = rest.popFirst() else { throw .usage("\(flag) needs a value") }
            return v
        }
        func count(_ flag: String, minimum: Int = 1) throws(BenchError) -> Int {
            let text = try value(flag)
            guard let n = Int(text.filter { $0 != "_" && $0 != "," }), n >= minimum else {
                throw .usage("\(flag) expects a whole number of at least \(minimum), not \"\(text)\"")
            }
            return n
        }
        while let flag = rest.popFirst() {
            switch flag {
            case "--sessions":
                options.sessions = try count(flag)
                sessionsGiven = true
            case "--live": options.live = try count(flag)
            case "--rounds":
                options.rounds = try count(flag)
                roundsGiven = true
            case "--walk-every": options.walkEvery = try count(flag)
            case "--clients": options.clients = try count(flag, minimum: 0)
            case "--calls-per-client": options.callsPerClient = try count(flag)
            case "--ready-sessions":
                options.readySessions = try count(flag, minimum: 0)
                readyGiven = true
            case "--ready-starts": options.readyStarts = try count(flag)
            case "--scaling":
                let text = try value(flag)
                let sizes = text.split(separator: ",").map { Int($0.filter { $0 != "_" }) }
                guard !sizes.isEmpty, sizes.allSatisfy({ ($0 ?? 0) > 0 }) else {
                    throw .usage("--scaling expects sizes such as 1000,10000,100000, not \"\(text)\"")
                }
                options.scaling = sizes.compactMap { $0 }
            case "--dir": options.directory = try value(flag)
            case "--build-dir": options.buildDirectory = try value(flag)
            case "--flows-dir": options.flowsDirectory = try value(flag)
            case "--wrap": options.wrapper = try value(flag).split(separator: " ").map(String.init)
            case "--durability":
                let text = try value(flag)
                guard text == "process" || text == "power" else {
                    throw .usage("--durability expects process or power, not \"\(text)\"")
                }
                options.durability = text
            case "--callgrind": options.callgrind = true
            case "--plugin-modes": options.pluginModes = true
            case "--keep": options.keep = true
            case "--quick": options.quick = true
            case "--seed":
                let text = try value(flag)
                guard let n = UInt64(text) else { throw .usage("--seed expects a whole number, not \"\(text)\"") }
                options.seed = n
            case "--help", "-h": throw .help
            default: throw .usage("unknown option \(flag)")
            }
        }
        if options.callgrind {
            guard options.wrapper.isEmpty else { throw .usage("--callgrind runs flowd under callgrind itself: leave out --wrap") }
            if !sessionsGiven { options.sessions = 1000 }
            if !roundsGiven { options.rounds = 300 }
            options.clients = 0
            if !readyGiven { options.readySessions = 0 }
        }
        if options.quick {
            if !sessionsGiven { options.sessions = 100 }
            options.rounds = min(options.rounds, 100)
            options.walkEvery = min(options.walkEvery, 10)
            options.callsPerClient = min(options.callsPerClient, 25)
            options.readyStarts = min(options.readyStarts, 2)
            if !readyGiven { options.readySessions = 0 }
        }
        return options
    }
}
