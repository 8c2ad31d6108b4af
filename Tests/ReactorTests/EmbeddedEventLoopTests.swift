import Reactor
import ReactorTesting
import Testing

@Suite("EmbeddedEventLoop")
struct EmbeddedEventLoopTests {
    @Test("virtual time fires timers in order, repeating ones each interval")
    func timers() {
        let loop = EmbeddedEventLoop()
        let fired = FiredLog()
        loop.schedule(after: .seconds(2)) { fired.add("two") }
        let repeating = loop.schedule(after: .seconds(1), repeating: .seconds(1)) { fired.add("tick") }
        let cancelled = loop.schedule(after: .milliseconds(1500)) { fired.add("cancelled") }
        cancelled.cancel()
        #expect(loop.scheduledTimerCount == 2)
        #expect(loop.nextTimerDeadline == .seconds(1))

        loop.advanceTime(by: .milliseconds(999))
        #expect(fired.items.isEmpty)
        loop.advanceTime(by: .milliseconds(1))
        #expect(fired.items == ["tick"])
        loop.advanceTime(by: .seconds(2))
        // At t=2 "two" and the second tick tie: the one scheduled first wins.
        #expect(fired.items == ["tick", "two", "tick", "tick"])
        repeating.cancel()
        loop.advanceTime(by: .seconds(10))
        #expect(fired.items.count == 4)
        #expect(loop.now == .seconds(13))
    }

    @Test("fire() calls enabled watches with the events they asked for")
    func watches() throws {
        let loop = EmbeddedEventLoop()
        let fired = FiredLog()
        let reader = try loop.watch(fd: 5, events: .read) { fired.add("read \($0)") }
        let writer = try loop.watch(fd: 5, events: .write) { fired.add("write \($0)") }
        #expect(loop.watchedEvents(fd: 5) == [.read, .write])
        #expect(loop.fire(fd: 5, events: .read) == 1)
        try writer.disable()
        #expect(loop.watchedEvents(fd: 5) == .read)
        #expect(loop.fire(fd: 5, events: .write) == 0)
        #expect(loop.fire(fd: 5, events: .hangUp) == 1)
        reader.cancel()
        #expect(loop.fire(fd: 5, events: .read) == 0)
        #expect(fired.items == ["read [read]", "read [hangUp]"])
        writer.cancel()
        #expect(loop.watchedDescriptors.isEmpty)
    }

    @Test("execute queues work until runPendingJobs")
    func jobs() {
        let loop = EmbeddedEventLoop()
        let fired = FiredLog()
        loop.execute {
            fired.add("a")
            loop.execute { fired.add("c") }
        }
        loop.execute { fired.add("b") }
        #expect(fired.items.isEmpty)
        loop.runPendingJobs()
        #expect(fired.items == ["a", "b", "c"])
    }
}

/// A log of what fired; the embedded loop is single-threaded, the lock only
/// satisfies Sendable.
final class FiredLog: @unchecked Sendable {
    private(set) var items: [String] = []
    func add(_ item: String) { items.append(item) }
}
