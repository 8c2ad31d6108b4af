import Reactor
import Testing
import TestSupport

@Suite("EventLoop signals")
struct SignalTests {
    /// The signal goes to the loop thread itself (`pthread_kill`): sending it to
    /// the whole test process could land on a test thread that does not block
    /// it, where SIGUSR1's default action ends the process.
    @Test("SIGUSR1 sent to the loop thread arrives through the signalfd")
    func signalArrives() throws {
        let thread = try EventLoopThread()
        let loop = thread.loop
        let received = Mailbox<(Signal, Bool)>()
        let handle = try thread.sync { () throws(ReactorError) -> SignalHandle in
            try loop.onSignals([.user1, .user2]) { signal in received.put((signal, loop.inEventLoop)) }
        }
        try thread.send(signal: .user1)
        let first = try #require(received.take())
        #expect(first.0 == .user1)
        #expect(first.1, "the handler runs on the loop thread")
        try thread.send(signal: .user2)
        #expect(received.take()?.0 == .user2)

        // After cancel the signal stays blocked (still consumed), handler not called.
        thread.sync { handle.cancel() }
        let fence = Mailbox<Signal>()
        try thread.sync { () throws(ReactorError) in
            try loop.onSignals([.user2]) { fence.put($0) }
        }
        try thread.send(signal: .user1)
        try thread.send(signal: .user2)
        #expect(fence.take() == .user2)
        #expect(received.snapshot.isEmpty, "the cancelled handler saw nothing more")
    }

    @Test("signals that cannot be handled are refused")
    func badSignals() throws {
        let loop = try EventLoop()
        #expect(throws: ReactorError.self) { try loop.onSignals([]) { _ in } }
        #expect(throws: ReactorError.self) { try loop.onSignals([.kill]) { _ in } }
        #expect(throws: ReactorError.self) { try loop.onSignals([Signal(rawValue: 0)]) { _ in } }
        #expect(throws: ReactorError.self) { try loop.onSignals([Signal(rawValue: 99)]) { _ in } }
    }
}
