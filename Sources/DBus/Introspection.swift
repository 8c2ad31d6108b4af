/// Renders `org.freedesktop.DBus.Introspectable` XML from member tables.
enum Introspection {
    static let header = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">

        """

    /// A whole document: `interfaces` (rendered already), then child nodes.
    static func document(interfaces: [String], children: [String]) -> String {
        var xml = header + "<node>\n"
        for interface in interfaces { xml += interface }
        for child in children { xml += " <node name=\"\(escape(child))\"/>\n" }
        return xml + "</node>\n"
    }

    /// What every exported object implements besides its own tables.
    static let objectInterfaces = [peer, introspectable, properties]

    /// What a path with no object but objects below it answers.
    static let nodeInterfaces = [peer, introspectable]

    static let peer = """
         <interface name="org.freedesktop.DBus.Peer">
          <method name="Ping"/>
          <method name="GetMachineId">
           <arg name="machine_uuid" type="s" direction="out"/>
          </method>
         </interface>

        """

    static let introspectable = """
         <interface name="org.freedesktop.DBus.Introspectable">
          <method name="Introspect">
           <arg name="xml_data" type="s" direction="out"/>
          </method>
         </interface>

        """

    static let properties = """
         <interface name="org.freedesktop.DBus.Properties">
          <method name="Get">
           <arg name="interface_name" type="s" direction="in"/>
           <arg name="property_name" type="s" direction="in"/>
           <arg name="value" type="v" direction="out"/>
          </method>
          <method name="GetAll">
           <arg name="interface_name" type="s" direction="in"/>
           <arg name="props" type="a{sv}" direction="out"/>
          </method>
          <method name="Set">
           <arg name="interface_name" type="s" direction="in"/>
           <arg name="property_name" type="s" direction="in"/>
           <arg name="value" type="v" direction="in"/>
          </method>
          <signal name="PropertiesChanged">
           <arg name="interface_name" type="s"/>
           <arg name="changed_properties" type="a{sv}"/>
           <arg name="invalidated_properties" type="as"/>
          </signal>
         </interface>

        """

    /// One `<interface>` element, members in table order.
    static func interface<Target>(_ table: InterfaceTable<Target>) -> String {
        var xml = " <interface name=\"\(escape(table.name.rawValue))\">\n"
        for annotation in table.annotations { xml += annotationXML(annotation, indent: "  ") }
        for method in table.methods {
            let body = method.inputs.map { argument($0, direction: "in") } + method.outputs.map { argument($0, direction: "out") }
                + method.annotations.map { annotationXML($0, indent: "   ") }
            xml += element("method", name: method.name.rawValue, attributes: "", body: body)
        }
        for signal in table.signals {
            let body = signal.arguments.map { argument($0, direction: nil) } + signal.annotations.map { annotationXML($0, indent: "   ") }
            xml += element("signal", name: signal.name.rawValue, attributes: "", body: body)
        }
        for property in table.properties {
            var annotations = property.annotations
            if property.emitsChange != .yes {
                annotations.insert(Annotation("org.freedesktop.DBus.Property.EmitsChangedSignal", property.emitsChange.rawValue), at: 0)
            }
            let attributes = " type=\"\(escape(property.signature.rawValue))\" access=\"\(property.access.rawValue)\""
            xml += element("property", name: property.name.rawValue, attributes: attributes,
                           body: annotations.map { annotationXML($0, indent: "   ") })
        }
        return xml + " </interface>\n"
    }

    private static func element(_ tag: String, name: String, attributes: String, body: [String]) -> String {
        let open = "  <\(tag) name=\"\(escape(name))\"\(attributes)"
        if body.isEmpty { return open + "/>\n" }
        return open + ">\n" + body.joined() + "  </\(tag)>\n"
    }

    private static func argument(_ argument: Argument, direction: String?) -> String {
        let name = argument.name.isEmpty ? "" : " name=\"\(escape(argument.name))\""
        let direction = direction.map { " direction=\"\($0)\"" } ?? ""
        return "   <arg\(name) type=\"\(escape(argument.signature.rawValue))\"\(direction)/>\n"
    }

    private static func annotationXML(_ annotation: Annotation, indent: String) -> String {
        "\(indent)<annotation name=\"\(escape(annotation.name))\" value=\"\(escape(annotation.value))\"/>\n"
    }

    /// Escapes text for an XML attribute value.
    static func escape(_ text: String) -> String {
        guard text.contains(where: { "&<>\"'".contains($0) }) else { return text }
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            default: result.append(character)
            }
        }
        return result
    }
}
