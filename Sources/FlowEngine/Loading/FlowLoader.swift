import FlowKit

/// Loads and lints flow files (formats 1 and 2, see docs/flow-format.md).
///
/// The engine does no I/O: the daemon reads the file and passes its bytes and
/// its name. Every problem is reported as `file: json.path: message`, all of
/// them (up to ``FlowLoadLimits/maxProblems``), not just the first.
///
/// Loading runs in stages, each in its own file:
///
/// 1. here: the byte limit, the JSON parser, duplicate keys;
/// 2. ``FlowBuilder`` (pass 1): each object's shape, key by key, into the
///    model (`FlowBuilder+Steps`, `+Fields`, `+Plugins`, `+Rules`), recording
///    the references that need the whole flow;
/// 3. ``FlowLinter`` (pass 2): ids, references, conditions and the step
///    graph, across steps.
package enum FlowLoader {
    /// The newest flow format this engine reads; it reads every format
    /// from 1 on (format 1 files load unchanged).
    package static let formatVersion = 2

    /// Parses, decodes and lints one flow file.
    ///
    /// - Parameters:
    ///   - bytes: the file's content, UTF-8 JSON.
    ///   - fileName: used in every problem, for example `consultation.json`.
    ///   - capabilities: the plugin capabilities available; a flow naming one
    ///     that is missing is refused. Pass ``CapabilityCatalog/any`` to skip.
    ///   - limits: the bounds on what is accepted.
    package static func load(
        _ bytes: [UInt8], fileName: String, capabilities: CapabilityCatalog, limits: FlowLoadLimits = .default
    ) throws(FlowLoadError) -> FlowDefinition {
        var sink = LintSink(file: fileName, maxProblems: limits.maxProblems)
        if bytes.count > limits.maxFileBytes {
            sink.add(.root, "the file is \(bytes.count) bytes, over the limit of \(limits.maxFileBytes)")
            throw FlowLoadError(problems: sink.report)
        }
        let parserLimits = JSONParser.Limits(
            maxDepth: min(max(limits.maxDepth, 1), 256), maxStringBytes: limits.maxStringBytes)
        let parsed: JSONParser.Result
        do {
            parsed = try JSONParser.parse(bytes, limits: parserLimits)
        } catch {
            sink.add(nil, "syntax error at line \(error.line), column \(error.column): \(error.message)")
            throw FlowLoadError(problems: sink.report)
        }
        for path in parsed.duplicateKeys {
            sink.add(path, "this key appears more than once in its object")
        }
        return try build(parsed.root, sink: sink, capabilities: capabilities, limits: limits)
    }

    /// Loads a flow from its text (a convenience for tests and tools).
    package static func load(
        _ text: String, fileName: String, capabilities: CapabilityCatalog, limits: FlowLoadLimits = .default
    ) throws(FlowLoadError) -> FlowDefinition {
        try load(Array(text.utf8), fileName: fileName, capabilities: capabilities, limits: limits)
    }

    /// Builds a flow from a parsed document (also ``FlowDefinition``'s `Decodable`).
    static func build(
        _ root: JSONNode, sink: LintSink, capabilities: CapabilityCatalog, limits: FlowLoadLimits
    ) throws(FlowLoadError) -> FlowDefinition {
        var builder = FlowBuilder(reader: DocumentReader(sink: sink, limits: limits), capabilities: capabilities)
        let flow = builder.flow(root)
        guard let flow, builder.reader.sink.isEmpty else {
            var s = builder.reader.sink
            if s.isEmpty { s.add(.root, "the flow could not be read") }
            throw FlowLoadError(problems: s.report)
        }
        return flow
    }
}
