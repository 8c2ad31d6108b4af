import Glibc
@testable import Reactor
import Testing
import TestSupport

/// A pipe whose ends the test closes on deinit.
final class Pipe: @unchecked Sendable {
    let readEnd: Int32
    let writeEnd: Int32

    init() throws {
        var fds: [Int32] = [-1, -1]
        try #require(pipe(&fds) == 0)
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    func write(_ byte: UInt8 = 1) {
        var byte = byte
        _ = Glibc.write(writeEnd, &byte, 1)
    }

    func readByte() -> UInt8? {
        var byte: UInt8 = 0
        return Glibc.read(readEnd, &byte, 1) == 1 ? byte : nil
    }
}

@Suite("EventLoop")
struct EventLoopTests {
    @Test("execute from many threads runs every job once, on the loop thread")
    func executeFromOtherThreads() throws {
        let thread = try EventLoopThread()
        let loop = thread.loop
        let perThread = 500
        let senders = 4
        let count = Locked(0)
        let offThread = Locked(0)
        let done = Latch(count: senders * perThread)
        let threads = try (0..<senders).map { _ in try EventLoopThread(name: "sender") }
        for sender in threads {
            sender.loop.execute {
                for _ in 0..<perThread {
                    loop.execute {
                        if !loop.inEventLoop { offThread.withLock { $0 += 1 } }
                        count.withLock { $0 += 1 }
                        done.countDown()
                    }
                }
            }
        }
        #expect(done.wait())
        #expect(count.value == senders * perThread)
        #expect(offThread.value == 0)
        #expect(!loop.inEventLoop)
    }

    @Test("jobs run in the order they were queued, including jobs queued by jobs")
    func executeOrder() throws {
        let thread = try EventLoopThread()
        let loop = thread.loop
        let order = Locked<[Int]>([])
        let done = Latch()
        loop.execute {
            order.withLock { $0.append(1) }
            loop.execute {
                order.withLock { $0.append(3) }
                done.countDown()
            }
            order.withLock { $0.append(2) }
        }
        #expect(done.wait())
        #expect(order.value == [1, 2, 3])
    }

    @Test("a read watch fires when data arrives, and not while disabled")
    func readWatch() throws {
        let thread = try EventLoopThread()
        let loop = thread.loop
        let pipe = try Pipe()
        let received = Mailbox<UInt8>()
        let handle = try thread.sync { () throws(ReactorError) -> WatchHandle in
            try loop.watch(fd: pipe.readEnd, events: .read) { events in
                #expect(events.contains(.read))
                if let byte = pipe.readByte() { received.put(byte) }
            }
        }
        pipe.write(7)
        #expect(received.take() == 7)

        // Disable, write, then let two full loop rounds pass (each job queues the
        // next, and every round waits on epoll): the handler must not run.
        let checked = Latch()
        let calledWhileDisabled = Locked(false)
        loop.execute {
            try? handle.disable()
            #expect(!handle.isEnabled)
            pipe.write(8)
            loop.execute {
                loop.execute {
                    calledWhileDisabled.withLock { $0 = !received.snapshot.filter { $0 == 8 }.isEmpty }
                    try? handle.enable()
                    checked.countDown()
                }
            }
        }
        #expect(checked.wait())
        #expect(calledWhileDisabled.value == false)
        #expect(received.take() == 8)  // delivered once enabled again

        thread.sync { handle.cancel() }
        #expect(thread.sync { handle.isActive } == false)
    }

    @Test("read and write watches share one descriptor")
    func sharedDescriptor() throws {
        let thread = try EventLoopThread()
        let loop = thread.loop
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { fds.forEach { close($0) } }
        let fd = fds[0]
        let peer = fds[1]
        let seen = Mailbox<String>()
        let (reader, writer) = try thread.sync { () throws(ReactorError) -> (WatchHandle, WatchHandle) in
            let reader = try loop.watch(fd: fd, events: .read) { events in
                var byte: UInt8 = 0
                if read(fd, &byte, 1) == 1 { seen.put("read \(byte) \(events.contains(.write))") }
            }
            let writer = try loop.watch(fd: fd, events: .write) { _ in seen.put("writable") }
            return (reader, writer)
        }
        #expect(seen.take() == "writable")
        thread.sync { writer.cancel() }
        var byte: UInt8 = 42
        #expect(write(peer, &byte, 1) == 1)
        // Drain until the read arrives: "writable" may have been reported a few
        // more times before the cancel ran.
        var message: String?
        repeat { message = seen.take() } while message == "writable"
        #expect(message == "read 42 false")
        #expect(thread.sync { reader.isActive && !writer.isActive })
    }

