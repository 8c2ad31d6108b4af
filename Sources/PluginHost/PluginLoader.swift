import FlowKit
import FlowdSystem

/// A plugin directory the loader could not use, for the journal.
package struct DirectoryProblem: Sendable, Hashable {
    /// The directory as configured.
    package var path: String
    /// One line: "does not exist", "is writable by group or others …".
    package var reason: String

    /// A problem with `path`.
    package init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
}

/// What one run of the loader produced.
package struct PluginLoadReport: Sendable {
    /// The plugins, loaded or not.
    package var registry: PluginRegistry
    /// Configured directories that were skipped, and why. A missing directory
    /// is reported too (it is not an error: the defaults may not exist).
    package var directoryProblems: [DirectoryProblem]
    /// Plugins whose own code crashed the earlier process (the crash guard
    /// found their call marked crashed): persist these and pass them back in
    /// ``PluginLoader/Configuration/quarantined`` next time.
    package var newQuarantines: [PluginQuarantine]
    /// Calls the earlier process was in when it went away with nothing crashing
    /// in the plugin's code (killed from outside, a crash on another thread):
    /// not blamed. Log each ``GuardedCall/interruptionNotice`` at notice level.
    package var interruptedCalls: [GuardedCall]
    /// Earlier quarantines whose file changed or went away: forget these.
    package var liftedQuarantines: [PluginQuarantine]
    /// The isolated plugins that loaded, whose processes run: stop them
    /// (``IsolatedPlugin/stop()``) before this process exits.
    package var isolatedPlugins: [IsolatedPlugin] = []
}

/// Finds, checks and loads plugins from the configured directories.
///
/// For each directory, in the configured order, and each `*.so` file in it, in
/// name order (not recursive; names starting with `.` are skipped):
///
/// 1. The directory itself must belong to root or to this process's euid and
///    not be writable by group or others, or none of its files are looked at.
/// 2. The file is opened with `O_RDONLY|O_NOFOLLOW|O_CLOEXEC|O_NONBLOCK`
///    relative to the directory (a symlink fails with ELOOP), and `fstat`
///    on that descriptor must show a regular file owned by root or by this
///    process's euid, not writable by group or others.
/// 3. It is `dlopen`ed through `/proc/self/fd/N` with `RTLD_NOW|RTLD_LOCAL`,
///    so the checked file is the loaded file. It is never `dlclose`d, and its
///    descriptor stays open for the life of the process.
/// 4. `flowd_plugin_abi_version` must exist and return this flowd's
///    `FlowKitABI.version`; then `flowd_plugin_register` must exist and return
///    a registration with valid, unique names.
///
/// A plugin that fails any step is recorded as `failed` with a one-line reason
/// and the others still load. The crash guard brackets steps 3 and 4, since
/// library constructors and the entry points run plugin code, and the loading
/// thread is marked as inside the plugin meanwhile (with an alternate signal
/// stack if it had none): a plugin that crashes while loading is blamed.
package struct PluginLoader: Sendable {
    /// Where to look and what to leave out. Paths only ever come from here,
    /// never from a caller.
    package struct Configuration: Sendable {
        /// The plugin directories, in order.
        package var directories: [String]
        /// Plugins the administrator turned off: a file name (`webhook.so`), a
        /// file name without `.so` (`webhook`), or a registered plugin name
        /// (`flowd.webhook`). A file-name match is not even opened.
        package var disabled: Set<String>
        /// Plugins kept disabled after crashing the daemon (from the daemon's
        /// store), until their file changes.
        package var quarantined: [PluginQuarantine]
        /// The uids a plugin file and its directory may belong to: root and
        /// this process's euid.
        package var trustedOwners: Set<UInt32>
        /// Only these file names in the directories (`flowd-plugin-probe`
        /// checks one file as flowd would); nil, the default: every `*.so`.
        package var onlyFiles: Set<String>?
        /// Plugins that run isolated, each in a `flowd-plugin-host` process
        /// of its own, by file name (`webhook.so`) or file name without
        /// `.so` (`webhook`): the loader checks the file, then hands the
        /// checked descriptor to the helper, which loads it. Never `dlopen`ed
        /// in this process.
        package var isolated: [String: IsolationSettings] = [:]
        /// The helper executable for ``isolated`` plugins.
        package var isolationHelper = ""
        /// Where an isolated plugin's process reports what happened to it.
        package var isolationEvents: @Sendable (IsolationEvent) -> Void = { _ in }

        /// Loads from `directories`; everything else has a safe default.
        package init(
            directories: [String], disabled: Set<String> = [], quarantined: [PluginQuarantine] = [],
            trustedOwners: Set<UInt32> = Configuration.defaultTrustedOwners
        ) {
            self.directories = directories
            self.disabled = disabled
            self.quarantined = quarantined
            self.trustedOwners = trustedOwners
        }

        /// Root and this process's effective uid.
        package static var defaultTrustedOwners: Set<UInt32> { [0, CurrentProcess.effectiveUserID] }
    }

    /// Limits on what a registration may contain.
    package enum Limits {
        /// Scalars in a plugin or capability name.
        package static let maxNameLength = 100
        /// Scalars in a plugin's version.
        package static let maxVersionLength = 64
        /// Capabilities in one registration.
        package static let maxCapabilities = 256
    }

    /// Where to look and what to leave out.
    package let configuration: Configuration

    /// A loader for `configuration`; nothing happens until ``load(crashGuard:)``.
    package init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Loads every plugin it can. Asks `crashGuard` first for the calls an
    /// earlier process left behind: quarantines the plugins whose call crashed,
    /// hands the new quarantines to `record`, reports the merely interrupted
    /// calls, and clears the leftovers.
    ///
    /// `record` must keep the quarantines where the next process finds them
    /// (the daemon's store) before it returns true. Only then are the crash
    /// guard's leftovers cleared, and only then does any plugin load: if
    /// another plugin crashes this process while it loads, the next start
    /// still knows the first one. (With both records gone, two plugins that
    /// crash while loading would take turns crashing every start.) When
    /// `record` returns false, the leftovers stay for the next start.
    package func load(
        crashGuard: any CrashGuard, record: ([PluginQuarantine]) -> Bool = { _ in true }
    ) -> PluginLoadReport {
        var run = LoadRun(configuration: configuration, crashGuard: crashGuard)
        return run.execute(record: record)
    }
}

