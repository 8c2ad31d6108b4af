import FlowKit
import Foundation
import Glibc
import PluginHost
import PluginTestSupport
import Testing

@Suite("flowd.command")
struct CommandTests {
    /// Writes an executable /bin/sh script into `temp` and returns its path.
    func script(_ body: String, in temp: TemporaryDirectory, name: String = "action.sh") throws -> String {
        let path = temp.appending(name)
        try Data("#!/bin/sh\n\(body)\n".utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o755)
        return path
    }

    func options(_ path: String, _ extra: [String: JSONValue] = [:]) -> [String: JSONValue] {
        var o: [String: JSONValue] = ["path": .string(path)]
        o.merge(extra) { _, new in new }
        return o
    }

    func read(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    /// Whether `pid` is gone (or only a zombie waiting for init).
    func isGone(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 else { return errno == ESRCH }
        let stat = read("/proc/\(pid)/stat")
        return stat.isEmpty || stat.contains(") Z ")
    }

    @Test("runs the program with the submission on stdin, a clean environment and the receipt from stdout")
    func runs() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let out = temp.path
        let path = try script(
            """
            cat > \(out)/stdin.json
            env > \(out)/env.txt
            printf '%s\\n' "$@" > \(out)/args.txt
            ls /proc/$$/fd > \(out)/fds.txt
            grep SigBlk /proc/self/status > \(out)/sigblk.txt
            echo "working..."
            echo '{"ticket": "T-17", "message": "Your ticket is T-17."}'
            """, in: temp)
        // A descriptor the daemon forgot to mark close-on-exec must not reach
        // the program. (F_DUPFD picks a free number: dup2 onto a fixed one
        // could close a descriptor some other test holds.)
        let devNull = open("/dev/null", O_RDONLY | O_CLOEXEC)
        let leaked = fcntl(devNull, F_DUPFD, 300)
        #expect(leaked >= 300)
        defer {
            close(leaked)
            close(devNull)
        }
        let submission = Samples.submission(locale: "de", answers: ["name": .text("Ada")], secure: ["pin": "1234"])
        let result = await caller.submit(
            "flowd.command", submission: submission,
            context: Samples.context(locale: "de", options: options(path, ["args": ["--flag", "two words"]])),
            timeout: .seconds(30))
        #expect(result == .success(SubmitReceipt(["ticket": "T-17", "message": "Your ticket is T-17."])))

        let input = try #require(
            try JSONSerialization.jsonObject(with: Data(read(out + "/stdin.json").utf8)) as? [String: Any])
        #expect(input["id"] as? String == submission.id)
        #expect((input["answers"] as? [String: Any])?["name"] as? String == "Ada")
        #expect((input["answers"] as? [String: Any])?["pin"] == nil)

