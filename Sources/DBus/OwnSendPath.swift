import FlowdSystem
import Logging
import Reactor

/// flowd's own replies and signals on their way to the connection's socket,
/// written there without libdbus (docs/performance.md, "the fourth round").
///
/// libdbus would load each of these messages again (`dbus_message_demarshal`
/// validates every string and variant: 113 k instructions for a `GetStep`
/// reply) and write each with its own `sendmsg`. Here the bytes of a whole
/// dispatch round (a reply and the `PropertiesChanged` its handler emitted)
/// queue up and leave in one `send(2)` when the round ends.
///
/// The connection's order holds, never interleaving two messages' bytes:
/// - own bytes are written only while libdbus holds nothing unwritten
///   (`dbus_connection_has_messages_to_send`), since what it holds was sent
///   before them;
/// - a libdbus send (a call awaiting its reply, a message it built) waits
///   in ``waiting`` behind the own bytes queued before it, and runs once they
///   are written: libdbus then writes it at once, or queues it, which again
///   holds back the own bytes behind it;
/// - while own bytes wait (the bus reads slowly: `EAGAIN`, or a partial
///   write), the connection dispatches nothing, because libdbus answers some
///   calls itself (`org.freedesktop.DBus.Peer`, unknown methods) and would
///   write those between; a write watch on the socket resumes both. The loop
///   never blocks.
///
/// The messages carry no file descriptors (a message with one is built and
/// sent by libdbus) and no credentials (those travel once, during the
/// authentication), so a plain `send(2)` is all they need; the
/// authentication libdbus negotiates with a bus (`EXTERNAL`) encodes nothing
/// after it. Loop thread only.
final class OutgoingQueue {
    /// Whole messages, in order; the first ``written`` bytes are sent.
    var bytes: [UInt8] = []
    var written = 0
    /// libdbus sends waiting for the own bytes before them: each runs once
    /// `bytes[..<at]` is written.
    var waiting: [(at: Int, send: () -> Void)] = []
    /// File descriptors of messages libdbus built, on a connection flowd
    /// writes itself: each goes with the byte at `at` (`SCM_RIGHTS`).
    var fds: [(at: Int, fds: [UnixFD])] = []
    /// The socket, when the own path is used (attached to a loop).
    var socket: Int32?
    var writeWatch: WatchHandle?
    var writeWatchEnabled = false
    /// A flush is queued on the loop.
    var flushScheduled = false
    /// A dispatch round runs: it writes the queue when it ends.
    var dispatching = false
    /// Dispatching stopped while own bytes waited: resume it once written.
    var dispatchHeld = false
    /// `send(2)` calls made, and how often the socket took less than offered.
    var sendCalls = 0
    var socketFull = 0

    /// Nothing queued, nothing waiting.
    var isEmpty: Bool { written == bytes.count && waiting.isEmpty }
}

extension ConnectionCore {
    /// Sends one of flowd's own messages: on the loop thread of an attached
    /// connection, through the own send path (written when the dispatch round
    /// ends, or in a loop job of its own); elsewhere libdbus loads and sends it.
    func send(_ message: WireMessage) {
        guard let loop else { return sendThroughLibDBus(message) }
        guard loop.inEventLoop else {
            loop.execute { [weak self] in self?.send(message) }
            return
        }
        guard !closed else { return }
        guard outgoing.socket != nil else { return sendThroughLibDBus(message) }
        message.appendHeader(to: &outgoing.bytes)
        message.body.withUnsafeBytes { outgoing.bytes.append(contentsOf: $0) }
        scheduleOutgoingFlush()
    }

    private func sendThroughLibDBus(_ message: WireMessage) {
        do {
            sendNow(try message.loaded())
        } catch {
            logger.log(.error, "libdbus refused a message flowd built: \(error.message)")
        }
    }

    /// Runs `send` (a libdbus send) now when no own bytes wait, or else once
    /// those queued before it are written. Loop thread, or not attached.
    func afterOwnBytes(_ send: @escaping () -> Void) {
        if outgoing.isEmpty {
            send()
        } else {
            outgoing.waiting.append((outgoing.bytes.count, send))
        }
    }

    /// Queues a message libdbus built (its bytes and descriptors) on a
    /// connection flowd writes itself. Outside a dispatch round it is
    /// written at once, as libdbus wrote it (a call flowd makes leaves before
    /// the loop turns).
    func enqueue(_ bytes: [UInt8], fds: [UnixFD]) {
        if !fds.isEmpty { outgoing.fds.append((outgoing.bytes.count, fds)) }
        outgoing.bytes.append(contentsOf: bytes)
        if outgoing.dispatching {
            scheduleOutgoingFlush()
        } else {
            flushOutgoing()
        }
    }

