// flowd-plugin-host: the process an isolated plugin runs in (docs/plugins.md,
// "Isolated plugins"). flowd starts it with the plugin file it checked as a
// descriptor and one end of a socketpair; it sandboxes itself, loads the
// plugin as flowd would, and serves calls until flowd closes the socket.
// Not for running by hand.
import FlowdSystem
import PluginHost

/// The command line flowd gives.
struct HelperArguments {
    var socket: Int32 = -1
    var plugin: Int32 = -1
    var path = ""
    var memoryLimit: UInt64?
    var network = false

    init?(_ arguments: [String]) {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--network": network = true
            case "--socket-fd", "--plugin-fd", "--path", "--memory-limit":
                guard let value = rest.popFirst() else { return nil }
                switch argument {
                case "--socket-fd": guard let n = Int32(value) else { return nil }; socket = n
                case "--plugin-fd": guard let n = Int32(value) else { return nil }; plugin = n
                case "--memory-limit": guard let n = UInt64(value) else { return nil }; memoryLimit = n
                default: path = value
                }
            default: return nil
            }
        }
        guard socket >= 0, plugin >= 0 else { return nil }
    }
}

func main() -> Int32 {
    guard let arguments = HelperArguments(Array(CommandLine.arguments.dropFirst())) else {
        FileDescriptor.printError(
            "usage: flowd-plugin-host --socket-fd N --plugin-fd N --path PATH [--memory-limit BYTES] [--network]\n"
                + "flowd starts this for each isolated plugin; it is not run by hand.")
        return SysExits.usage.rawValue
    }
    let socket = FileDescriptor(owning: arguments.socket)
    let plugin = FileDescriptor(owning: arguments.plugin)
    // The sandbox comes before the plugin's first instruction: its
    // constructors run inside dlopen.
    do {
        // Stop, stop and reload are flowd's to act on. The service manager
        // sends them to every process of the unit (`systemctl stop`, Ctrl-C
        // on a terminal): a helper that died of one would be started again
        // by flowd as it stops. flowd ends this process as it stops, and
        // it dies with flowd (PR_SET_PDEATHSIG).
        try Signal.disregard([.terminate, .interrupt, .hangUp])
        try Sandbox.forbidNewPrivileges()
        if let limit = arguments.memoryLimit { try Sandbox.limitMemory(bytes: limit) }
        if !arguments.network { try Sandbox.refuseNetwork() }
    } catch {
        IsolatedPluginServer.refuse("cannot set up its sandbox: \(error)", on: socket)
        return SysExits.software.rawValue
    }
    return IsolatedPluginServer.run(plugin: plugin, socket: socket).rawValue
}

CurrentProcess.exit(main())
