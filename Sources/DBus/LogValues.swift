import Logging

// What the connection may put into a log line: names and signatures are
// validated identifiers, never argument values; an error's text is the
// library's or the handler's own sentence.

extension BusName: LogValue { package var logText: String { rawValue } }
extension ObjectPath: LogValue { package var logText: String { rawValue } }
extension InterfaceName: LogValue { package var logText: String { rawValue } }
extension MemberName: LogValue { package var logText: String { rawValue } }
extension ErrorName: LogValue { package var logText: String { rawValue } }
extension Signature: LogValue { package var logText: String { rawValue } }
extension DBusError: LogValue { package var logText: String { description } }
