/// Exit statuses: `EXIT_SUCCESS`, `EXIT_FAILURE` and the codes of BSD's
/// `sysexits.h`, which flowd (flowd(8)) and flowctl (flowctl(1)) both use,
/// so a script can tell "usage error" from "not running" from "no permission".
package enum SysExits: Int32, Sendable, CaseIterable {
    /// Success. The C names are `EXIT_SUCCESS` and `EX_OK`.
    case ok = 0
    /// A failure with no more specific code. The C name is `EXIT_FAILURE`
    /// (not in `sysexits.h`).
    case failure = 1
    /// The command line is wrong. The C name is `EX_USAGE`.
    case usage = 64
    /// The input data is wrong. The C name is `EX_DATAERR`.
    case dataError = 65
    /// An input file (or a named thing) does not exist. The C name is `EX_NOINPUT`.
    case noInput = 66
    /// A service is unavailable (not running, not reachable). The C name is `EX_UNAVAILABLE`.
    case unavailable = 69
    /// An internal software error. The C name is `EX_SOFTWARE`.
    case software = 70
    /// An output file cannot be created. The C name is `EX_CANTCREAT`.
    case cannotCreate = 73
    /// An input/output error. The C name is `EX_IOERR`.
    case ioError = 74
    /// Permission denied. The C name is `EX_NOPERM`.
    case noPermission = 77
    /// Something in the configuration is wrong. The C name is `EX_CONFIG`.
    case configuration = 78
}
