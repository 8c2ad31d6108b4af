import Foundation
import Testing
import TestSupport

/// docs/dbus-api.md's member tables against the shipped interface XML, which
/// ``IntrospectionTests`` holds equal to what the running daemon introspects:
/// a member, an argument name or a type the docs get wrong fails here.
@Suite("docs/dbus-api.md against the introspection data")
struct DocsTableTests {
    static let docs: String = {
        let path = URL(fileURLWithPath: IntrospectionTests.xmlDirectory).deletingLastPathComponent()
            .appendingPathComponent("docs/dbus-api.md").path
        return (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }()

    /// The text from the line `heading` to the next heading of its level or higher.
    static func section(_ heading: String, in text: String) throws -> String {
        let lines = text.components(separatedBy: "\n")
        guard let start = lines.firstIndex(of: heading) else { throw TestSupportError("no heading \(heading)") }
        let level = heading.prefix { $0 == "#" }.count
        var end = start + 1
        while end < lines.count {
            let hashes = lines[end].prefix { $0 == "#" }.count
            if hashes > 0, hashes <= level, lines[end].dropFirst(hashes).hasPrefix(" ") { break }
            end += 1
        }
        return lines[start..<end].joined(separator: "\n")
    }

    /// One row of a member table: its kind (`method`, `signal`, `property`),
    /// name, arguments and (methods) reply types or (properties) type.
    struct Row: Equatable {
        var kind: String
        var name: String
        var arguments: [InterfaceShape.Arg]
        var results: [String]
    }

    /// The member rows of the tables in `text`; a row names a method unless
    /// it says `signal` or `property`, or the table is of `kind` (the
    /// Session's signal table).
    static func rows(in text: String, kind tableKind: String = "method") throws -> [Row] {
        var rows: [Row] = []
        for line in text.components(separatedBy: "\n") where line.hasPrefix("| ") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count > 3 else { continue }
            var member = cells[1]
            var kind = tableKind
            for prefix in ["signal ", "property "] where member.hasPrefix(prefix) {
                kind = String(prefix.dropLast())
                member.removeFirst(prefix.count)
            }
            guard member.hasPrefix("`"), member.hasSuffix("`"), member.count > 2 else { continue }
            member = String(member.dropFirst().dropLast())
            guard let first = member.first, first.isUppercase else { continue }  // a key table, not members
            let name = String(member.prefix { $0.isLetter || $0.isNumber })
            var arguments: [InterfaceShape.Arg] = []
            if let open = member.firstIndex(of: "("), member.hasSuffix(")") {
                let inner = member[member.index(after: open)..<member.index(before: member.endIndex)]
                arguments = try parameters(String(inner), direction: kind == "signal" ? "out" : "in")
            }
            var results: [String] = []
            let signature = cells[2].replacingOccurrences(of: "`", with: "")
            if kind == "method" {
                guard signature.hasPrefix("→ ") else { throw TestSupportError("method \(name) has no '→ …' in \(line)") }
                let reply = String(signature.dropFirst(2))
                if reply.hasPrefix("("), reply.hasSuffix(")") {
                    results = try parameters(String(reply.dropFirst().dropLast()), direction: "out").map(\.type)
                } else {
                    results = [reply]
                }
            } else if kind == "property" {
                results = [signature]
            }
            rows.append(Row(kind: kind, name: name, arguments: arguments, results: results))
        }
        return rows
    }

    /// `s flow, a{sv} options` as arguments.
    static func parameters(_ text: String, direction: String) throws -> [InterfaceShape.Arg] {
        guard !text.isEmpty else { return [] }
        return try text.components(separatedBy: ", ").map { parameter in
            let parts = parameter.split(separator: " ")
            guard parts.count == 2 else { throw TestSupportError("\"\(parameter)\" is not 'type name'") }
            return InterfaceShape.Arg(name: String(parts[1]), type: String(parts[0]), direction: direction)
        }
    }

    /// Expects the rows to name exactly the methods, signals and (when
    /// `properties`) properties of `shape`, with its argument names and types.
    static func expectSame(_ rows: [Row], _ shape: InterfaceShape, properties: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
        let methods = rows.filter { $0.kind == "method" }
        let signals = rows.filter { $0.kind == "signal" }
        #expect(Set(methods.map(\.name)) == Set(shape.methods.keys), "methods of \(shape.name)", sourceLocation: sourceLocation)
        #expect(Set(signals.map(\.name)) == Set(shape.signals.keys), "signals of \(shape.name)", sourceLocation: sourceLocation)
        for row in methods {
            let arguments = shape.methods[row.name]?.arguments ?? []
            #expect(row.arguments == arguments.filter { $0.direction == "in" }, "\(row.name)'s arguments", sourceLocation: sourceLocation)
            #expect(row.results == arguments.filter { $0.direction == "out" }.map(\.type),
                    "\(row.name)'s reply", sourceLocation: sourceLocation)
        }
        for row in signals {
            #expect(row.arguments == shape.signals[row.name]?.arguments, "signal \(row.name)", sourceLocation: sourceLocation)
        }
        if properties {
            let documented = rows.filter { $0.kind == "property" }
            #expect(Set(documented.map(\.name)) == Set(shape.properties.keys), "properties of \(shape.name)", sourceLocation: sourceLocation)
            for row in documented {
                #expect(row.results == [shape.properties[row.name]?.type ?? ""], "property \(row.name)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test("the Manager table names every member of the XML with its arguments and types")
    func manager() throws {
        let rows = try Self.rows(in: try Self.section("## org.flowd.Flow1.Manager", in: Self.docs))
        Self.expectSame(rows, try IntrospectionTests.shipped("org.flowd.Flow1.Manager"), properties: true)
    }

    @Test("the Session tables name every method and signal of the XML, and the properties section every property with its type")
    func session() throws {
        let text = try Self.section("## org.flowd.Flow1.Session", in: Self.docs)
        let shape = try IntrospectionTests.shipped("org.flowd.Flow1.Session")
        let rows = try Self.rows(in: try Self.section("### Methods", in: text))
            + Self.rows(in: try Self.section("### Signals", in: text), kind: "signal")
        Self.expectSame(rows, shape, properties: false)
        let prose = try Self.section("### Properties", in: text)
        for (name, property) in shape.properties {
            #expect(prose.contains("`\(name)` \(property.type)"), "docs/dbus-api.md's properties do not say `\(name)` \(property.type)")
        }
    }

    @Test("the ObjectManager table names its members with the specification's arguments and types")
    func objectManager() throws {
        let rows = try Self.rows(in: try Self.section("## org.freedesktop.DBus.ObjectManager", in: Self.docs))
        Self.expectSame(rows, InterfaceShape.objectManager, properties: true)
    }

    @Test("the comparison sees a wrong argument name")
    func comparisonCanFail() throws {
        let text = try Self.section("## org.flowd.Flow1.Manager", in: Self.docs)
            .replacingOccurrences(of: "SessionNew(s id, o session)", with: "SessionNew(s id, o path)")
        let rows = try Self.rows(in: text)
        let shape = try IntrospectionTests.shipped("org.flowd.Flow1.Manager")
        #expect(rows.first { $0.name == "SessionNew" }?.arguments != shape.signals["SessionNew"]?.arguments)
    }
}
