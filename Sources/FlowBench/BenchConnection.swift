import FlowClient
import Reactor
import Synchronization

/// One connection to flowd for the benchmark: a ``FlowClient`` on an event
/// loop thread of its own, so that several connections call in parallel as
/// separate clients would. The measured calls run on that loop, isolated
/// to the client (``run(_:)``), so the client's cost is the same for the
/// Ping floor and for the calls compared with it.
final class BenchConnection: Sendable {
    let client: FlowClient
    private let thread: EventLoopThread
    private let closed = Atomic<Bool>(false)

    init(address: String) throws(BenchError) {
        do {
            thread = try EventLoopThread(name: "bench-client")
        } catch {
            throw .setup("cannot start a client loop thread: \(error)")
        }
        do {
            client = try FlowClient(FlowClient.Configuration(bus: .address(address)), loop: thread.loop)
        } catch {
            throw .call("cannot make a client: \(error.message)")
        }
    }

    deinit {
        close()
    }

    /// Runs `body` on the connection's loop, isolated to the client, and
    /// blocks until it ends.
    func run<T: Sendable>(_ body: @escaping @Sendable (isolated FlowClient) async throws(BenchError) -> T) throws(BenchError) -> T {
        let client = self.client
        return try Blocking.run { () async throws(BenchError) -> T in try await client.perform(body) }
    }

    /// One `Peer.Ping` to flowd.
    func ping() throws(BenchError) {
        try run { client async throws(BenchError) in
            do throws(FlowClientError) { try await client.ping() } catch { throw BenchError(error, "Ping") }
        }
    }

    /// Closes the connection and stops its loop thread. Once.
    func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let client = self.client
        Blocking.run { await client.close() }
        thread.stop()
    }
}

extension BenchError {
    /// A failed call of `what`.
    init(_ error: FlowClientError, _ what: String) {
        self = .call("\(what): \(error.description)")
    }
}
