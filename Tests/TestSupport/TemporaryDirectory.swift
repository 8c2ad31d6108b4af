import Foundation

/// A fresh directory under `/tmp`, deleted with its contents on deinit.
package final class TemporaryDirectory: @unchecked Sendable {
    /// The absolute path of the directory.
    package let path: String

    /// Creates `/tmp/<prefix>.XXXXXX` (mode 0700) with `mkdtemp`.
    package init(prefix: String = "flowd-test") throws {
        var template = Array("/tmp/\(prefix).XXXXXX".utf8CString)
        guard let created = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw TestSupportError("mkdtemp failed: \(String(cString: strerror(errno)))")
        }
        path = String(cString: created)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The path of `name` inside the directory.
    package func file(_ name: String) -> String {
        path + "/" + name
    }

    /// Writes `contents` to `name` inside the directory and returns its path.
    @discardableResult
    package func write(_ name: String, _ contents: String) throws -> String {
        let target = file(name)
        try contents.write(toFile: target, atomically: true, encoding: .utf8)
        return target
    }
}

/// A failure in the test support itself (not in the code under test).
package struct TestSupportError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
