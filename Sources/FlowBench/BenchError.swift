/// Why a benchmark run stopped.
enum BenchError: Error, CustomStringConvertible {
    /// `--help` was asked for.
    case help
    /// The command line is wrong (exit 64).
    case usage(String)
    /// Something the run needs is missing: a binary, a plugin, the flows.
    case setup(String)
    /// A process (dbus-daemon, flowd) did not start or died.
    case process(String)
    /// A D-Bus call failed.
    case call(String)
    /// Filling the store failed.
    case store(String)

    var description: String {
        switch self {
        case .help: return "help"
        case .usage(let m), .setup(let m), .process(let m), .call(let m), .store(let m): return m
        }
    }
}
