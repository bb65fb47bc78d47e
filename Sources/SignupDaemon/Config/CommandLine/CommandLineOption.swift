/// One option of signupd's command line: its names, its help, and where its value goes.
///
/// signupd parses its command line without reflection (issue 29, the cold start):
/// swift-argument-parser found the options by mirroring every option group and casting
/// each property wrapper, about 3.3 ms of every socket-activated start spent in the Swift
/// runtime's conformance scans. Each option is declared once, beside the field it sets
/// (`PathOptions.options`, …); the parser, `--help`, the usage errors and the description
/// the man page is made from (`--experimental-dump-help`) all read these declarations.
struct CommandLineOption<Root> {
    /// Long names without their dashes; the first is the one `--help` and errors show first.
    var names: [String]
    var kind: CommandLineOptionKind
    var help: String
    /// The section of `--help` it is listed in; nil: the general OPTIONS.
    var section: String?
    /// The field's default, read from a command not yet given any option, shown as
    /// `(default: …)` after the help; nil for options whose field is nil unless given.
    var shownDefault: ((Root) -> String)?
    var isRepeating = false
    /// What a shell completes its value to, when its value's name does not say
    /// (`CommandLineCompletion(valueName:)`).
    var completion: CommandLineCompletion?
    /// Sets the field from the value given (nil for a flag); false when the value is not one.
    var apply: (inout Root, String?) -> Bool

    /// `--name <value>` (or `--name, --other <value>`), as help and errors show it.
    var label: String {
        let spelled = names.map { $0.count == 1 ? "-" + $0 : "--" + $0 }.joined(separator: ", ")
        if case .option(let valueName) = kind { return spelled + " <\(valueName)>" }
        return spelled
    }

    /// The option as seen from a command holding `Root` at `path`, listed under `section`.
    func lifted<Parent>(_ path: WritableKeyPath<Parent, Root>, section: String?) -> CommandLineOption<Parent> {
        let apply = self.apply
        var shownDefault: ((Parent) -> String)?
        if let shown = self.shownDefault { shownDefault = { parent in shown(parent[keyPath: path]) } }
        return CommandLineOption<Parent>(
            names: names, kind: kind, help: help, section: section, shownDefault: shownDefault, isRepeating: isRepeating, completion: completion,
            apply: { parent, value in apply(&parent[keyPath: path], value) }
        )
    }
}

/// Whether an option takes a value.
enum CommandLineOptionKind: Equatable {
    /// Takes a value: `--name value` or `--name=value`.
    case option(valueName: String)
    /// Takes none: `--name`.
    case flag
}

/// A value an option can take, read from its argument.
protocol CommandLineValue {
    init?(commandLineArgument: String)
}

extension String: CommandLineValue {
    init?(commandLineArgument: String) { self = commandLineArgument }
}

extension Int: CommandLineValue {
    init?(commandLineArgument: String) { self.init(commandLineArgument) }
}

extension UInt64: CommandLineValue {
    init?(commandLineArgument: String) { self.init(commandLineArgument) }
}

extension Double: CommandLineValue {
    init?(commandLineArgument: String) {
        guard let value = Double(commandLineArgument), value.isFinite else { return nil }
        self = value
    }
}

extension CommandLineOption {
    /// An option whose field is nil unless given.
    static func option<Value: CommandLineValue>(
        _ name: String, _ field: WritableKeyPath<Root, Value?>, valueName: String, help: String, alias: [String] = []
    ) -> Self {
        Self(names: [name] + alias, kind: .option(valueName: valueName), help: help, apply: { root, text in
            guard let value = Value(commandLineArgument: text ?? "") else { return false }
            root[keyPath: field] = value
            return true
        })
    }

    /// An option whose field has a default, shown by `--help`.
    static func option<Value: CommandLineValue & CustomStringConvertible>(
        _ name: String, _ field: WritableKeyPath<Root, Value>, valueName: String, completion: CommandLineCompletion? = nil, help: String
    ) -> Self {
        Self(names: [name], kind: .option(valueName: valueName), help: help, shownDefault: { $0[keyPath: field].description }, completion: completion, apply: { root, text in
            guard let value = Value(commandLineArgument: text ?? "") else { return false }
            root[keyPath: field] = value
            return true
        })
    }

    /// An option that may be given more than once; each value is kept, in order.
    static func repeating<Value: CommandLineValue>(_ name: String, _ field: WritableKeyPath<Root, [Value]>, valueName: String, help: String) -> Self {
        Self(names: [name], kind: .option(valueName: valueName), help: help, isRepeating: true, apply: { root, text in
            guard let value = Value(commandLineArgument: text ?? "") else { return false }
            root[keyPath: field].append(value)
            return true
        })
    }

    /// A flag: true when given.
    static func flag(_ name: String, _ field: WritableKeyPath<Root, Bool>, help: String) -> Self {
        Self(names: [name], kind: .flag, help: help, apply: { root, _ in
            root[keyPath: field] = true
            return true
        })
    }
}
