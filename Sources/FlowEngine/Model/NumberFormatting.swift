/// A number as a person writes it: `3`, not `3.0`. Used in lint problems,
/// validation messages and Review.
func formatNumber(_ d: Double) -> String {
    if d.rounded() == d && abs(d) < 1e15 { return String(Int64(d)) }
    return d.description
}