extension PluginLoader {
    /// Runs `body` with the calling thread marked as inside the call `token`
    /// stands for, and with an alternate signal stack (so a stack overflow in
    /// a constructor is caught too).
    static func markingThread<T>(_ token: CrashGuardToken, _ body: () -> T) -> T {
        guard let marker = token.faultMarker else { return body() }
        let hasSignalStack = (try? LibPluginHost.acquireAlternateSignalStack()) != nil
        let previous = LibPluginHost.enterCall(marker)
        defer {
            LibPluginHost.leaveCall(previous)
            if hasSignalStack { LibPluginHost.releaseAlternateSignalStack() }
        }
        return body()
    }
}

extension PluginLoader {
    /// Loads the plugin file open at `file`, whose file checks were made
    /// (by flowd, which handed the descriptor to `flowd-plugin-host`), as
    /// the loader does from there on: `dlopen` through `/proc/self/fd`, the
    /// ABI, the entry point, and the registration's names and option
    /// declarations. The registration and its declarations, or the one-line
    /// reason it was refused.
    static func loadChecked(file: FileDescriptor) -> Result<(PluginRegistration, [[PluginOption]?]), IsolationFailure> {
        let run = LoadRun(configuration: Configuration(directories: []), crashGuard: MemoryCrashGuard())
        switch run.open(file: file) {
        case .failure(let refusal): return .failure(IsolationFailure(refusal.text))
        case .success(let registration):
            let declarations = registration.capabilities.map(\.declaredOptions)
            if let problem = run.validate(registration, declarations: declarations) {
                return .failure(IsolationFailure(problem))
            }
            return .success((registration, declarations))
        }
    }
}

/// The state of one loader run.
private struct LoadRun {
    let configuration: PluginLoader.Configuration
    let crashGuard: any CrashGuard
    let hostABI = FlowKitABI.version

    var records: [PluginRecord] = []
    var capabilities: [RegisteredCapability] = []
    var owners: [String: PluginIdentity] = [:]  // capability name → plugin
    var pluginNames: [String: String] = [:]  // plugin name → path
    var directoryProblems: [DirectoryProblem] = []
    var quarantines: [String: PluginQuarantine] = [:]  // path → quarantine
    var newQuarantines: [PluginQuarantine] = []
    var interrupted: [GuardedCall] = []
    var lifted: [PluginQuarantine] = []
    var isolatedPlugins: [IsolatedPlugin] = []

