// flowd-gtk: the desktop client. Everything lives in FlowDesktop; see DesktopApp.
import FlowDesktop
import FlowdSystem

CurrentProcess.exit(DesktopApp.run(arguments: CommandLine.arguments))
