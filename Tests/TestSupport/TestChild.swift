import Foundation
import Glibc

/// A system call that failed while setting up a test child.
public struct TestChildFailure: Error, CustomStringConvertible {
    public var call: String
    public var code: Int32
    public var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
}

/// Runs one test of this test binary in a child process (the test binary
/// re-executed with a filter), with `environment` set, `removing` unset, and
/// the write end of a socket pair as the child's descriptor 3. The child's
/// stdout and stderr go to /dev/null: the test reads descriptor 3 only.
/// Returns the child's pid and the read end.
///
/// The child's environment is its own from the start, so nothing here races
/// with tests running in parallel in this process. A socket pair rather than
/// pipe(2): it is created close-on-exec atomically, so children spawned by
/// concurrent tests never inherit it.
public func spawnTestChild(
    filter: String, environment: [String: String], removing: [String] = []
) throws -> (pid: pid_t, output: Int32) {
    var fds: [Int32] = [0, 0]
    let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { throw TestChildFailure(call: "socketpair", code: errno) }
    let executable: String
    do {
        executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    } catch {
        close(fds[0])
        close(fds[1])
        throw TestChildFailure(call: "readlink /proc/self/exe", code: EINVAL)
    }
    let arguments = [executable, "--testing-library", "swift-testing", "--filter", filter]
    var env = ProcessInfo.processInfo.environment
    for name in removing { env[name] = nil }
    for (key, value) in environment { env[key] = value }

    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, fds[1], 3)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        argv.forEach { free($0) }
        envp.forEach { free($0) }
    }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, executable, &actions, nil, argv, envp)
    close(fds[1])
    guard rc == 0 else {
        close(fds[0])
        throw TestChildFailure(call: "posix_spawn", code: rc)
    }
    return (pid, fds[0])
}
