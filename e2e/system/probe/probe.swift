// A probe for the sandbox of flowd.service: a Swift program that does what the
// daemon and its plugins do at run time (Foundation, Regex, concurrency, Dispatch,
// threads, getrandom, NSS, dlopen of the shipped plugins through /proc/self/fd/N,
// spawning a program, URLSession) and exits non-zero when one of them fails.
// e2e/system/probe/run.sh builds it and runs it as flowd.service, under every
// setting of the shipped unit, in the end-to-end container. Not shipped.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Dispatch
import Glibc

func say(_ s: String) { print("probe: \(s)"); fflush(stdout) }

struct Rec: Codable { var id: String; var n: Int; var when: Date }

@main struct Probe {
    static func main() async throws {
        let state = ProcessInfo.processInfo.environment["STATE_DIRECTORY"] ?? "/tmp"
        // Foundation JSON + files
        let r = Rec(id: UUID().uuidString, n: 42, when: Date())
        let data = try JSONEncoder().encode(r)
        let url = URL(fileURLWithPath: state).appendingPathComponent("probe.json")
        try data.write(to: url, options: .atomic)
        let back = try JSONDecoder().decode(Rec.self, from: Data(contentsOf: url))
        say("json+file ok \(back.n) in \(state)")
        // Regex
        guard try Regex("([a-z]+)-([0-9]+)").wholeMatch(in: "abc-123") != nil else { say("FAIL regex"); exit(1) }
        say("regex ok")
        // Concurrency
        let sum = await withTaskGroup(of: Int.self) { g in
            for i in 0..<16 { g.addTask { try? await Task.sleep(nanoseconds: 1_000_000); return i } }
            var s = 0; for await v in g { s += v }; return s
        }
        say("task group ok \(sum)")
        // Dispatch + threads
        let sem = DispatchSemaphore(value: 0)
        DispatchQueue.global().async { sem.signal() }
        sem.wait()
        let t = Thread { sem.signal() }; t.start(); sem.wait()
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + .milliseconds(5)); timer.setEventHandler { sem.signal() }; timer.resume(); sem.wait()
        say("dispatch+thread ok")
        // randomness, users, clock
        var g = SystemRandomNumberGenerator(); _ = g.next()
        var pw = passwd(); var buf = [CChar](repeating: 0, count: 4096); var res: UnsafeMutablePointer<passwd>? = nil
        getpwuid_r(getuid(), &pw, &buf, buf.count, &res)
        guard res != nil else { say("FAIL getpwuid_r(\(getuid()))"); exit(1) }
        say("random+getpwuid ok uid=\(getuid()) name=\(res != nil ? String(cString: pw.pw_name) : "?")")
        // dlopen a plugin the way the daemon does
        for p in CommandLine.arguments.dropFirst() {
            let fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { say("FAIL open \(p): errno \(errno)"); exit(1) }
            var st = stat(); fstat(fd, &st)
            guard dlopen("/proc/self/fd/\(fd)", RTLD_NOW | RTLD_LOCAL) != nil else {
                say("FAIL dlopen \(p): \(String(cString: dlerror()))"); exit(1)
            }
            say("dlopen ok \(p) owner=\(st.st_uid)")
        }
        // spawn a program (the command action)
        let proc = Process()
        proc.executableURL = URL(fileURLWithPath: "/usr/libexec/flowd")
        proc.arguments = ["--version"]
        let pipe = Pipe(); proc.standardOutput = pipe
        do {
            try proc.run()
            proc.waitUntilExit()
            guard proc.terminationStatus == 0 else { say("FAIL /usr/libexec/flowd --version exited \(proc.terminationStatus)"); exit(1) }
            say("spawn of /usr/libexec/flowd ok")
        } catch { say("FAIL spawn of /usr/libexec/flowd: \(error)"); exit(1) }
        let p2 = Process(); p2.executableURL = URL(fileURLWithPath: "/usr/bin/true")
        // NoExecPaths=/: nothing outside flowd's own paths and the libraries may run.
        do { try p2.run(); p2.waitUntilExit(); say("FAIL /usr/bin/true could be executed"); exit(1) }
        catch { say("spawn of /usr/bin/true refused, as it should be") }
        // The network (webhook) is closed without the drop-in: the call must fail, not crash.
        guard let target = URL(string: "http://127.0.0.1:9/") else { exit(1) }
        let req = URLRequest(url: target, timeoutInterval: 3)
        do { _ = try await URLSession.shared.data(for: req); say("FAIL the network is reachable"); exit(1) }
        catch { say("network closed, the request failed cleanly: \(error.localizedDescription)") }
        say("ALL DONE")
    }
}
