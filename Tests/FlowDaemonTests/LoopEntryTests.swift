@testable import FlowDaemon
import Logging
import Reactor
import Testing

/// `FlowService.assumeIsolatedOnLoop` checks the loop's thread itself
/// instead of asking the concurrency runtime (docs/performance.md, the
/// eleventh round): on a real `EventLoop`, it enters on the loop's thread
/// and traps anywhere else, as `assumeIsolated` does.
@Suite("Entering the service from the loop")
struct LoopEntryTests {
    /// The harness's store, flows and plugins behind a service on `loop`.
    private static func service(on loop: any EventLoopProtocol, _ harness: ServiceHarness) throws -> FlowService {
        try FlowService(
            loop: loop, store: harness.store, configuration: harness.configuration, plugins: harness.plugins,
            capabilities: .any, logger: Logger(identifier: "flowd-test", minimumLevel: .debug, backend: harness.log),
            clock: harness.clock)
    }

    @Test("a callback on the loop's thread enters the service, and sees its state")
    func entersOnTheLoop() throws {
        let harness = try ServiceHarness()
        let thread = try EventLoopThread()
        let service = try Self.service(on: thread.loop, harness)
        let flows = thread.sync { service.assumeIsolatedOnLoop { $0.status.flows } }
        #expect(flows > 0)
        #expect(flows == harness.act { $0.status.flows })
    }

    @Test("entering off the loop's thread traps")
    func trapsOffTheLoop() async {
        await #expect(processExitsWith: .failure) {
            let harness = try ServiceHarness()
            let loop = try EventLoop()  // not running: no thread is its own
            let service = try Self.service(on: loop, harness)
            _ = service.assumeIsolatedOnLoop { $0.status.flows }
        }
    }
}
