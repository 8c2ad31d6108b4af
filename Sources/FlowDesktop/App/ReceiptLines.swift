import DBus

/// A receipt (`Receipt`, `a{sv}`) as the success page lists it: the
/// `reference` first, under the app's own label for it (the key the shipped
/// submit actions use), then the other keys as they are, in name order.
/// Values are shown as text; nested values are left out.
enum ReceiptLines {
    static func make(_ receipt: [String: DBusValue], referenceLabel: String) -> [ReceiptLine] {
        let keys = receipt.keys.sorted { a, b in a == "reference" || (b != "reference" && a < b) }
        return keys.compactMap { key in
            guard let value = receipt[key].flatMap(text) else { return nil }
            return ReceiptLine(label: key == "reference" ? referenceLabel : key, value: value)
        }
    }

    private static func text(_ value: DBusValue) -> String? {
        switch value {
        case .string(let s): return s
        case .bool(let b): return String(b)
        case .int64(let i): return String(i)
        case .int32(let i): return String(i)
        case .uint32(let u): return String(u)
        case .uint64(let u): return String(u)
        case .double(let d): return Int64(exactly: d).map(String.init) ?? String(d)
        case .variant(let inner): return text(inner)
        default: return nil
        }
    }
}
