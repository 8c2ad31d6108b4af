/// A value that belongs to one event loop: it may travel to any thread (it is
/// `Sendable`), but reading it anywhere but on its loop's thread traps
/// (swift-nio's `NIOLoopBound`).
///
/// This is how loop-confined objects (the bus front end, the systemd
/// lifecycle, the composition root) are captured by the `@Sendable` closures
/// that loop callbacks, timers and D-Bus handlers are: the confinement is
/// checked at each use instead of promised in a comment on an
/// `@unchecked Sendable` class.
///
/// Only for objects (`Value: AnyObject`): a reference has one layout
/// whatever its class, so the struct's fields sit at fixed offsets, and the
/// initializer, called from other modules as unspecialized generic code, need
/// not look up `LoopBound<Value>`'s metadata for them (330 instructions, once
/// per D-Bus call: docs/performance.md, the twelfth round).
package struct LoopBound<Value: AnyObject>: @unchecked Sendable {
    private let wrapped: Value
    /// The loop the value belongs to.
    package let loop: any EventLoopProtocol

    /// Binds `value` to `loop`. May be made on any thread (before the loop
    /// runs, say); only ``value`` is checked.
    package init(_ value: Value, loop: any EventLoopProtocol) {
        self.wrapped = value
        self.loop = loop
    }

    /// The value. Traps unless called on the loop's thread.
    package var value: Value {
        precondition(loop.inEventLoop, "a loop-bound value was used off its event loop's thread")
        return wrapped
    }
}