    init(configuration: PluginLoader.Configuration, crashGuard: any CrashGuard) {
        self.configuration = configuration
        self.crashGuard = crashGuard
    }

    mutating func execute(record: ([PluginQuarantine]) -> Bool) -> PluginLoadReport {
        for q in configuration.quarantined {
            quarantines[q.path] = q
        }
        // Leftovers: the plugin was in a call when the earlier process went
        // away. Only a crash in the plugin's own code is its fault.
        let leftovers = crashGuard.pending()
        for leftover in leftovers {
            let call = leftover.call
            guard case .crashed(let signal) = leftover.ending else {
                interrupted.append(call)
                continue
            }
            guard let status = try? FileSystem.status(call.pluginPath, followingSymbolicLinks: false) else { continue }
            let q = PluginQuarantine(
                path: call.pluginPath, name: call.pluginName, reason: call.crashReason(signal: signal),
                file: status.identity)
            quarantines[q.path] = q
            newQuarantines.append(q)
        }
        // Kept before the crash guard forgets them, and before any plugin
        // code runs in this process.
        if record(newQuarantines) { crashGuard.clearPending() }

        var seenDirectories = Set<String>()
        for directory in configuration.directories where seenDirectories.insert(directory).inserted {
            scan(directory: directory)
        }
        return PluginLoadReport(
            registry: PluginRegistry(records: records, capabilities: capabilities),
            directoryProblems: directoryProblems, newQuarantines: newQuarantines, interruptedCalls: interrupted,
            liftedQuarantines: lifted, isolatedPlugins: isolatedPlugins)
    }

    // MARK: directories

    mutating func scan(directory: String) {
        guard directory.hasPrefix("/") else {
            directoryProblems.append(DirectoryProblem(path: directory, reason: "is not an absolute path"))
            return
        }
        let dir: FileDescriptor
        do {
            dir = try FileDescriptor.open(directory, [.readOnly, .directory])
        } catch {
            let reason = error.errno == .noSuchFileOrDirectory ? "does not exist" : "cannot be opened: \(error.errno)"
            directoryProblems.append(DirectoryProblem(path: directory, reason: reason))
            return
        }
        defer { dir.close() }
        let names: [String]
        do {
            let status = try dir.status()
            if !configuration.trustedOwners.contains(status.owner) {
                directoryProblems.append(
                    DirectoryProblem(
                        path: directory,
                        reason: "is owned by uid \(status.owner); plugin directories must be owned by "
                            + "\(ownerList), so none of its plugins were loaded"))
                return
            }
            if status.isWritableByGroupOrOthers {
                directoryProblems.append(
                    DirectoryProblem(
                        path: directory,
                        reason: "is writable by group or others (mode \(octal(status.permissions))), "
                            + "so none of its plugins were loaded"))
                return
            }
            names = try dir.directoryEntries()
        } catch {
            directoryProblems.append(DirectoryProblem(path: directory, reason: "cannot be read: \(error.errno)"))
            return
        }
        let base = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        for name in names.sorted()
        where name.hasSuffix(".so") && !name.hasPrefix(".") && configuration.onlyFiles?.contains(name) ?? true {
            loadFile(directory: dir, name: name, path: base + "/" + name)
        }
        // A quarantined file that is gone no longer needs its quarantine.
        let present = Set(names)
        for q in quarantines.values where q.path.hasPrefix(base + "/") {
            let fileName = String(q.path.dropFirst(base.count + 1))
            if !fileName.contains("/") && !present.contains(fileName) {
                lift(q)
            }
        }
    }

    var ownerList: String {
        configuration.trustedOwners.sorted().map { $0 == 0 ? "root" : "uid \($0)" }.joined(separator: " or ")
    }

    mutating func lift(_ q: PluginQuarantine) {
        quarantines[q.path] = nil
        if configuration.quarantined.contains(q) { lifted.append(q) }
    }

    // MARK: files

