import Testing
import TestSupport

/// FlowdSystem's own behaviour, against the real kernel: files, errors,
/// child processes, the notification socket's transport, locks.
@Suite("FlowdSystem")
struct FlowdSystemTests {
    @Test("errno values read as the C library's sentences and compare by meaning")
    func errnoText() {
        #expect(Errno.noSuchFileOrDirectory.description == "No such file or directory")
        #expect(Errno(rawValue: Errno.permissionDenied.rawValue) == .permissionDenied)
        #expect(Errno(rawValue: 100_000).description.isEmpty == false)
        let error = SystemCallError("open", path: "/nowhere", errno: .noSuchFileOrDirectory)
        #expect(error.description == "open /nowhere: No such file or directory")
        #expect(SystemCallError("pipe2", errno: .invalidArgument).description == "pipe2: Invalid argument")
    }

    @Test("a bounded read returns small files whole and refuses big ones, directories and FIFOs")
    func boundedRead() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("ten", "0123456789")
        #expect(try FileSystem.readFile(path, limit: 10) == Array("0123456789".utf8))
        #expect(throws: FileReadError.tooLarge(path: path, limit: 9)) { try FileSystem.readFile(path, limit: 9) }
        #expect(throws: FileReadError.notARegularFile(path: dir.path)) { try FileSystem.readFile(dir.path, limit: 10) }
        let missing = dir.file("missing")
        let error = #expect(throws: FileReadError.self) { try FileSystem.readFile(missing, limit: 10) }
        #expect(error?.errno == .noSuchFileOrDirectory)
        #expect(error?.description == "cannot read \(missing): No such file or directory")
        // A FIFO nobody writes to must not hang the reader.
        let fifo = dir.file("fifo")
        let made = try ChildProcess.run("mkfifo", [fifo])
        #expect(made.status == .exited(0))
        #expect(throws: FileReadError.notARegularFile(path: fifo)) { try FileSystem.readFile(fifo, limit: 10) }
    }

    @Test("an atomic write leaves the old file or the whole new one, mode 0600, and no temporary")
    func atomicWrite() throws {
        let dir = try TemporaryDirectory()
        try FileSystem.writeAtomically(Array("first".utf8), directory: dir.path, name: "f.json")
        try FileSystem.writeAtomically(Array("second".utf8), directory: dir.path, name: "f.json")
        #expect(try FileSystem.readFile(dir.file("f.json"), limit: 100) == Array("second".utf8))
        #expect(try FileSystem.status(dir.file("f.json")).permissions == 0o600)
        #expect(try FileSystem.directoryEntries(dir.path) == ["f.json"])
        let error = #expect(throws: SystemCallError.self) {
            try FileSystem.writeAtomically([1], directory: dir.file("missing"), name: "x")
        }
        #expect(error?.errno == .noSuchFileOrDirectory)
    }

    @Test("make-directories creates what is missing and names the component that is not a directory")
    func makeDirectories() throws {
        let dir = try TemporaryDirectory()
        try FileSystem.makeDirectories(dir.file("a/b/c"), mode: 0o700)
        #expect(try FileSystem.status(dir.file("a/b/c")).isDirectory)
        #expect(try FileSystem.status(dir.file("a/b")).permissions == 0o700)
        try FileSystem.makeDirectories(dir.file("a/b/c"))  // again: nothing to do
        let plain = try dir.write("plain", "x")
        let error = #expect(throws: SystemCallError.self) { try FileSystem.makeDirectories(plain + "/below") }
        #expect(error?.errno == .notADirectory)
        #expect(error?.path == plain)
    }

    @Test("one file identity: a rewritten file is another identity, a read leaves it")
    func fileIdentity() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("lib.so", "v1")
        let before = try FileSystem.status(path).identity
        _ = try FileSystem.readFile(path, limit: 10)
        #expect(try FileSystem.status(path).identity == before)
        try FileSystem.writeFile(path, Array("version 2".utf8))
        let after = try FileSystem.status(path).identity
        #expect(after != before)
        #expect(after.size == 9)
        #expect(after.modificationTime >= before.modificationTime)
    }

    @Test("a child gets a clean signal state, its output is captured, and its status read")
    func childProcess() throws {
        // Spawned from a thread that blocks SIGUSR2: the child must not inherit that.
        let results = Mailbox<Result<ChildProcess.Result, SystemCallError>>()
        let spawner = try SystemThread.spawn(name: "test-spawner") {
            results.put(Result { () throws(SystemCallError) -> ChildProcess.Result in
                try Signal.block([.user2])
                return try ChildProcess.run(
                    "/bin/sh", ["-c", "grep -E '^(SigBlk|SigIgn)' /proc/self/status; echo err >&2; exit 3"])
            })
        }
        spawner.join()
        let result = try #require(results.take(timeout: .seconds(60))).get()
        #expect(result.status == .exited(3))
        // Nothing blocked, and none of the standard signals (1–31) ignored;
        // glibc's posix_spawn leaves its own two internal ones (32, 33) ignored.
        var masks: [String: UInt64] = [:]
        for line in result.standardOutput.split(separator: "\n") {
            let parts = line.split(separator: "\t")
            if parts.count == 2 { masks[String(parts[0])] = UInt64(parts[1], radix: 16) }
        }
        #expect(masks["SigBlk:"] == 0)
        #expect(masks["SigIgn:"].map { $0 & 0x7fff_ffff } == 0)
        #expect(result.standardError == "err\n")
        let missing = #expect(throws: SystemCallError.self) { try ChildProcess.run("/nonexistent/program") }
        #expect(missing?.errno == .noSuchFileOrDirectory)
    }

    @Test("waiting is bounded, and terminate ends a child that ignores SIGTERM with SIGKILL")
    func terminate() throws {
        let child = try ChildProcess("/bin/sh", ["-c", "trap '' TERM; echo up; while :; do sleep 1; done"])
        #expect(child.waitForOutput(timeout: .seconds(20)) { $0 == "up\n" })
        #expect(child.wait(timeout: .milliseconds(10)) == nil)
        #expect(child.exitStatus == nil)
        #expect(child.terminate(grace: .milliseconds(200)) == .signaled(.kill))
        #expect(child.exitStatus == .signaled(.kill))
    }

    @Test("a process group leader takes what it started with it")
    func processGroup() throws {
        let dir = try TemporaryDirectory()
        var options = ChildProcess.Options(
            "/bin/sh", ["-c", "sleep 600 & echo $! > \(dir.file("pid")); exit 0"], environment: [:])
        options.newProcessGroup = true
        let child = try ChildProcess(options)
        #expect(child.wait(timeout: .seconds(20)) == .exited(0))
        let text = String(decoding: try FileSystem.readFile(dir.file("pid"), limit: 32), as: UTF8.self)
        let leftover = try #require(Int32(text.filter(\.isNumber)))
        // The leftover was killed before the leader was reaped; it is gone once its parent (init) reaps it.
        #expect(waitUntilGone(leftover))
    }

    @Test("extra descriptors reach the child under the number asked for")
    func extraDescriptors() throws {
        let (read, write) = try FileDescriptor.pipe()
        var options = ChildProcess.Options("/bin/sh", ["-c", "echo through-five >&5"], environment: [:])
        options.extraDescriptors = [5: write]
        let child = try ChildProcess(options)
        write.close()
        #expect(child.wait(timeout: .seconds(20)) == .exited(0))
        #expect(try read.readToEnd(limit: 100, path: "pipe") == Array("through-five\n".utf8))
    }

    @Test("an async wait sees the end, a deadline or a cancellation; terminated() ends what is left")
    func asyncWaits() async throws {
        let quick = try ChildProcess("/bin/sh", ["-c", "echo out; echo err >&2; exit 4"])
        #expect(await quick.ended(before: nil) == .exited(4))
        #expect(quick.standardOutput == "out\n" && quick.standardError == "err\n")

        var options = ChildProcess.Options("/bin/sh", ["-c", "trap '' TERM; while :; do sleep 1; done"], environment: [:])
        options.newProcessGroup = true
        let stubborn = try ChildProcess(options)
        #expect(await stubborn.ended(before: MonotonicClock.now().advanced(by: .milliseconds(50))) == nil)
        let waiting = Task { await stubborn.ended(before: nil) }
        waiting.cancel()
        #expect(await waiting.value == nil)
        #expect(stubborn.exitStatus == nil)
        #expect(await stubborn.terminated(grace: .milliseconds(100)) == .signaled(.kill))
        #expect(stubborn.exitStatus == .signaled(.kill))
    }

    @Test("standard input given as bytes is fed as the child reads, also more than a pipe holds")
    func inputBytes() async throws {
        let input = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 % 251) }
        var options = ChildProcess.Options("/bin/sh", ["-c", "sleep 0.2; wc -c"], environment: [:])
        options.standardInput = .bytes(input)
        let child = try ChildProcess(options)
        #expect(await child.ended(before: nil) == .exited(0))
        #expect(child.standardOutput.filter(\.isNumber) == "300000")
        // A child that never reads its input is no error either.
        var ignoring = ChildProcess.Options("/bin/true", environment: [:])
        ignoring.standardInput = .bytes(input)
        let ignorer = try ChildProcess(ignoring)
        #expect(await ignorer.ended(before: nil) == .exited(0))
    }

    @Test("waiting for many children at once holds no thread per child")
    func waitingHoldsNoThreads() async throws {
        let count = 24
        let before = Self.threadCount()
        let children = try (0..<count).map { _ in try ChildProcess("/bin/sleep", ["600"]) }
        let results = Task {
            await withTaskGroup(of: Termination?.self) { group in
                for child in children { group.addTask { await child.ended(before: nil) } }
                var all: [Termination?] = []
                for await result in group { all.append(result) }
                return all
            }
        }
        // Every child runs and is waited for; the process has not grown a
        // thread for each (it had two per child: a reaper and a reader).
        #expect(children.allSatisfy { !$0.hasExited })
        #expect(Self.threadCount() < before + count / 2, "\(before) threads before, \(Self.threadCount()) now")
        for child in children { child.send(.terminate) }
        #expect(await results.value.allSatisfy { $0 == .signaled(.terminate) })
    }

    /// The threads of this process, from `/proc/self/status`.
    static func threadCount() -> Int {
        let text = String(decoding: (try? FileSystem.readFile("/proc/self/status", limit: 65536)) ?? [], as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix("Threads:") } ?? ""
        return Int(line.filter(\.isNumber)) ?? 0
    }

    @Test("a datagram socket's blocked receive returns empty after shutdown")
    func datagramShutdown() throws {
        let dir = try TemporaryDirectory()
        let socket = try UnixDatagramSocket(bindingTo: dir.file("s"))
        let received = Mailbox<[UInt8]>()
        let reader = try SystemThread.spawn(name: "test-reader") { received.put((try? socket.receive()) ?? [9]) }
        socket.shutdown()
        reader.join()
        #expect(received.take(timeout: .seconds(20)) == [])
        socket.close()
        #expect(!FileSystem.exists(dir.file("s")))
    }

    @Test("a locked value hands a change to a waiting thread")
    func lockedValue() throws {
        let value = LockedValue(0)
        let waiter = try SystemThread.spawn(name: "test-waiter") {
            _ = value.wait(timeout: nil) { $0 == 3 }
            value.withLockNotifying { $0 = 4 }
        }
        for _ in 0..<3 { value.withLockNotifying { $0 += 1 } }
        #expect(value.wait(timeout: .seconds(20)) { $0 == 4 })
        waiter.join()
        let semaphore = Semaphore()
        #expect(!semaphore.wait(timeout: .milliseconds(1)))
        semaphore.signal()
        #expect(semaphore.wait(timeout: .seconds(20)))
    }

    @Test("calendar times format as RFC 3339 and as a time of day")
    func calendarTime() throws {
        let time = try #require(CalendarTime.utc(microsecondsSinceEpoch: 1_717_236_000_000_000))
        #expect(time.rfc3339UTC == "2024-06-01T10:00:00Z")
        #expect(time.timeOfDay == "10:00:00")
        #expect(CalendarTime.localNow() != nil)
    }

}
