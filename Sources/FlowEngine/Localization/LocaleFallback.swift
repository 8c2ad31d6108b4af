import FlowKit

/// How a requested locale is matched against the locales a text is available
/// in: FlowKit's ``LocaleChain``, the one chain for flowd's strings, flow
/// files and plugins' messages alike (its doc has the steps). This name is
/// the one flowd's modules use.
package typealias LocaleFallback = LocaleChain
