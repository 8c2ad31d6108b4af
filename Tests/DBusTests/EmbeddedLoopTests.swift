import DBus
import Glibc
import Reactor
import ReactorTesting
import Testing
import TestSupport

/// The libdbus watch/timeout plumbing, driven by hand on an EmbeddedEventLoop:
/// no thread, no real timers, every step visible.
@Suite("Connection on an EmbeddedEventLoop")
struct EmbeddedLoopTests {
    /// Blocks (poll(2), bounded) until `fd` is readable: waiting on a condition, not a clock.
    func waitReadable(_ fd: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 20_000) == 1
    }

    @Test("libdbus registers its socket, and a pending call's timeout runs on virtual time")
    func timeoutPlumbing() throws {
        let bus = try PrivateBus()
        let loop = EmbeddedEventLoop()
        let server = try Connection(.address(bus.address))
        let silent = try Connection(.address(bus.address))  // never reads: never replies
        try server.attach(to: loop)
        loop.runPendingJobs()
        let fd = try #require(loop.watchedDescriptors.first)
        #expect(loop.watchedDescriptors == [fd])
        #expect(loop.watchedEvents(fd: fd).contains(.read))
        #expect(loop.scheduledTimerCount == 0)

        let replies = Mailbox<Result<Message, DBusError>>()
        let call = Message.methodCall(destination: silent.uniqueName, path: "/", interface: "org.flowd.Any", member: "Hello")
        server.sendWithReply(call, timeout: .seconds(5)) { replies.put($0) }
        #expect(loop.scheduledTimerCount == 1, "libdbus added the call's timeout")
        #expect(loop.nextTimerDeadline == loop.now + .seconds(5))
        if loop.watchedEvents(fd: fd).contains(.write) { loop.fire(fd: fd, events: .write) }

        loop.advanceTime(by: .milliseconds(4999))
        #expect(replies.snapshot.isEmpty)
        loop.advanceTime(by: .milliseconds(1))
        let result = try #require(replies.take(timeout: .zero))
        #expect(throws: DBusError.self) { try result.get() }
        if case .failure(let error) = result { #expect(error.name == .noReply) }
        #expect(loop.scheduledTimerCount == 0, "the timeout was removed with the call")
        server.close()
        #expect(loop.watchedDescriptors.isEmpty, "closing removed the watches")
        silent.close()
    }

    @Test("a reply is read when the loop reports the socket readable, then dispatched by a queued job")
    func readPlumbing() throws {
        let bus = try PrivateBus()
        let loop = EmbeddedEventLoop()
        let server = try Connection(.address(bus.address))
        try server.attach(to: loop)
        loop.runPendingJobs()
        let fd = try #require(loop.watchedDescriptors.first)

        let replies = Mailbox<Result<Message, DBusError>>()
        let name = try #require(server.uniqueName)
        let call = Message.methodCall(destination: .bus, path: "/org/freedesktop/DBus", interface: .bus, member: "GetConnectionUnixUser")
        try call.append(.string(name.rawValue))
        server.sendWithReply(call) { replies.put($0) }
        if loop.watchedEvents(fd: fd).contains(.write) { loop.fire(fd: fd, events: .write) }
        #expect(replies.snapshot.isEmpty, "nothing happens until the loop reports readiness")

        // Other traffic (NameAcquired) may come first: report readiness until
        // the reply has been read and dispatched.
        var rounds = 0
        while replies.snapshot.isEmpty && rounds < 50 && waitReadable(fd) {
            #expect(loop.fire(fd: fd, events: .read) >= 1)
            rounds += 1
        }
        let result = try #require(replies.take(timeout: .zero))
        var args = try result.get().arguments()
        #expect(try args.next(UInt32.self) == getuid())
        #expect(loop.scheduledTimerCount == 0)
        server.close()
    }
}