    private func scheduleOutgoingFlush() {
        guard !outgoing.dispatching, !outgoing.flushScheduled, let loop else { return }
        outgoing.flushScheduled = true
        loop.execute { [weak self] in
            guard let self else { return }
            outgoing.flushScheduled = false
            flushOutgoing()
        }
    }

    /// Writes what the socket takes now, in order, running the libdbus sends
    /// that come due; arms the write watch for the rest.
    func flushOutgoing() {
        let queue = outgoing
        while true {
            if let first = queue.waiting.first, first.at <= queue.written {
                queue.waiting.removeFirst()
                first.send()
                continue
            }
            var end = queue.waiting.first?.at ?? queue.bytes.count
            // Descriptors go with the first byte of their message, and no
            // write reaches past the next message that carries some.
            var descriptors: [Int32] = []
            if let first = queue.fds.first {
                if first.at == queue.written {
                    descriptors = first.fds.map(\.fileDescriptor)
                    if queue.fds.count > 1 { end = min(end, queue.fds[1].at) }
                } else {
                    end = min(end, first.at)
                }
            }
            if queue.written == end { break }  // then nothing waits either
            guard let fd = queue.socket else {
                queue.written = end
                continue
            }
            // What libdbus holds was sent before these bytes.
            if let raw, LibDBus.hasMessagesToSend(raw) { return armWriteWatch() }
            queue.sendCalls += 1
            let sent: Result<Int, SystemCallError> = queue.bytes.withUnsafeBytes { all in
                do throws(SystemCallError) {
                    return .success(try FileDescriptor.sendSome(
                        fd, UnsafeRawBufferPointer(rebasing: all[queue.written..<end]), fds: descriptors))
                } catch {
                    return .failure(error)
                }
            }
            switch sent {
            case .success(let count):
                if !descriptors.isEmpty { queue.fds.removeFirst() }
                queue.written += count
                if queue.written < end { queue.socketFull += 1 }  // a partial write
            case .failure(let error) where error.errno == .wouldBlock:
                queue.socketFull += 1
                return armWriteWatch()
            case .failure(let error):
                // The bus is gone: libdbus sees it on the socket as well and
                // disconnects; what it could not take is dropped.
                logger.log(.warning, "cannot write to the bus: \(error.description)")
                if !descriptors.isEmpty { queue.fds.removeFirst() }
                queue.written = end
            }
        }
        if queue.bytes.capacity > 1 << 16 {
            queue.bytes = []
        } else {
            queue.bytes.removeAll(keepingCapacity: true)
        }
        queue.written = 0
        queue.fds = []
        if queue.writeWatchEnabled {
            queue.writeWatchEnabled = false
            try? queue.writeWatch?.disable()
        }
        if queue.dispatchHeld {
            queue.dispatchHeld = false
            resumeReading()
            scheduleDispatchIfNeeded()
        }
    }

    private func armWriteWatch() {
        outgoing.writeWatchEnabled = true
        if let watch = outgoing.writeWatch {
            do {
                try watch.enable()
            } catch {
                logger.log(.error, "cannot watch the D-Bus socket for writing: \(error.message)")
            }
            return
        }
        guard let loop, let fd = outgoing.socket else { return }
        do {
            outgoing.writeWatch = try loop.watch(fd: fd, events: .write) { [weak self] seen in
                guard let self else { return }
                if seen.contains(.hangUp) || seen.contains(.error) {
                    dropOutgoing()
                    // The dispatch learns that the connection ended.
                    if outgoing.dispatchHeld {
                        outgoing.dispatchHeld = false
                        scheduleDispatchIfNeeded()
                    }
                } else {
                    flushOutgoing()
                }
            }
        } catch {
            logger.log(.error, "cannot watch the D-Bus socket for writing: \(error.message)")
        }
    }

    /// Gives up on the own bytes (the connection is closing or gone); the
    /// libdbus sends waiting behind them still run, so that a call awaiting
    /// its reply learns that it failed.
    func dropOutgoing() {
        let waiting = outgoing.waiting
        outgoing.waiting = []
        outgoing.fds = []
        outgoing.bytes = []
        outgoing.written = 0
        outgoing.writeWatch?.cancel()
        outgoing.writeWatch = nil
        outgoing.writeWatchEnabled = false
        for entry in waiting { entry.send() }
    }

    /// Writes every own byte, waiting for the socket (for the blocking calls:
    /// `Connection.call`, `flush`). Loop thread.
    func writeOutgoingBlocking() {
        while !outgoing.isEmpty {
            flushOutgoing()
            guard !outgoing.isEmpty, let fd = outgoing.socket, !closed else { break }
            if let raw, LibDBus.hasMessagesToSend(raw) {
                LibDBus.flush(raw)
            } else if (try? Poll.wait([(fd, .writable)], timeout: .seconds(1))) == nil {
                break
            }
        }
        if !outgoing.isEmpty { dropOutgoing() }
    }
}
