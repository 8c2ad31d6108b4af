import Foundation
import Testing

/// "One C seam per module": only the files docs/architecture.md lists may
/// import a C module (Glibc or one of the package's own C modules). The list
/// is read from the doc itself, between the `c-seams` markers, so the doc and
/// this test cannot disagree.
@Suite("Architecture: the C seams")
struct CSeamTests {
    /// The C modules a Swift file may import only in a seam.
    static let cModules: Set<String> = [
        "Glibc", "SwiftGlibc", "Musl", "CDBus", "CSQLite", "CSystemd", "CFlowdSystem", "CPluginGuard", "CAdw",
    ]
    /// Product code: the package's modules, the shipped plugins and the FlowKit package.
    static let productTrees = ["Sources", "Plugins", "Packages/FlowKit/Sources"]

    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The allowed paths from docs/architecture.md: a file, or a directory
    /// (ending in `/`) for a whole module.
    static func allowedSeams() throws -> [String] {
        let doc = try String(contentsOf: root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        guard let start = doc.range(of: "<!-- c-seams -->"), let end = doc.range(of: "<!-- /c-seams -->"),
            start.upperBound < end.lowerBound
        else { return [] }
        return doc[start.upperBound..<end.lowerBound].split(separator: "\n").compactMap { line in
            guard line.hasPrefix("- `"), let close = line.dropFirst(3).firstIndex(of: "`") else { return nil }
            return String(line.dropFirst(3)[..<close])
        }
    }

    /// The C modules `source` imports, in any form of the import statement.
    static func cImports(in source: String) -> [String] {
        source.split(separator: "\n").compactMap { line in
            var words = line.split(separator: " ").map(String.init)
            while let first = words.first, first.hasPrefix("@") { words.removeFirst() }
            guard words.first == "import", words.count >= 2 else { return nil }
            let kinds: Set<String> = ["struct", "class", "enum", "protocol", "typealias", "func", "var", "let"]
            let path = kinds.contains(words[1]) && words.count >= 3 ? words[2] : words[1]
            let module = String(path.split(separator: ".").first ?? "")
            return cModules.contains(module) ? module : nil
        }
    }

    /// The files (relative paths) of `files` that import a C module but are not seams.
    static func violations(in files: [String: String], allowed: [String]) -> [String] {
        files.keys.sorted().filter { path in
            guard !cImports(in: files[path] ?? "").isEmpty else { return false }
            return !allowed.contains { $0.hasSuffix("/") ? path.hasPrefix($0) : path == $0 }
        }
    }

    /// Every Swift file of the product trees, by path relative to the root.
    static func productFiles() throws -> [String: String] {
        var files: [String: String] = [:]
        for tree in productTrees {
            let base = root.appendingPathComponent(tree)
            guard let walker = FileManager.default.enumerator(atPath: base.path) else { continue }
            for case let relative as String in walker where relative.hasSuffix(".swift") && !relative.contains(".build/") {
                let path = tree + "/" + relative
                files[path] = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
            }
        }
        return files
    }

    @Test("no product file outside the documented seams imports a C module")
    func onlyTheSeamsTalkToC() throws {
        let allowed = try Self.allowedSeams()
        try #require(!allowed.isEmpty, "docs/architecture.md has no c-seams list")
        let files = try Self.productFiles()
        try #require(files.count > 100, "the product files were not found under \(Self.root.path)")
        let bad = Self.violations(in: files, allowed: allowed)
        #expect(bad.isEmpty, "C imports outside the seams of docs/architecture.md: \(bad)")
    }

    @Test("every documented seam exists and talks to C")
    func theListHasNoStaleEntries() throws {
        let files = try Self.productFiles()
        for seam in try Self.allowedSeams() {
            let matching = files.filter { seam.hasSuffix("/") ? $0.key.hasPrefix(seam) : $0.key == seam }
            #expect(!matching.isEmpty, "\(seam) is listed as a seam but does not exist")
            #expect(matching.values.contains { !Self.cImports(in: $0).isEmpty }, "\(seam) is listed but imports no C")
        }
    }

    @Test("the check sees every spelling of a C import, and nothing else")
    func theCheckCanFail() {
        let allowed = ["Sources/FlowdSystem/", "Sources/DBus/LibDBus.swift"]
        let files = [
            "Sources/FlowdSystem/Errno.swift": "import Glibc\n",
            "Sources/DBus/LibDBus.swift": "import CDBus\n",
            "Sources/DBus/Message.swift": "import Foundation\n@preconcurrency import CDBus\n",
            "Sources/FlowStore/A.swift": "import struct Glibc.stat\n",
            "Sources/FlowStore/B.swift": "@_exported import CSQLite\n",
            "Plugins/Spool/C.swift": "  import Glibc\n",
            "Plugins/Spool/D.swift": "// import Glibc\nlet importGlibc = 1\nimport FlowdSystem\n",
            "Sources/FlowdSystemX/E.swift": "import CFlowdSystem\n",
        ]
        #expect(Self.violations(in: files, allowed: allowed) == [
            "Plugins/Spool/C.swift", "Sources/DBus/Message.swift", "Sources/FlowStore/A.swift",
            "Sources/FlowStore/B.swift", "Sources/FlowdSystemX/E.swift",
        ])
    }
}