    mutating func loadFile(directory: FileDescriptor, name: String, path: String) {
        let stem = String(name.dropLast(3))
        /// Records the file as refused, under `name` (the file's stem when
        /// the plugin has not said its name).
        func refuse(_ reason: String, file: FileIdentity? = nil, status: PluginStatus = .failed, name: String? = nil) {
            records.append(
                PluginRecord(
                    name: name ?? stem, version: "", path: path, status: status, error: reason, capabilities: [],
                    file: file))
        }

        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == "\u{FFFD}" }) {
            return refuse("its file name is not printable UTF-8")
        }
        if configuration.disabled.contains(name) || configuration.disabled.contains(stem) {
            return refuse("disabled by the administrator", status: .disabled)
        }

        // Check the file through the descriptor we will load from.
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(name, [.readOnly, .noFollow, .nonBlocking], relativeTo: directory)
        } catch {
            return refuse(error.errno == .tooManySymbolicLinks ? "is a symlink" : "cannot be opened: \(error.errno)")
        }
        defer { file.close() }
        let status: FileStatus
        do {
            status = try file.status()
        } catch {
            return refuse("cannot be examined: \(error.errno)")
        }
        let identity = status.identity
        guard status.isRegularFile else {
            return refuse("is not a regular file", file: identity)
        }
        guard configuration.trustedOwners.contains(status.owner) else {
            return refuse("is owned by uid \(status.owner); plugins must be owned by \(ownerList)", file: identity)
        }
        guard !status.isWritableByGroupOrOthers else {
            return refuse(
                "is writable by group or others (mode \(octal(status.permissions))); plugins must not be", file: identity)
        }
        if let q = quarantines[path] {
            if q.file == identity {
                // Quarantines recorded before the store kept names have none.
                return refuse(q.reason, file: identity, status: .disabled, name: q.name.isEmpty ? nil : q.name)
            }
            lift(q)
        }

        let outcome: Result<(PluginRegistration, [[PluginOption]?]), RefusalReason>
        // An isolated plugin the checks below refuse must not keep its process.
        var isolatedPlugin: IsolatedPlugin?
        defer {
            if let isolatedPlugin {
                if records.last?.path != path || records.last?.status != .loaded {
                    isolatedPlugin.stop()
                } else {
                    isolatedPlugins.append(isolatedPlugin)
                }
            }
        }
        if let settings = configuration.isolated[name] ?? configuration.isolated[stem] {
            // Its own process loads it, from the descriptor checked here.
            switch IsolatedPlugin.load(
                path: path, file: identity, descriptor: file, helper: configuration.isolationHelper, settings: settings,
                events: configuration.isolationEvents)
            {
            case .refused(let reason, let quarantine):
                if let quarantine { configuration.isolationEvents(.crashed(quarantine)) }
                return refuse(reason, file: identity, status: quarantine == nil ? .failed : .disabled)
            case .loaded(let plugin, let wire):
                isolatedPlugin = plugin
                let capabilities = plugin.capabilities(of: wire)
                outcome = .success(
                    (PluginRegistration(
                        name: wire.name, version: wire.version, abiVersion: wire.abiVersion,
                        capabilities: capabilities.map(\.0)), capabilities.map(\.1)))
            }
        } else {
            // From here on plugin code runs on this thread: guard it.
            let token = crashGuard.begin(
                GuardedCall(
                    pluginPath: path, pluginName: stem, capability: nil, startedAt: WallClock.microsecondsSinceEpoch()))
            // The option declarations are the plugin's code too: read them here.
            outcome = PluginLoader.markingThread(token) {
                open(file: file).map { r in (r, r.capabilities.map(\.declaredOptions)) }
            }
            crashGuard.end(token)
        }

        let registration: PluginRegistration
        let declarations: [[PluginOption]?]
        switch outcome {
        case .failure(let refusal):
            return refuse(refusal.text, file: identity)
        case .success(let (r, d)):
            registration = r
            declarations = d
        }
        let ids = registration.capabilities.map { CapabilityID(kind: $0.kind, name: $0.name) }
        var record = PluginRecord(
            name: registration.name, version: registration.version, path: path, status: .loaded, error: nil,
            capabilities: ids, file: identity)
        if let (status, reason) = refusal(of: registration, declarations: declarations, ids: ids) {
            record.status = status
            record.error = reason
            // A name that is no plugin name (validate refused it) is not shown.
            if !Self.isValidPluginName(registration.name) {
                record.name = stem
                record.version = ""
            }
            records.append(record)
            return
        }
        let identityOfPlugin = PluginIdentity(name: registration.name, path: path)
        pluginNames[registration.name] = path
        for (c, declared) in zip(registration.capabilities, declarations) {
            owners[c.name] = identityOfPlugin
            capabilities.append(
                RegisteredCapability(
                    id: CapabilityID(kind: c.kind, name: c.name), plugin: identityOfPlugin, capability: c,
                    declaredOptions: declared))
        }
        records.append(record)
    }

    /// Why a registration that was read is not used: its names or option
    /// declarations, the administrator, or a name another plugin has.
    func refusal(
        of registration: PluginRegistration, declarations: [[PluginOption]?], ids: [CapabilityID]
    ) -> (PluginStatus, String)? {
        if let problem = validate(registration, declarations: declarations) { return (.failed, problem) }
        if configuration.disabled.contains(registration.name) { return (.disabled, "disabled by the administrator") }
        if let earlier = pluginNames[registration.name] {
            return (.failed, "another plugin named \(registration.name) is already loaded from \(earlier)")
        }
        for id in ids {
            if let owner = owners[id.name] {
                return (.failed, "capability \(id.name) is already provided by plugin \(owner.name) (\(owner.path))")
            }
        }
        return nil
    }

    /// `dlopen`s the checked descriptor, checks the ABI and fetches the registration.
    func open(file: FileDescriptor) -> Result<PluginRegistration, RefusalReason> {
        // glibc knows a library by the name it was opened with, and a dlopen
        // of a name it knows returns that library without looking at the
        // file. Our descriptors stay open, but one closed behind our back (a
        // dup2 onto its number, say) would let a later plugin get the same
        // number and load as the old one. So each number is used for one
        // dlopen only, ever. (Asking glibc with RTLD_NOLOAD does not work: a
        // file already loaded under another name counts as loaded, and the
        // question itself adds the name.)
        var file = file
        var attempts = 0
        while !DescriptorNames.claim(file.rawValue) {
            attempts += 1
            guard attempts <= 4096, let higher = try? file.duplicate(minimum: file.rawValue + 1) else {
                return .failure(RefusalReason("cannot find a descriptor number to load it through"))
            }
            file = higher  // the lower number is closed with its object
        }
        let handle: UnsafeMutableRawPointer
        switch LibPluginHost.dlopen("/proc/self/fd/\(file.rawValue)") {
        case .failure(let e):
            var reason = "cannot be loaded: \(e.message)"
            if e.message.contains("cannot open shared object file") {
                // The usual cause: a RUNPATH with $ORIGIN, which glibc takes
                // from the name dlopen got, here /proc/self/fd.
                reason += " (plugins are loaded through /proc/self/fd, so a RUNPATH with $ORIGIN "
                    + "cannot find their libraries; use an absolute RUNPATH)"
            }
            return .failure(RefusalReason(reason))
        case .success(let h):
            handle = h
        }
        // The library stays loaded for good (no dlclose), so its descriptor
        // must too: glibc knows the library by the name `/proc/self/fd/N` and
        // would return it again for another file that reused number N.
        _ = file.release()

        guard let abiSymbol = LibPluginHost.dlsym(handle, FlowKitABI.abiSymbol) else {
            return .failure(RefusalReason("missing entry symbol \(FlowKitABI.abiSymbol); is it a flowd plugin?"))
        }
        let abiFunction = unsafeBitCast(abiSymbol, to: (@convention(c) () -> UInt32).self)
        let abi = abiFunction()
        guard abi == hostABI else {
            return .failure(RefusalReason(abiMismatch(abi, host: hostABI)))
        }
        guard let registerSymbol = LibPluginHost.dlsym(handle, FlowKitABI.registerSymbol) else {
            return .failure(RefusalReason("missing entry symbol \(FlowKitABI.registerSymbol)"))
        }
        let register = unsafeBitCast(registerSymbol, to: (@convention(c) () -> UnsafeMutableRawPointer?).self)
        guard let pointer = register() else {
            return .failure(RefusalReason("its entry point \(FlowKitABI.registerSymbol) returned no registration"))
        }
        let registration = PluginRegistration.takeExported(pointer)
        guard registration.abiVersion == hostABI else {
            return .failure(
                RefusalReason(
                    "registration says FlowKit ABI \(abiText(registration.abiVersion)), this flowd has ABI "
                        + abiText(hostABI)))
        }
        return .success(registration)
    }

    // MARK: registration checks

    /// The first problem with the registration's names and option
    /// declarations (one per capability, in order), or nil.
    func validate(_ r: PluginRegistration, declarations: [[PluginOption]?]) -> String? {
        if !Self.isValidPluginName(r.name) {
            return "invalid plugin name \"\(printable(r.name))\": use lowercase letters, digits, "
                + "'-' and '_' in dot-separated parts, at most \(PluginLoader.Limits.maxNameLength) characters"
        }
        if r.version.isEmpty || r.version.unicodeScalars.count > PluginLoader.Limits.maxVersionLength
            || r.version.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        {
            return "invalid version \"\(printable(r.version))\": 1 to \(PluginLoader.Limits.maxVersionLength) "
                + "printable characters"
        }
        if r.capabilities.isEmpty {
            return "registers no capabilities"
        }
        if r.capabilities.count > PluginLoader.Limits.maxCapabilities {
            return "registers \(r.capabilities.count) capabilities, at most "
                + "\(PluginLoader.Limits.maxCapabilities) are allowed"
        }
        var seen = Set<String>()
        for c in r.capabilities {
            if !Self.isValidCapabilityName(c.name) {
                return "invalid capability name \"\(printable(c.name))\": use dot-separated parts "
                    + "(at least two) of lowercase letters, digits, '-' and '_'"
            }
            if !seen.insert(c.name).inserted {
                return "registers capability \(c.name) twice"
            }
        }
        for (c, declared) in zip(r.capabilities, declarations) {
            if let declared, let problem = PluginOption.declarationProblem(in: declared) {
                return "capability \(c.name) \(problem)"
            }
        }
        return nil
    }

    /// A plugin name: one or more dot-separated parts.
    static func isValidPluginName(_ name: String) -> Bool {
        isDotted(name, minimumParts: 1)
    }

    /// A capability name: two or more dot-separated parts (`vendor.thing`).
    static func isValidCapabilityName(_ name: String) -> Bool {
        isDotted(name, minimumParts: 2)
    }

    private static func isDotted(_ name: String, minimumParts: Int) -> Bool {
        let scalars = name.unicodeScalars
        guard !scalars.isEmpty, scalars.count <= PluginLoader.Limits.maxNameLength else { return false }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= minimumParts else { return false }
        return parts.allSatisfy { part in
            guard let first = part.unicodeScalars.first, isLowerAlphanumeric(first) else { return false }
            return part.unicodeScalars.allSatisfy { isLowerAlphanumeric($0) || $0 == "-" || $0 == "_" }
        }
    }

    private static func isLowerAlphanumeric(_ s: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(s) || ("0"..."9").contains(s)
    }
}

