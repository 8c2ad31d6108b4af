// The tests use FlowdSystem's ChildProcess (and its other types) through
// this module, as they used its own helpers before there was a system layer.
@_exported import FlowdSystem

/// Runs one test of this test binary in a child process (the test binary
/// re-executed with a filter), with `environment` set, `removing` unset, and
/// the write end of a socket pair as the child's descriptor 3. The child's
/// stdout and stderr go to /dev/null: the test reads descriptor 3 only.
/// Returns the child and the read end.
///
/// The child's environment is its own from the start, so nothing here races
/// with tests running in parallel in this process. A socket pair rather than
/// pipe(2): it is created close-on-exec atomically, so children spawned by
/// concurrent tests never inherit it.
package func spawnTestChild(
    filter: String, environment: [String: String], removing: [String] = []
) throws -> (child: ChildProcess, output: FileDescriptor) {
    guard let executable = CurrentProcess.executablePath() else {
        throw TestSupportError("cannot read /proc/self/exe")
    }
    var env = CurrentProcess.environment()
    for name in removing { env[name] = nil }
    env.merge(environment) { _, new in new }
    let (read, write) = try FileDescriptor.socketPair()
    var options = ChildProcess.Options(
        executable, ["--testing-library", "swift-testing", "--filter", filter], environment: env)
    options.standardOutput = .null
    options.standardError = .null
    options.extraDescriptors = [3: write]
    let child = try ChildProcess(options)
    write.close()
    return (child, read)
}
