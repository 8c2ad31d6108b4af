// fuzz-config: the daemon's configuration file parser and its meaning
// (INIFile, DaemonConfiguration.apply), and its command line
// (DaemonCommandLine.parse), on any text. A refusal names the file and a
// line of it; an accepted file means the same when read again; whatever is
// accepted stays within the bounds the daemon relies on.
import FlowDaemon
import FuzzSupport

let layout = InstallLayout.derived(fromExecutable: "/usr/libexec/flowd")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var input = FuzzInput(data, size)
    let asCommandLine = input.byte() & 1 == 1
    let text = String(decoding: input.rest(), as: UTF8.self)
    if asCommandLine {
        let arguments = text.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
        do {
            let command = try DaemonCommandLine.parse(arguments)
            require((try? DaemonCommandLine.parse(arguments)) == command, "the same command line parsed two ways")
        } catch {
            require(!error.message.isEmpty, "a usage error without a message")
        }
        return 0
    }

    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
    let file: INIFile
    do {
        file = try INIFile(parsing: text, file: "fuzz.conf")
    } catch {
        checkRefusal(error, lines: lines)
        return 0
    }
    require((try? INIFile(parsing: text, file: "fuzz.conf")) == file, "the same file parsed two ways")
    var configuration = DaemonConfiguration(layout: layout)
    do {
        try configuration.apply(file)
    } catch {
        checkRefusal(error, lines: lines)
        return 0
    }
    var again = DaemonConfiguration(layout: layout)
    try? again.apply(file)
    require(again == configuration, "the same file meant two things")
    let limits = configuration.limits
    require(limits.maxStringLength >= 1 && limits.maxAnswersPerCall >= 1 && limits.maxListLength >= 1,
            "a limit below 1 was accepted: \(limits)")
    require(limits.maxSessionsPerUser >= 1 && limits.maxSessions >= 1, "a session limit below 1 was accepted")
    require(configuration.pluginCallTimeout > .zero, "a plugin call timeout of \(configuration.pluginCallTimeout)")
    require(configuration.stateDirectory.map { $0.hasPrefix("/") } ?? true, "a relative state directory")
    return 0
}

func checkRefusal(_ error: ConfigurationError, lines: Int) {
    require(error.file == "fuzz.conf", "an error naming \(error.file)")
    require(error.line.map { $0 >= 1 && $0 <= lines } ?? true, "an error on line \(error.line ?? 0) of \(lines)")
    require(!error.message.isEmpty, "an error without a message")
}

#if !FUZZING
@main enum Replay {
    static func main() { FuzzReplay.main(fuzzConfig) }
}
#endif
