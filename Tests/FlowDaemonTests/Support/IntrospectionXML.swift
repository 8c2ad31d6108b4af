import Foundation
import TestSupport

/// An element of a small XML document: enough for D-Bus introspection data.
struct XMLNode: Equatable {
    var name: String
    var attributes: [String: String]
    var children: [XMLNode]

    /// The children named `name`.
    func children(_ name: String) -> [XMLNode] { children.filter { $0.name == name } }
}

/// A tiny reader for introspection XML: elements, attributes (with the five
/// predefined entities), comments, processing instructions and a DOCTYPE.
/// Text content is ignored (introspection data has none that matters).
/// Anything else is an error, so a malformed document fails the test.
struct TinyXMLReader {
    private let scalars: [Unicode.Scalar]
    private var index = 0

    /// Parses `text` and returns its root element.
    static func parse(_ text: String) throws -> XMLNode {
        var reader = TinyXMLReader(scalars: Array(text.unicodeScalars))
        return try reader.document()
    }

    private init(scalars: [Unicode.Scalar]) {
        self.scalars = scalars
    }

    private func fail(_ message: String) -> TestSupportError {
        TestSupportError("XML at offset \(index): \(message)")
    }

    private var atEnd: Bool { index >= scalars.count }

    private func peek(_ text: String) -> Bool {
        let wanted = Array(text.unicodeScalars)
        guard index + wanted.count <= scalars.count else { return false }
        return Array(scalars[index..<(index + wanted.count)]) == wanted
    }

    private mutating func skip(past terminator: String) throws {
        while !atEnd {
            if peek(terminator) {
                index += terminator.unicodeScalars.count
                return
            }
            index += 1
        }
        throw fail("missing \(terminator)")
    }

    private mutating func skipSpace() {
        while !atEnd, scalars[index].properties.isWhitespace { index += 1 }
    }

    /// Skips text, comments, processing instructions and the DOCTYPE.
    private mutating func skipMisc() throws {
        while true {
            while !atEnd, scalars[index] != "<" { index += 1 }
            if peek("<!--") {
                try skip(past: "-->")
            } else if peek("<?") {
                try skip(past: "?>")
            } else if peek("<!DOCTYPE") {
                try skip(past: ">")
            } else {
                return
            }
        }
    }

    private mutating func document() throws -> XMLNode {
        try skipMisc()
        guard peek("<") else { throw fail("no root element") }
        let root = try element()
        try skipMisc()
        guard atEnd else { throw fail("content after the root element") }
        return root
    }

    private mutating func name() throws -> String {
        var text = ""
        while !atEnd {
            let c = scalars[index]
            guard c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "_" || c == "-" || c == "." || c == ":"
            else { break }
            text.unicodeScalars.append(c)
            index += 1
        }
        guard !text.isEmpty else { throw fail("expected a name") }
        return text
    }

    private mutating func element() throws -> XMLNode {
        index += 1  // "<"
        let tag = try name()
        var node = XMLNode(name: tag, attributes: [:], children: [])
        while true {
            skipSpace()
            if peek("/>") {
                index += 2
                return node
            }
            if peek(">") {
                index += 1
                break
            }
            let key = try name()
            skipSpace()
            guard peek("=") else { throw fail("expected = after \(key)") }
            index += 1
            skipSpace()
            guard !atEnd, scalars[index] == "\"" || scalars[index] == "'" else { throw fail("expected a quoted value") }
            let quote = scalars[index]
            index += 1
            var raw = ""
            while !atEnd, scalars[index] != quote {
                raw.unicodeScalars.append(scalars[index])
                index += 1
            }
            guard !atEnd else { throw fail("unterminated attribute value") }
            index += 1
            guard node.attributes[key] == nil else { throw fail("duplicate attribute \(key)") }
            node.attributes[key] = try decodeEntities(raw)
        }
        while true {
            try skipMisc()
            guard !atEnd else { throw fail("missing </\(tag)>") }
            if peek("</") {
                index += 2
                let closing = try name()
                guard closing == tag else { throw fail("</\(closing)> closes <\(tag)>") }
                skipSpace()
                guard peek(">") else { throw fail("expected >") }
                index += 1
                return node
            }
            node.children.append(try element())
        }
    }

    private func decodeEntities(_ text: String) throws -> String {
        guard text.contains("&") else { return text }
        var result = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            result += rest[..<amp]
            guard let semicolon = rest[amp...].firstIndex(of: ";") else { throw fail("unterminated entity") }
            switch rest[rest.index(after: amp)..<semicolon] {
            case "lt": result += "<"
            case "gt": result += ">"
            case "amp": result += "&"
            case "quot": result += "\""
            case "apos": result += "'"
            case let other: throw fail("unknown entity &\(other);")
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return result + rest
    }
}

/// One interface of an introspection document, in a form that compares
/// names, signatures, directions, access and annotations, independent of
/// member order and formatting.
struct InterfaceShape: Equatable, CustomStringConvertible {
    struct Arg: Equatable, CustomStringConvertible {
        var name: String?
        var type: String
        var direction: String
        var description: String { "\(direction) \(type) \(name ?? "_")" }
    }

