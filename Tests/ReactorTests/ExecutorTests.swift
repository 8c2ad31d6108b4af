import Reactor
import Testing
import TestSupport

/// An actor whose jobs run on the loop thread.
actor LoopPinned {
    let loop: EventLoop
    private(set) var calls = 0

    init(loop: EventLoop) {
        self.loop = loop
    }

    nonisolated var unownedExecutor: UnownedSerialExecutor {
        loop.executor.asUnownedSerialExecutor()
    }

    func touch() -> Bool {
        calls += 1
        return loop.inEventLoop
    }

    /// A task started here inherits the actor's isolation, so its body runs
    /// on the loop thread too.
    func childTaskRunsOnLoop() async -> Bool {
        await Task { self.loop.inEventLoop && self.touch() }.value
    }

    func callsSoFar() -> Int { calls }
}

@Suite("LoopExecutor")
struct ExecutorTests {
    @Test("an actor pinned to the loop runs its methods on the loop thread")
    func actorRunsOnLoop() async throws {
        let thread = try EventLoopThread()
        let actor = LoopPinned(loop: thread.loop)
        #expect(await actor.touch())
        #expect(await actor.childTaskRunsOnLoop())
        #expect(await actor.callsSoFar() == 2)
    }

    @Test("loop callbacks can enter the actor with assumeIsolated")
    func assumeIsolatedInCallback() async throws {
        let thread = try EventLoopThread()
        let actor = LoopPinned(loop: thread.loop)
        let result = Mailbox<Bool>()
        thread.loop.execute {
            let onLoop = actor.assumeIsolated { $0.touch() }
            result.put(onLoop)
        }
        thread.sync {
            thread.loop.schedule(after: .milliseconds(1)) {
                result.put(actor.assumeIsolated { $0.touch() })
            }
        }
        #expect(result.take() == true)
        #expect(result.take() == true)
        #expect(await actor.callsSoFar() == 2)
    }

    @Test("many concurrent callers are serialized on the loop")
    func serialized() async throws {
        let thread = try EventLoopThread()
        let actor = LoopPinned(loop: thread.loop)
        let allOnLoop = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<200 { group.addTask { await actor.touch() } }
            return await group.reduce(true) { $0 && $1 }
        }
        #expect(allOnLoop)
        #expect(await actor.callsSoFar() == 200)
    }
}
