import Foundation
import Glibc
import Synchronization
import Testing

@testable import Systemd

/// A fresh directory under the system temporary directory, removed by `cleanup()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        // Short: a unix socket path must fit in 108 bytes.
        path = "/tmp/sdt-\(UUID().uuidString.prefix(13))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { "\(path)/\(name)" }

    func cleanup() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

struct SystemCallFailure: Error, CustomStringConvertible {
    var call: String
    var code: Int32
    var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
}

/// A bound unix datagram socket standing in for systemd's notification socket.
final class DatagramServer {
    let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemCallFailure(call: "socket", code: errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw SystemCallFailure(call: "bind (path too long)", code: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else {
            let code = errno
            close(fd)
            throw SystemCallFailure(call: "bind", code: code)
        }
    }

    deinit {
        close(fd)
    }

    /// The next datagram, or nil when none arrives before `deadline`.
    func receive(until deadline: ContinuousClock.Instant) -> String? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 200) >= 0 else { return nil }
            if poller.revents == 0 { continue }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 { return nil }
            return String(decoding: buffer[0..<n], as: UTF8.self)
        }
        return nil
    }
}

/// A pipe whose read end the test reads with `readAvailable()`.
final class Pipe {
    let readEnd: Int32
    let writeEnd: Int32

    init() throws {
        var fds: [Int32] = [0, 0]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { throw SystemCallFailure(call: "socketpair", code: errno) }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Whatever has been written so far (non-blocking).
    func readAvailable() -> String {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(readEnd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n <= 0 { break }
            result += buffer[0..<n]
        }
        return String(decoding: result, as: UTF8.self)
    }
}

/// Waits for `pid` and returns its wait status.
func waitForExit(_ pid: pid_t) -> Int32 {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return status
}

/// Everything the child wrote to its descriptor 3, read to end of file.
func readAll(_ fd: Int32) -> [String] {
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { break }
        bytes += buffer[0..<n]
    }
    close(fd)
    return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
}

/// Writes `line` and a newline to descriptor 3 (the parent's pipe).
func writeToParent(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(3, $0.baseAddress, $0.count) }
}

/// A backend that keeps what it is given, for tests.
final class CapturingBackend: LogBackend {
    private let stored = Mutex<[LogRecord]>([])

    func write(_ record: LogRecord) {
        stored.withLock { $0.append(record) }
    }

    var records: [LogRecord] {
        stored.withLock { $0 }
    }
}
