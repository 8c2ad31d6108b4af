// flowd: the daemon. Everything lives in FlowDaemon; see DaemonMain.
import FlowDaemon
import FlowdSystem

CurrentProcess.exit(
    DaemonMain.run(arguments: Array(CommandLine.arguments.dropFirst()), environment: CurrentProcess.environment()))
