import FlowEngine
import FlowdSystem
import Logging

/// The flows the daemon serves, read from the configured directories.
///
/// Directories are listed highest priority first: a flow id found in an
/// earlier directory (the administrator's `/etc/flowd/flows`) wins over the
/// same id in a later one (the vendor's `/usr/share/flowd/flows`). Within one
/// directory, files are read in name order and a second file with the same id
/// is refused. A file that does not load is refused with its problems and the
/// others are still served.
struct FlowCatalog: Sendable {
    /// A flow that loaded, and the file it came from.
    struct Entry: Sendable {
        var definition: FlowDefinition
        var file: String
    }

    /// A file that was not served, and why.
    struct Refusal: Sendable, Hashable {
        var file: String
        /// One line per problem, `file: json.path: message`.
        var problems: [String]
    }

    /// A flow hidden by a higher-priority file with the same id.
    struct Shadowed: Sendable, Hashable {
        var file: String
        var id: String
        var winner: String
    }

    private(set) var flows: [String: Entry] = [:]
    private(set) var refused: [Refusal] = []
    private(set) var shadowed: [Shadowed] = []
    /// Configured directories that could not be read (other than missing ones).
    private(set) var unreadableDirectories: [(path: String, reason: String)] = []

    /// The flows by id, sorted.
    var sortedFlows: [Entry] { flows.values.sorted { $0.definition.id < $1.definition.id } }

    func flow(_ id: String) -> FlowDefinition? { flows[id]?.definition }

    /// Reads every `*.json` file in `directories`.
    static func load(
        directories: [String], capabilities: CapabilityCatalog, limits: FlowLoadLimits = .default
    ) -> FlowCatalog {
        var catalog = FlowCatalog()
        var seenDirectories = Set<String>()
        for directory in directories where seenDirectories.insert(directory).inserted {
            let names: [String]
            do {
                names = try FileSystem.directoryEntries(directory)
            } catch {
                if error.errno != .noSuchFileOrDirectory {
                    catalog.unreadableDirectories.append((directory, error.errno.description))
                }
                continue
            }
            var idsInThisDirectory: [String: String] = [:]
            for name in names.sorted() where name.hasSuffix(".json") && !name.hasPrefix(".") {
                let path = directory + "/" + name
                let bytes: [UInt8]
                do {
                    bytes = try FileSystem.readFile(path, limit: limits.maxFileBytes)
                } catch {
                    catalog.refused.append(Refusal(file: path, problems: ["\(path): cannot read: \(error.reason)"]))
                    continue
                }
                let definition: FlowDefinition
                do {
                    definition = try FlowLoader.load(bytes, fileName: path, capabilities: capabilities, limits: limits)
                } catch {
                    catalog.refused.append(Refusal(file: path, problems: error.problems.map(\.description)))
                    continue
                }
                if let earlier = idsInThisDirectory[definition.id] {
                    catalog.refused.append(
                        Refusal(file: path, problems: ["\(path): $.id: flow id \"\(definition.id)\" is already defined by \(earlier)"]))
                    continue
                }
                idsInThisDirectory[definition.id] = path
                if let winner = catalog.flows[definition.id] {
                    catalog.shadowed.append(Shadowed(file: path, id: definition.id, winner: winner.file))
                    continue
                }
                catalog.flows[definition.id] = Entry(definition: definition, file: path)
            }
        }
        return catalog
    }

    /// Logs the flows refused or shadowed at load, and the directories that
    /// could not be read.
    func report(to logger: Logger) {
        for refusal in refused {
            for problem in refusal.problems {
                logger.error("flow refused: \(problem)", id: .flowRefused, metadata: [.path: refusal.file])
            }
        }
        for shadow in shadowed {
            logger.info(
                "flow \(shadow.id) in \(shadow.file) is overridden by \(shadow.winner)",
                metadata: [.flow: shadow.id, .path: shadow.file])
        }
        for directory in unreadableDirectories {
            logger.warning("cannot read the flows directory \(directory.path): \(directory.reason)")
        }
    }
}
