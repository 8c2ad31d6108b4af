// A small HTTP/1.1 server on 127.0.0.1 for the webhook tests: it accepts
// connections on a thread of its own, reads one request per connection, records
// it, and answers what the test told it to.
import Foundation
import Glibc

/// One request the server received.
package struct ReceivedRequest: Sendable {
    package var method: String
    package var path: String
    /// Header names lowercased.
    package var headers: [String: String]
    package var body: Data
}

/// What the server does with a request.
package enum ServerReply: Sendable {
    /// Answer with this status and body (JSON content type).
    case respond(status: Int, body: String)
    /// Read the request and never answer (until the server stops).
    case hang
}

/// A loopback HTTP server that lives as long as the object.
package final class LoopbackHTTPServer: @unchecked Sendable {
    // @unchecked: `requests` and `reply` are guarded by `lock`; the socket is
    // only closed once, in `stop`.
    private let listener: Int32
    package let port: UInt16
    private let lock = NSLock()
    private var received: [ReceivedRequest] = []
    private var reply: ServerReply
    private var stopped = false

    /// Starts listening on an ephemeral port of 127.0.0.1.
    package init(reply: ServerReply) throws {
        self.reply = reply
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestSetupError("socket: errno \(errno)") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw TestSetupError("bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in self.acceptLoop() }
    }

    deinit {
        stop()
    }

    /// `http://127.0.0.1:<port><path>`.
    package func url(_ path: String = "/hook") -> String { "http://127.0.0.1:\(port)\(path)" }

    /// The requests so far.
    package var requests: [ReceivedRequest] { lock.withLock { received } }

    /// Changes what later requests get.
    package func setReply(_ reply: ServerReply) { lock.withLock { self.reply = reply } }

    /// Stops accepting; hanging connections are closed.
    package func stop() {
        let first = lock.withLock {
            defer { stopped = true }
            return !stopped
        }
        if first {
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
        }
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    private func acceptLoop() {
        while !isStopped {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR { continue }
                return
            }
            Thread.detachNewThread { [self] in self.serve(connection) }
        }
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        guard let request = readRequest(fd) else { return }
        let reply = lock.withLock {
            received.append(request)
            return self.reply
        }
        switch reply {
        case .hang:
            while !isStopped { usleep(10_000) }
        case .respond(let status, let body):
            let bytes = Array(body.utf8)
            let head = "HTTP/1.1 \(status) Status\r\nContent-Type: application/json\r\nContent-Length: \(bytes.count)\r\nConnection: close\r\n\r\n"
            writeAll(fd, Array(head.utf8) + bytes)
        }
    }

    private func readRequest(_ fd: Int32) -> ReceivedRequest? {
        var data = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65536)
        var headerEnd: Int?
        while headerEnd == nil {
            let n = read(fd, &chunk, chunk.count)
            if n <= 0 { return nil }
            data += chunk[0..<n]
            headerEnd = findHeaderEnd(data)
        }
        guard let end = headerEnd else { return nil }
        let head = String(decoding: data[0..<end], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        var headers: [String: String] = [:]
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        var body = Array(data[(end + 4)...])
        while body.count < length {
            let n = read(fd, &chunk, chunk.count)
            if n <= 0 { break }
            body += chunk[0..<n]
        }
        return ReceivedRequest(
            method: requestLine.first.map(String.init) ?? "", path: requestLine.dropFirst().first.map(String.init) ?? "",
            headers: headers, body: Data(body.prefix(length)))
    }

    private func findHeaderEnd(_ data: [UInt8]) -> Int? {
        guard data.count >= 4 else { return nil }
        for i in 0...(data.count - 4) where data[i] == 13 && data[i + 1] == 10 && data[i + 2] == 13 && data[i + 3] == 10 {
            return i
        }
        return nil
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress.map { $0 + offset }, bytes.count - offset) }
            if n <= 0 { return }
            offset += n
        }
    }
}
