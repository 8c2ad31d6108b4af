// The plugin thread pool on its own.
import Glibc
import PluginHost
import PluginTestSupport
import Synchronization
import Testing

@Suite("PluginExecutor")
struct ExecutorTests {
    @Test("work with an executor preference runs on the pool's named threads")
    func runsOnPoolThreads() async throws {
        let executor = PluginExecutor(maximumThreads: 2, threadName: "flowd-test-pool")
        let name = await Task.detached(executorPreference: executor) { () -> String in
            var buffer = [CChar](repeating: 0, count: 32)
            let fd = open("/proc/thread-self/comm", O_RDONLY)
            defer { close(fd) }
            let n = read(fd, &buffer, 31)
            return String(decoding: buffer.prefix(max(0, n)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }.value
        #expect(name.hasPrefix("flowd-test-pool"))
        #expect(executor.threadCounts.current >= 1)
    }

    @Test("the pool grows while threads are busy, up to its bound")
    func growsToBound() async throws {
        let executor = PluginExecutor(maximumThreads: 3)
        let state = SharedCounters()
        var tasks: [Task<Void, Never>] = []
        for _ in 0..<5 {
            tasks.append(Task.detached(executorPreference: executor) {
                state.running.add(1, ordering: .sequentiallyConsistent)
                while !state.release.load(ordering: .sequentiallyConsistent) { usleep(1000) }
            })
        }
        #expect(await waitUntil { state.running.load(ordering: .sequentiallyConsistent) == 3 })
        #expect(executor.threadCounts.current == 3)
        state.release.store(true, ordering: .sequentiallyConsistent)
        for t in tasks { await t.value }
        #expect(state.running.load(ordering: .sequentiallyConsistent) == 5)
        #expect(executor.threadCounts.peak == 3)
    }

    @Test("idle threads go away after the idle timeout")
    func idleThreadsExit() async throws {
        let executor = PluginExecutor(maximumThreads: 4, idleTimeout: .milliseconds(50))
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask(executorPreference: executor) { usleep(20_000) }
            }
        }
        #expect(executor.threadCounts.peak >= 1)
        #expect(await waitUntil { executor.threadCounts.current == 0 })
    }
}

extension ExecutorTests {
    @Test("pool threads have an alternate signal stack, and take only fault signals, SIGABRT and SIGPROF")
    func threadSignalSetup() async throws {
        let executor = PluginExecutor(maximumThreads: 1, threadName: "flowd-test-sig")
        let (stackEnabled, blocked) = await Task.detached(executorPreference: executor) { () -> (Bool, sigset_t) in
            var stack = stack_t()
            sigaltstack(nil, &stack)
            var mask = sigset_t()
            pthread_sigmask(SIG_SETMASK, nil, &mask)
            return (stack.ss_flags & Int32(SS_DISABLE) == 0 && stack.ss_sp != nil, mask)
        }.value
        #expect(stackEnabled)
        var mask = blocked
        for signal in [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS, SIGABRT, SIGPROF] {
            #expect(sigismember(&mask, signal) == 0, "signal \(signal) is blocked")
        }
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGUSR1] {
            #expect(sigismember(&mask, signal) == 1, "signal \(signal) is not blocked")
        }
    }
}

/// Flags shared between a test and the work it starts.
final class SharedCounters: Sendable {
    let running = Atomic<Int>(0)
    let release = Atomic<Bool>(false)
}