        let env = Set(read(out + "/env.txt").split(separator: "\n").map(String.init))
        #expect(env.contains("PATH=/usr/bin:/bin"))
        #expect(env.contains("LANG=de_DE.UTF-8"))
        #expect(env.contains("FLOWD_LOCALE=de"))
        #expect(env.contains("FLOWD_FLOW=sample"))
        #expect(env.contains("FLOWD_SESSION=\(submission.sessionID)"))
        #expect(env.contains("FLOWD_IDEMPOTENCY_KEY=\(submission.idempotencyKey)"))
        #expect(env.contains("FLOWD_SUBMISSION=\(submission.id)"))
        #expect(!env.contains { $0.hasPrefix("HOME=") })
        #expect(read(out + "/args.txt") == "--flag\ntwo words\n")
        #expect(!read(out + "/fds.txt").split(separator: "\n").contains(Substring(String(leaked))))
        #expect(read(out + "/sigblk.txt").trimmingCharacters(in: .whitespacesAndNewlines) == "SigBlk:\t0000000000000000")
    }

    @Test("a non-zero exit fails with the last line of stderr as the message")
    func failsWithStderr() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let path = try script(
            """
            cat > /dev/null
            echo "debug noise" >&2
            echo "Der Raum ist schon belegt." >&2
            echo "" >&2
            exit 3
            """, in: temp)
        let result = await caller.submit(
            "flowd.command", submission: Samples.submission(), context: Samples.context(options: options(path)),
            timeout: .seconds(30))
        #expect(result.failureMessage == .some("Der Raum ist schon belegt."))
    }

    @Test("a non-zero exit without stderr, or a death by signal, gives the default message")
    func failsQuietly() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let quiet = try script("exit 1", in: temp, name: "quiet.sh")
        let result = await caller.submit(
            "flowd.command", submission: Samples.submission(), context: Samples.context(options: options(quiet)),
            timeout: .seconds(30))
        #expect(result.failureMessage == .some(nil))
        #expect(result.failureDetail?.contains("exited with status 1") == true)

        let killed = try script("kill -9 $$", in: temp, name: "killed.sh")
        let byKill = await caller.submit(
            "flowd.command", submission: Samples.submission(), context: Samples.context(options: options(killed)),
            timeout: .seconds(30))
        #expect(byKill.failureMessage == .some(nil))
        #expect(byKill.failureDetail?.contains("killed by signal 9") == true)
    }

    @Test("a program that runs too long is terminated, reaped, and its group killed")
    func timeout() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let out = temp.path
        let path = try script(
            """
            echo $$ > \(out)/pid
            sleep 300 &
            echo $! > \(out)/child
            sleep 300
            """, in: temp)
        let result = await caller.submit(
            "flowd.command", submission: Samples.submission(),
            context: Samples.context(options: options(path, ["timeoutSeconds": 0.5])), timeout: .seconds(60))
        #expect(result.failureMessage == .some("This took too long. Please try again later."))
        let pid = try #require(Int32(read(out + "/pid").trimmingCharacters(in: .whitespacesAndNewlines)))
        let child = try #require(Int32(read(out + "/child").trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(isGone(pid))
        #expect(await waitUntil { isGone(child) })
    }

    @Test("a Japanese session reads the timeout in Japanese")
    func timeoutInJapanese() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let path = try script("exec sleep 300", in: temp)
        let result = await caller.submit(
            "flowd.command", submission: Samples.submission(),
            context: Samples.context(locale: "ja", options: options(path, ["timeoutSeconds": 0.5])), timeout: .seconds(60))
        #expect(result.failureMessage == .some("時間がかかりすぎました。しばらくしてからもう一度お試しください。"))
    }

    @Test("the program's limit is cut to the call's deadline, so the person hears that it took too long")
    func deadlineCutsTheLimit() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let path = try script("sleep 300", in: temp)
        // 30 s of the program's own against a 4 s call: without the cut the
        // call would time out in flowd with no word from the plugin.
        let result = await caller.submit(
            "flowd.command", submission: Samples.submission(),
            context: Samples.context(options: options(path, ["timeoutSeconds": 30])), timeout: .seconds(4))
        #expect(result.failureMessage == .some("This took too long. Please try again later."), "\(result)")
    }

    @Test("what the program leaves running in its group is killed when it exits")
    func leftovers() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let out = temp.path
        let path = try script(
            """
            sleep 300 &
            echo $! > \(out)/child
            exit 0
            """, in: temp)
        let result = await caller.submit(
            "flowd.command", submission: Samples.submission(), context: Samples.context(options: options(path)),
            timeout: .seconds(60))
        #expect(result.value != nil)
        let child = try #require(Int32(read(out + "/child").trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(await waitUntil { isGone(child) })
    }

    @Test("cancelling the submit stops the program")
    func cancel() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let out = temp.path
        let path = try script("echo $$ > \(out)/pid.tmp; mv \(out)/pid.tmp \(out)/pid; exec sleep 300", in: temp)
        let task = Task {
            await caller.submit(
                "flowd.command", submission: Samples.submission(), context: Samples.context(options: options(path)),
                timeout: .seconds(600))
        }
        #expect(await waitUntil { FileManager.default.fileExists(atPath: out + "/pid") })
        task.cancel()
        #expect(await task.value == .cancelled)
        let pid = try #require(Int32(read(out + "/pid").trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(await waitUntil { isGone(pid) })
    }

    @Test("a large submission is fed to a program that reads it slowly, and one that never reads")
    func largeInput() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let big = String(repeating: "x", count: 300_000)
        let counter = try script("wc -c > \(temp.path)/count", in: temp, name: "count.sh")
        let result = await caller.submit(
            "flowd.command", submission: Samples.submission(answers: ["big": .text(big)]),
            context: Samples.context(options: options(counter)), timeout: .seconds(60))
        #expect(result.value != nil)
        let count = Int(read(temp.path + "/count").trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(count > 300_000)

        let ignorer = try script("exit 0", in: temp, name: "ignore.sh")
        let ignored = await caller.submit(
            "flowd.command", submission: Samples.submission(answers: ["big": .text(big)]),
            context: Samples.context(options: options(ignorer)), timeout: .seconds(60))
        #expect(ignored.value != nil)
    }

    @Test("bad options are refused: a relative or missing path, a wrong type, an unknown key")
    func badOptions() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let cases: [([String: JSONValue], String)] = [
            ([:], "\"path\" is required"),
            (["path": "bin/true"], "absolute path"),
            (["path": "/bin/true", "args": "-x"], "array of strings"),
            (["path": "/bin/true", "timeoutSeconds": 0], "timeoutSeconds"),
            (["path": "/bin/true", "shell": true], "unknown option \"shell\""),
            (["path": .string(temp.appending("missing"))], "execve"),
        ]
        for (options, detail) in cases {
            let result = await caller.submit(
                "flowd.command", submission: Samples.submission(), context: Samples.context(options: options),
                timeout: .seconds(30))
            #expect(result.failureMessage == .some(nil), "\(options)")
            #expect(result.failureDetail?.contains(detail) == true, "\(options): \(result.failureDetail ?? "")")
        }
    }

    @Test("session locales map to POSIX locales", arguments: [
        ("de", "de_DE.UTF-8"), ("pt-BR", "pt_BR.UTF-8"), ("zh-Hans", "zh_CN.UTF-8"), ("zh-Hant", "zh_TW.UTF-8"),
        ("en", "en_US.UTF-8"), ("xx", "C.UTF-8"), ("fr_CA", "fr_CA.UTF-8"), ("$(rm -rf /)", "C.UTF-8"),
    ])
    func locales(locale: String, expected: String) async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let path = try script("echo \"$LANG\" > \(temp.path)/lang", in: temp)
        let result = await caller.submit(
            "flowd.command", submission: Samples.submission(),
            context: Samples.context(locale: locale, options: options(path)), timeout: .seconds(30))
        #expect(result.value != nil, "\(result.failureDetail ?? "")")
        #expect(read(temp.path + "/lang") == expected + "\n")
    }
}
