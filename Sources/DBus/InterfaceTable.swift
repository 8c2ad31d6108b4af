/// A named, typed argument of a method or signal, as introspection shows it.
package struct Argument: Sendable, Hashable {
    /// The name shown in introspection (may be empty).
    package var name: String
    /// The argument's type: one complete type.
    package var signature: Signature

    /// An argument `name` of type `signature`.
    package init(_ name: String, _ signature: Signature) {
        self.name = name
        self.signature = signature
    }
}

/// An introspection annotation (`org.freedesktop.DBus.Deprecated` = `true`).
package struct Annotation: Sendable, Hashable {
    /// The annotation's name.
    package var name: String
    /// Its value, as text.
    package var value: String

    /// An annotation `name` = `value`.
    package init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }

    /// `org.freedesktop.DBus.Deprecated`
    package static let deprecated = Annotation("org.freedesktop.DBus.Deprecated", "true")
    /// `org.freedesktop.DBus.Method.NoReply`: callers need not wait for a reply.
    package static let noReply = Annotation("org.freedesktop.DBus.Method.NoReply", "true")
}

/// Whether and how a property announces changes in `PropertiesChanged`
/// (the `org.freedesktop.DBus.Property.EmitsChangedSignal` annotation).
package enum EmitsChangedSignal: String, Sendable {
    /// The new value is sent (the default).
    case yes = "true"
    /// Only the name is sent; clients read the value if they care.
    case invalidates
    /// The value never changes for the object's lifetime.
    case const
    /// Changes are not announced.
    case no = "false"
}

/// Who may read and write a property.
package enum PropertyAccess: String, Sendable {
    /// `Get` and `GetAll` only.
    case read
    /// `Set` only.
    case write
    /// Both.
    case readWrite = "readwrite"
}