    @Test("setEvents changes what a watch asks for")
    func changeEvents() throws {
        let thread = try EventLoopThread()
        let loop = thread.loop
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { fds.forEach { close($0) } }
        let seen = Mailbox<IOEvents>()
        let fd = fds[0]
        let handle = try thread.sync { () throws(ReactorError) -> WatchHandle in
            try loop.watch(fd: fd, events: .read) { events in seen.put(events) }
        }
        try thread.sync { () throws(ReactorError) in
            try handle.setEvents(.write)
        }
        #expect(seen.take() == .write)
        #expect(thread.sync { handle.events } == .write)
        thread.sync { handle.cancel() }
    }

    @Test("a hang-up is reported to an enabled watch")
    func hangUp() throws {
        let thread = try EventLoopThread()
        let loop = thread.loop
        let pipe = try Pipe()
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { close(fds[0]) }
        let seen = Mailbox<IOEvents>()
        let fd = fds[0]
        let handle = try thread.sync { () throws(ReactorError) -> WatchHandle in
            try loop.watch(fd: fd, events: .read) { events in seen.put(events) }
        }
        close(fds[1])
        let events = try #require(seen.take())
        #expect(events.contains(.hangUp) || events.contains(.read))
        thread.sync { handle.cancel() }
        _ = pipe
    }

    @Test("watching a regular file or a bad descriptor throws")
    func watchErrors() throws {
        let loop = try EventLoop()
        let directory = try TemporaryDirectory()
        let path = try directory.write("plain", "x")
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        #expect(throws: ReactorError.systemCall("epoll_ctl(ADD, fd \(fd))", .notPermitted)) {
            try loop.watch(fd: fd, events: .read) { _ in }
        }
        #expect(throws: ReactorError.self) { try loop.watch(fd: -1, events: .read) { _ in } }
        #expect(throws: ReactorError.self) { try loop.watch(fd: 9999, events: .read) { _ in } }
    }

    @Test("stop() from another thread ends run(), and the loop can run again")
    func stopAndRestart() throws {
        let loop = try EventLoop()
        for round in 0..<2 {
            let ran = Latch()
            let runner = try EventLoopThread(name: "runner")
            runner.loop.execute {
                loop.execute { ran.countDown() }
                try? loop.run()
            }
            #expect(ran.wait(), "round \(round)")
            loop.stop()
            runner.stop()  // joins only after the inner run() returned
            #expect(!loop.isRunning)
        }
    }
}

@Suite("EventLoop internals")
struct EventLoopInternalTests {
    @Test("jobs queued on the loop thread need no eventfd write; from elsewhere one per batch at most")
    func cheapLocalPath() throws {
        let thread = try EventLoopThread()
        let loop = thread.loop
        let done = Latch()
        let counts = Locked<(Int, Int)>((0, 0))
        loop.execute {
            let before = loop.wakeUpsWritten
            for _ in 0..<1000 { loop.execute {} }
            loop.execute {
                counts.withLock { $0 = (before, loop.wakeUpsWritten) }
                done.countDown()
            }
        }
        #expect(done.wait())
        #expect(counts.value.0 == counts.value.1, "no wake-up written from the loop thread")
        let before = loop.wakeUpsWritten
        let remote = Latch(count: 100)
        for _ in 0..<100 { loop.execute { remote.countDown() } }
        #expect(remote.wait())
        let written = loop.wakeUpsWritten - before
        #expect(written >= 1 && written <= 100)
    }
}
