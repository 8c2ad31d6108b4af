/// Drops every record (``Logger/discard``).
package struct DiscardingBackend: LogBackend {
    package init() {}
    package func write(_ record: LogRecord) {}
}
