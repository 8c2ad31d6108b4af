// flowd: the daemon. Everything lives in FlowDaemon; see DaemonMain.
import FlowDaemon
import Glibc

exit(DaemonMain.run(arguments: Array(CommandLine.arguments.dropFirst()), environment: DaemonMain.processEnvironment()))
