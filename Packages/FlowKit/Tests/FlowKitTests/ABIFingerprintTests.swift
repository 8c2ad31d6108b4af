import FlowKit
import Foundation
import Testing

/// Keeps `FlowKitABI.interfaceFingerprint` (in the generated
/// `Sources/FlowKit/ABIFingerprint.swift`) equal to a hash of FlowKit's
/// sources, so that no change to the SDK can reach a build without changing
/// the number every plugin is checked by (`FlowKitABI.version`).
///
/// The hash is over every other source file of the module, in name order,
/// with comments removed and runs of white space made one space: a change to
/// a doc comment or the layout of the code keeps it; any change to a
/// declaration, a type's stored properties, a protocol's requirements or an
/// inlinable body changes it. (So does a change to a body that is not
/// inlinable, which a plugin would survive: a rebuild too many is safe, a
/// load of a plugin that disagrees with the daemon about a type is not.)
///
/// When this test fails after a FlowKit change, regenerate the file:
///
///     FLOWKIT_WRITE_FINGERPRINT=1 swift test --package-path Packages/FlowKit --filter ABIFingerprint
///
/// and note the change in docs/plugins.md ("The ABI rule"). Every plugin
/// must then be rebuilt against the new SDK.
@Suite struct ABIFingerprint {
    static let sourceDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/FlowKit")
    static let generatedName = "ABIFingerprint.swift"

    @Test("the interface fingerprint is the hash of FlowKit's sources")
    func fingerprintMatchesTheSources() throws {
        let computed = try InterfaceHash.fingerprint(ofDirectory: Self.sourceDirectory, excluding: Self.generatedName)
        if ProcessInfo.processInfo.environment["FLOWKIT_WRITE_FINGERPRINT"] == "1" {
            try InterfaceHash.generatedFile(fingerprint: computed).write(
                to: Self.sourceDirectory.appendingPathComponent(Self.generatedName), atomically: true, encoding: .utf8)
            return
        }
        #expect(
            FlowKitABI.interfaceFingerprint == computed,
            """
            FlowKit's sources changed: its interface fingerprint is now \(InterfaceHash.hex(computed)), \
            the generated one is \(InterfaceHash.hex(FlowKitABI.interfaceFingerprint)). Regenerate it with \
            FLOWKIT_WRITE_FINGERPRINT=1 swift test --package-path Packages/FlowKit --filter ABIFingerprint
            """)
    }

    @Test("the ABI version a plugin reports is derived from the fingerprint, and never an SDK 1.0 number")
    func versionIsDerived() {
        #expect(FlowKitABI.version == FlowKitABI.version(ofFingerprint: FlowKitABI.interfaceFingerprint))
        #expect(FlowKitABI.version >= 0x8000_0000, "numbers below 2^31 are the hand-bumped ABIs 1 to 3")
        #expect(FlowKitABI.version(ofFingerprint: 0) != FlowKitABI.version(ofFingerprint: 1))
    }

    @Test("comments and white space do not count; declarations, bodies and string contents do")
    func normalization() {
        let base = InterfaceHash.normalized("public struct A {\n    // a note\n    public var x: Int /* here */\n}\n")
        #expect(base == "public struct A { public var x: Int }")
        #expect(InterfaceHash.normalized("public  struct A{ /// doc\n public var x: Int\n}") != base)
        #expect(InterfaceHash.normalized("let s = \"// not a comment\"") == "let s = \"// not a comment\"")
        #expect(InterfaceHash.normalized("let s = \"a\\\"b\" // c") == "let s = \"a\\\"b\"")
        #expect(InterfaceHash.normalized("/* outer /* nested */ still */x") == "x")
        #expect(InterfaceHash.normalized("let s = \"\"\"\n  a // b\n  \"\"\"") == "let s = \"\"\"\n  a // b\n  \"\"\"")
        #expect(
            InterfaceHash.fingerprint(ofTexts: ["public var x: Int"])
                != InterfaceHash.fingerprint(ofTexts: ["public var x: Int8"]))
    }
}

/// The hash behind the fingerprint: FNV-1a, 64 bits, over the normalized texts.
enum InterfaceHash {
    static func fingerprint(ofDirectory directory: URL, excluding excluded: String) throws -> UInt64 {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".swift") && $0 != excluded }.sorted()
        let texts = try names.map { try String(contentsOf: directory.appendingPathComponent($0), encoding: .utf8) }
        return fingerprint(ofTexts: texts)
    }

    static func fingerprint(ofTexts texts: [String]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for text in texts {
            for byte in normalized(text).utf8 + [0] {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            }
        }
        return hash
    }

    /// `text` without comments, with each run of white space outside string
    /// literals made one space, trimmed.
    static func normalized(_ text: String) -> String {
        let s = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        var pendingSpace = false
        func emit(_ c: Unicode.Scalar) {
            if pendingSpace && !out.isEmpty { out.append(" ") }
            pendingSpace = false
            out.append(c)
        }
        func starts(_ p: String, at j: Int) -> Bool {
            let q = Array(p.unicodeScalars)
            return j + q.count <= s.count && Array(s[j..<(j + q.count)]) == q
        }
        while i < s.count {
            let c = s[i]
            if starts("//", at: i) {
                while i < s.count && s[i] != "\n" { i += 1 }
                pendingSpace = true
            } else if starts("/*", at: i) {
                var depth = 0
                repeat {
                    if starts("/*", at: i) { depth += 1; i += 2 }
                    else if starts("*/", at: i) { depth -= 1; i += 2 }
                    else { i += 1 }
                } while depth > 0 && i < s.count
                pendingSpace = true
            } else if c == "\"" {
                // A string literal, copied as it is (single-line or multi-line).
                let delimiter = starts("\"\"\"", at: i) ? "\"\"\"" : "\""
                for d in delimiter.unicodeScalars { emit(d) }
                i += delimiter.unicodeScalars.count
                while i < s.count && !starts(delimiter, at: i) {
                    if s[i] == "\\" && i + 1 < s.count { out.append(s[i]); i += 1 }
                    out.append(s[i])
                    i += 1
                }
                for d in delimiter.unicodeScalars where i < s.count { out.append(d); i += 1 }
            } else if c.properties.isWhitespace {
                pendingSpace = true
                i += 1
            } else {
                emit(c)
                i += 1
            }
        }
        return String(out)
    }

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: 16 - digits.count) + digits
    }

    static func generatedFile(fingerprint: UInt64) -> String {
        """
        // Generated by FlowKit's ABIFingerprint test from the other sources of
        // this module: do not edit. Regenerate after any change to FlowKit with
        //     FLOWKIT_WRITE_FINGERPRINT=1 swift test --package-path Packages/FlowKit --filter ABIFingerprint

        extension FlowKitABI {
            /// `UInt64`, under a name that changes with the fingerprint: a change
            /// of the fingerprint is then a change of a declaration plugins use,
            /// which makes an incremental build recompile them (a new value in
            /// an inlined body alone does not, and would leave stale plugins).
            public typealias Fingerprint\(hex(fingerprint).dropFirst(2)) = UInt64
            /// `UInt32`, the type of ``version``, under the same changing name.
            public typealias Version = Version\(hex(fingerprint).dropFirst(2))
            public typealias Version\(hex(fingerprint).dropFirst(2)) = UInt32

            /// A hash of FlowKit's sources (comments and white space aside) that
            /// this code was compiled against; see ``version``.
            @_alwaysEmitIntoClient
            public static var interfaceFingerprint: Fingerprint\(hex(fingerprint).dropFirst(2)) { \(hex(fingerprint)) }
        }

        """
    }
}
