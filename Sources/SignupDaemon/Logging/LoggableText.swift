extension String {
    /// The text as it may go into a log line: control characters (C0, DEL, C1), line and
    /// paragraph separators and format characters (bidi overrides, zero-width ones) written
    /// as `\u{…}`, so that a value someone else chose — a front end's client id, a session id
    /// a client sent — cannot forge a log line, colour a terminal or reorder what follows.
    var loggable: String {
        guard unicodeScalars.contains(where: Self.needsEscape) else { return self }
        var text = ""
        for scalar in unicodeScalars {
            if Self.needsEscape(scalar) {
                text += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                text.unicodeScalars.append(scalar)
            }
        }
        return text
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: true
        default: scalar == "\\"
        }
    }
}
