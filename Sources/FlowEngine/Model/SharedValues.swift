/// A definition's values behind one shared reference that never changes.
///
/// Steps and fields are taken out of the flow's arrays on every call (the
/// moves, the checks, the pages): with their values here, a copy is one
/// reference instead of some twenty (docs/performance.md, "The eighth round"
/// and "The tenth round"). Only the loader changes a value, and a change puts
/// a new reference in place, so copies that share one never see it change.
/// The class holds a `let`, so a read is a load with no exclusivity check.
struct SharedValues<Values: Sendable & Hashable>: Sendable, Hashable {
    private final class Box: Sendable {
        let values: Values
        init(_ values: Values) { self.values = values }
    }

    private var box: Box

    init(_ values: Values) { box = Box(values) }

    /// The values; a read of one of them loads only that one once inlined.
    @inline(__always)
    var values: Values { box.values }

    /// Changes values: a new reference with them.
    mutating func edit(_ change: (inout Values) -> Void) {
        var values = box.values
        change(&values)
        box = Box(values)
    }

    static func == (a: SharedValues, b: SharedValues) -> Bool {
        a.box === b.box || a.box.values == b.box.values
    }

    func hash(into hasher: inout Hasher) { box.values.hash(into: &hasher) }
}
