import Foundation
import Logging
import Testing
import TestSupport

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

/// flowd-like fields and ids for the journal tests (the daemon's own are
/// FlowDaemon's).
extension LogField {
    static let session = LogField(constant: "FLOWD_SESSION")
    static let flow = LogField(constant: "FLOWD_FLOW")
    static let plugin = LogField(constant: "FLOWD_PLUGIN")
}

extension MessageID {
    static let submitFailed = MessageID(constant: "3550d87f29a447688ec07bdacf7f7164")
    static let daemonStarted = MessageID(constant: "8f5ff471507e4dcda52d69e21fadea88")
}

/// A socket pair whose read end the test reads with `readAvailable()`.
final class CapturePipe {
    let readEnd: FileDescriptor
    let writeEnd: FileDescriptor

    init() throws {
        (readEnd, writeEnd) = try FileDescriptor.socketPair()
        try readEnd.setNonBlocking()
    }

    /// Whatever has been written so far (non-blocking).
    func readAvailable() -> String {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while let count = try? readEnd.read(into: &buffer), count > 0 { result += buffer[0..<count] }
        return String(decoding: result, as: UTF8.self)
    }
}

/// Everything the child wrote to its descriptor 3, read to end of file.
func readAll(_ fd: FileDescriptor) throws -> [String] {
    let bytes = try fd.readToEnd(limit: 1 << 20, path: "the child's descriptor 3")
    return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
}

/// Writes `line` and a newline to descriptor 3 (the parent's pipe).
func writeToParent(_ line: String) {
    try? FileDescriptor.writeAll(3, Array((line + "\n").utf8))
}
