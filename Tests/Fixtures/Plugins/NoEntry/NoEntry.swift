// FixtureNoEntryPlugin: a shared library that is not a flowd plugin: it has
// neither entry symbol.
import FlowKit

@_cdecl("something_else_entirely")
public func somethingElseEntirely() -> UInt32 { 42 }