/// The declarative member table of one interface, for objects of type
/// `Target` (systemd's vtables are the model): methods with their argument
/// signatures and handlers, properties with getters and optional setters,
/// and signals. The ``ObjectServer`` checks calls against it, generates
/// introspection XML from it and serves `org.freedesktop.DBus.Properties`.
///
/// ```swift
/// InterfaceTable<Session>("org.example.Forms1.Session",
///     methods: [
///         .init("SetAnswers", in: [Argument("answers", "a{sv}")], out: [Argument("errors", "a{ss}")]) { session, call in
///             var args = call.arguments()
///             let answers = try args.next([String: DBusValue].self)
///             try call.reply(typed: session.setAnswers(answers))
///         },
///     ],
///     properties: [.read("State", String.self) { $0.state }],
///     signals: [.init("Announcement", [Argument("text", "s")])])
/// ```
package struct InterfaceTable<Target: Sendable>: Sendable {
    /// The interface name.
    package var name: InterfaceName
    /// Methods, in introspection order.
    package var methods: [Method]
    /// Properties, in introspection order.
    package var properties: [Property]
    /// Signals, in introspection order.
    package var signals: [Signal]
    /// Annotations of the interface itself.
    package var annotations: [Annotation]

    /// A table for interface `name`.
    package init(
        _ name: InterfaceName, methods: [Method] = [], properties: [Property] = [], signals: [Signal] = [],
        annotations: [Annotation] = []
    ) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
        self.annotations = annotations
    }

    /// A method and its handler.
    ///
    /// The handler runs synchronously on the loop thread, after the server
    /// checked the call's signature against `in` (and ran the registration's
    /// authorizer, if any). It must complete the ``MethodInvocation`` exactly
    /// once, now or later from any thread; a thrown error completes it with
    /// that error.
    package struct Method: Sendable {
        /// The method name.
        package var name: MemberName
        /// The arguments a call must carry, in order.
        package var inputs: [Argument]
        /// The values the reply carries, in order.
        package var outputs: [Argument]
        /// Annotations (``Annotation/deprecated``, ``Annotation/noReply``).
        package var annotations: [Annotation]
        /// Runs the call on the loop thread; see the type's documentation.
        package var handler: @Sendable (Target, MethodInvocation) throws -> Void

        /// A method `name` taking `in` and replying with `out`.
        package init(
            _ name: MemberName, in inputs: [Argument] = [], out outputs: [Argument] = [], annotations: [Annotation] = [],
            handler: @escaping @Sendable (Target, MethodInvocation) throws -> Void
        ) {
            self.name = name
            self.inputs = inputs
            self.outputs = outputs
            self.annotations = annotations
            self.handler = handler
        }

        /// The signature a call must have: the input types in order.
        package var inputSignature: Signature { Signature(trusted: inputs.map(\.signature.rawValue).joined()) }
        /// The signature of the reply: the output types in order.
        package var outputSignature: Signature { Signature(trusted: outputs.map(\.signature.rawValue).joined()) }
    }

    /// A property: its type, access, change announcements and accessors.
    package struct Property: Sendable {
        /// The property name.
        package var name: MemberName
        /// The property's type: one complete type.
        package var signature: Signature
        /// Who may read and write it.
        package var access: PropertyAccess
        /// How changes are announced (and the introspection annotation).
        package var emitsChange: EmitsChangedSignal
        /// More annotations.
        package var annotations: [Annotation]
        /// Reads the value; it must have type `signature`.
        package var getter: (@Sendable (Target) throws -> DBusValue)?
        /// Stores a value (already checked to have type `signature`); the
        /// invocation of the `Set` call tells who asks.
        package var setter: (@Sendable (Target, DBusValue, MethodInvocation) throws -> Void)?

        /// A property of type `signature` with a getter (nil: write-only) and
        /// an optional setter.
        package init(
            _ name: MemberName, _ signature: Signature, access: PropertyAccess = .read,
            emitsChange: EmitsChangedSignal = .yes, annotations: [Annotation] = [],
            get getter: (@Sendable (Target) throws -> DBusValue)?,
            set setter: (@Sendable (Target, DBusValue, MethodInvocation) throws -> Void)? = nil
        ) {
            self.name = name
            self.signature = signature
            self.access = access
            self.emitsChange = emitsChange
            self.annotations = annotations
            self.getter = getter
            self.setter = setter
        }

        /// A read-only property whose type comes from `T`.
        package static func read<T: DBusRepresentable>(
            _ name: MemberName, _ type: T.Type, emitsChange: EmitsChangedSignal = .yes,
            _ getter: @escaping @Sendable (Target) throws -> T
        ) -> Property {
            Property(name, T.dbusSignature, access: .read, emitsChange: emitsChange, get: { try getter($0).dbusValue })
        }

        /// A read-write property whose type comes from `T`.
        package static func readWrite<T: DBusRepresentable>(
            _ name: MemberName, _ type: T.Type, emitsChange: EmitsChangedSignal = .yes,
            get getter: @escaping @Sendable (Target) throws -> T,
            set setter: @escaping @Sendable (Target, T, MethodInvocation) throws -> Void
        ) -> Property {
            Property(
                name, T.dbusSignature, access: .readWrite, emitsChange: emitsChange, get: { try getter($0).dbusValue },
                set: { target, value, call in
                    guard let typed = T(dbusValue: value) else {
                        throw DBusError.invalidArgs("property \(name) has type '\(T.dbusSignature)'")
                    }
                    try setter(target, typed, call)
                })
        }
    }

    /// A signal, declared for introspection and checked when emitted.
    package struct Signal: Sendable {
        /// The signal name.
        package var name: MemberName
        /// Its arguments, in order.
        package var arguments: [Argument]
        /// Annotations.
        package var annotations: [Annotation]

        /// A signal `name` with `arguments`.
        package init(_ name: MemberName, _ arguments: [Argument] = [], annotations: [Annotation] = []) {
            self.name = name
            self.arguments = arguments
            self.annotations = annotations
        }

        /// The signature of the signal's arguments.
        package var signature: Signature { Signature(trusted: arguments.map(\.signature.rawValue).joined()) }
    }
}
