// flowd-gtk: the desktop client. Everything lives in FlowDesktop; see DesktopApp.
import FlowDesktop
import Glibc

exit(DesktopApp.run(arguments: CommandLine.arguments))