/// The descriptor numbers this process has passed to `dlopen` as
/// `/proc/self/fd/N`: glibc remembers each of those names for good.
enum DescriptorNames {
    private static let used = LockedValue(Set<Int32>())

    /// Records `fd` as used; false when it had been used already.
    static func claim(_ fd: Int32) -> Bool {
        used.withLock { $0.insert(fd).inserted }
    }
}

/// A one-line reason a plugin was refused.
struct RefusalReason: Error {
    var text: String
    init(_ text: String) { self.text = text }
}

/// A name cut short and with control characters replaced, safe for one line.
func printable(_ s: String) -> String {
    let cleaned = String(
        String.UnicodeScalarView(
            s.unicodeScalars.prefix(120).map { $0.properties.generalCategory == .control ? "?" : $0 }))
    return s.unicodeScalars.count > 120 ? cleaned + "…" : cleaned
}

/// An ABI number as people see it: the hand-bumped numbers of SDK 1.0
/// (1 to 3) in decimal, the fingerprint-derived ones (SDK 1.1 on) in hex.
package func abiText(_ abi: UInt32) -> String {
    guard abi >= 0x8000_0000 else { return String(abi) }
    let digits = String(abi, radix: 16)
    return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
}

/// The reason for a plugin whose ABI number is not the host's: which
/// FlowKit it was built with, which the host has, and what to do.
func abiMismatch(_ abi: UInt32, host: UInt32) -> String {
    let built = "built against FlowKit ABI \(abiText(abi)), this flowd has ABI \(abiText(host))"
    if abi < 0x8000_0000 && host >= 0x8000_0000 {
        return built + " (the plugin's SDK is older than 1.1): rebuild it with this flowd's SDK"
    }
    return built + " (another FlowKit interface): rebuild it with this flowd's SDK and toolchain"
}

/// `0644`.
func octal(_ mode: UInt32) -> String {
    let digits = String(mode, radix: 8)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}