    struct Member: Equatable, CustomStringConvertible {
        var arguments: [Arg]
        var annotations: [String: String]
        var description: String {
            "(\(arguments.map(\.description).joined(separator: ", ")))" + (annotations.isEmpty ? "" : " \(annotations)")
        }
    }

    struct Property: Equatable, CustomStringConvertible {
        var type: String
        var access: String
        var annotations: [String: String]
        var description: String { "\(access) \(type)" + (annotations.isEmpty ? "" : " \(annotations)") }
    }

    var name: String
    var methods: [String: Member] = [:]
    var signals: [String: Member] = [:]
    var properties: [String: Property] = [:]
    var annotations: [String: String] = [:]

    var description: String {
        var lines = ["interface \(name) \(annotations)"]
        for (n, m) in methods.sorted(by: { $0.key < $1.key }) { lines.append("  method \(n)\(m)") }
        for (n, s) in signals.sorted(by: { $0.key < $1.key }) { lines.append("  signal \(n)\(s)") }
        for (n, p) in properties.sorted(by: { $0.key < $1.key }) { lines.append("  property \(n): \(p)") }
        return lines.joined(separator: "\n")
    }

    /// The interfaces of an introspection document, by name. Method
    /// arguments without a direction are "in" (the specification's default);
    /// signal arguments are always "out".
    static func interfaces(in xml: String) throws -> [String: InterfaceShape] {
        let root = try TinyXMLReader.parse(xml)
        guard root.name == "node" else { throw TestSupportError("the root element is <\(root.name)>, not <node>") }
        var result: [String: InterfaceShape] = [:]
        for element in root.children("interface") {
            guard let name = element.attributes["name"] else { throw TestSupportError("an interface without a name") }
            var shape = InterfaceShape(name: name, annotations: annotations(of: element))
            for method in element.children("method") {
                shape.methods[method.attributes["name"] ?? ""] = Member(
                    arguments: method.children("arg").map {
                        Arg(name: $0.attributes["name"], type: $0.attributes["type"] ?? "", direction: $0.attributes["direction"] ?? "in")
                    },
                    annotations: annotations(of: method))
            }
            for signal in element.children("signal") {
                shape.signals[signal.attributes["name"] ?? ""] = Member(
                    arguments: signal.children("arg").map {
                        Arg(name: $0.attributes["name"], type: $0.attributes["type"] ?? "", direction: "out")
                    },
                    annotations: annotations(of: signal))
            }
            for property in element.children("property") {
                shape.properties[property.attributes["name"] ?? ""] = Property(
                    type: property.attributes["type"] ?? "", access: property.attributes["access"] ?? "",
                    annotations: annotations(of: property))
            }
            guard result[name] == nil else { throw TestSupportError("interface \(name) appears twice") }
            result[name] = shape
        }
        return result
    }

    private static func annotations(of element: XMLNode) -> [String: String] {
        var result: [String: String] = [:]
        for annotation in element.children("annotation") {
            result[annotation.attributes["name"] ?? ""] = annotation.attributes["value"] ?? ""
        }
        return result
    }
}

extension InterfaceShape {
    /// `org.gtk.GDBus.DocString`: documentation for gdbus-codegen and
    /// browsers, in the shipped XML only (docs/dbus-api.md).
    static let docString = "org.gtk.GDBus.DocString"

    /// The shape without its `org.gtk.GDBus.DocString` annotations: what the
    /// running daemon introspects.
    var withoutDocStrings: InterfaceShape {
        var shape = self
        shape.annotations[Self.docString] = nil
        for name in shape.methods.keys { shape.methods[name]?.annotations[Self.docString] = nil }
        for name in shape.signals.keys { shape.signals[name]?.annotations[Self.docString] = nil }
        for name in shape.properties.keys { shape.properties[name]?.annotations[Self.docString] = nil }
        return shape
    }

    /// The interface and its members that have no non-empty
    /// `org.gtk.GDBus.DocString` (`method Submit`), sorted.
    var undocumented: [String] {
        var missing: [String] = []
        func check(_ what: String, _ annotations: [String: String]) {
            if (annotations[Self.docString] ?? "").trimmingCharacters(in: .whitespaces).isEmpty { missing.append(what) }
        }
        check("interface \(name)", annotations)
        for (member, method) in methods { check("method \(member)", method.annotations) }
        for (member, signal) in signals { check("signal \(member)", signal.annotations) }
        for (member, property) in properties { check("property \(member)", property.annotations) }
        return missing.sorted()
    }

    /// `org.freedesktop.DBus.ObjectManager` as the D-Bus specification
    /// defines it, argument names included.
    static let objectManager = InterfaceShape(
        name: "org.freedesktop.DBus.ObjectManager",
        methods: [
            "GetManagedObjects": Member(
                arguments: [Arg(name: "objpath_interfaces_and_properties", type: "a{oa{sa{sv}}}", direction: "out")],
                annotations: [:]),
        ],
        signals: [
            "InterfacesAdded": Member(
                arguments: [
                    Arg(name: "object_path", type: "o", direction: "out"),
                    Arg(name: "interfaces_and_properties", type: "a{sa{sv}}", direction: "out"),
                ],
                annotations: [:]),
            "InterfacesRemoved": Member(
                arguments: [Arg(name: "object_path", type: "o", direction: "out"), Arg(name: "interfaces", type: "as", direction: "out")],
                annotations: [:]),
        ])
}
