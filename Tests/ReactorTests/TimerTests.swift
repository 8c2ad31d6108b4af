import Reactor
import Testing
import TestSupport

/// Timer tests never measure time: they rely on deadline order only. A later
/// "fence" timer proves an earlier one did (or did not) fire before it.
@Suite("EventLoop timers")
struct TimerTests {
    @Test("timers fire in deadline order, not scheduling order")
    func order() throws {
        let thread = try EventLoopThread()
        let loop = thread.loop
        let fired = Mailbox<Int>()
        thread.sync {
            for (label, delay) in [(3, 30), (1, 10), (2, 20)] {
                loop.schedule(after: .milliseconds(delay)) { fired.put(label) }
            }
        }
        #expect([fired.take(), fired.take(), fired.take()] == [1, 2, 3])
    }

    @Test("a one-shot timer fires exactly once and then reports inactive")
    func oneShot() throws {
        let thread = try EventLoopThread()
        let loop = thread.loop
        let count = Locked(0)
        let fence = Latch()
        let timer = thread.sync { () -> TimerHandle in
            let timer = loop.schedule(after: .milliseconds(1)) { count.withLock { $0 += 1 } }
            loop.schedule(after: .milliseconds(40)) { fence.countDown() }
            return timer
        }
        #expect(fence.wait())
        #expect(count.value == 1)
        #expect(thread.sync { timer.isActive } == false)
    }

    @Test("a repeating timer fires until cancelled from its own handler")
    func repeating() throws {
        let thread = try EventLoopThread()
        let loop = thread.loop
        let count = Locked(0)
        let reachedThree = Latch()
        let box = Locked<TimerHandle?>(nil)
        thread.sync {
            let timer = loop.schedule(after: .milliseconds(1), repeating: .milliseconds(2)) {
                let now = count.withLock { value -> Int in
                    value += 1
                    return value
                }
                if now == 3 {
                    box.value?.cancel()
                    reachedThree.countDown()
                }
            }
            box.withLock { $0 = timer }
        }
        #expect(reachedThree.wait())
        // Three more intervals later, it has not fired again.
        let fence = Latch()
        thread.sync { loop.schedule(after: .milliseconds(10)) { fence.countDown() } }
        #expect(fence.wait())
        #expect(count.value == 3)
        #expect(thread.sync { box.value?.isActive } == false)
    }

    @Test("a cancelled timer never fires")
    func cancelBeforeFiring() throws {
        let thread = try EventLoopThread()
        let loop = thread.loop
        let fired = Locked(false)
        let fence = Latch()
        thread.sync {
            let timer = loop.schedule(after: .milliseconds(5)) { fired.withLock { $0 = true } }
            #expect(timer.isActive)
            timer.cancel()
            timer.cancel()  // idempotent
            #expect(!timer.isActive)
            loop.schedule(after: .milliseconds(30)) { fence.countDown() }
        }
        #expect(fence.wait())
        #expect(fired.value == false)
    }

    @Test("many cancelled timers do not disturb the live ones")
    func cancelMany() throws {
        let thread = try EventLoopThread()
        let loop = thread.loop
        let fired = Mailbox<Int>()
        thread.sync {
            for index in 0..<1000 {
                let timer = loop.schedule(after: .milliseconds(1 + index % 7)) { fired.put(-1) }
                timer.cancel()
            }
            loop.schedule(after: .milliseconds(3)) { fired.put(1) }
            loop.schedule(after: .milliseconds(5)) { fired.put(2) }
        }
        #expect(fired.take() == 1)
        #expect(fired.take() == 2)
        #expect(fired.snapshot.isEmpty, "no cancelled timer fired")
    }

    @Test("a zero delay fires on the next round")
    func zeroDelay() throws {
        let thread = try EventLoopThread()
        let fired = Latch()
        thread.sync { thread.loop.schedule(after: .zero) { fired.countDown() } }
        #expect(fired.wait())
    }
}
