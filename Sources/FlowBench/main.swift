// flowd-bench: flowd against the D-Bus floor, at scale (docs/performance.md).
// Never installed; run it with `make bench`.
import Glibc

do throws(BenchError) {
    let options = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))
    try Bench(options: options).run()
} catch .help {
    print(BenchOptions.usage)
} catch .usage(let message) {
    Posix.printError("flowd-bench: \(message)")
    exit(64)
} catch {
    Posix.printError("flowd-bench: \(error.description)")
    exit(1)
}
