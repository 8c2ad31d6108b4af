// flowd-bench: flowd against the D-Bus floor, at scale (docs/performance.md).
// Never installed; run it with `make bench`.
import FlowdSystem

do throws(BenchError) {
    let options = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))
    try Bench(options: options).run()
} catch .help {
    print(BenchOptions.usage)
} catch .usage(let message) {
    FileDescriptor.printError("flowd-bench: \(message)")
    CurrentProcess.exit(SysExits.usage.rawValue)
} catch {
    FileDescriptor.printError("flowd-bench: \(error.description)")
    CurrentProcess.exit(SysExits.failure.rawValue)
}
