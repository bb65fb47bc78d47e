import SignupProtocol

/// The records of a version-4 handover state, one mapping each way per type, in the order
/// the fields are declared. A session names its form definition by index into the state's
/// table (`HandoverFormTable`); values and bytes are stored as they are.
extension HandoverState.SessionRecord {
    /// Flags for the optional fields, in one byte.
    private enum Present {
        static let owner: UInt8 = 1 << 0
        static let uid: UInt8 = 1 << 1
        static let client: UInt8 = 1 << 2
        static let address: UInt8 = 1 << 3
        static let resume: UInt8 = 1 << 4
        static let detached: UInt8 = 1 << 5
        static let all: UInt8 = 0x3F
    }

    func write(to writer: inout BinaryWriter, forms: HandoverFormTable) {
        writer.string(id)
        writer.varint(seq)
        writer.signed(ageNanoseconds)
        var present: UInt8 = 0
        if owner != nil { present |= Present.owner }
        if uid != nil { present |= Present.uid }
        if client != nil { present |= Present.client }
        if address != nil { present |= Present.address }
        if resume != nil { present |= Present.resume }
        if detachedNanoseconds != nil { present |= Present.detached }
        writer.byte(present)
        if let owner { writer.string(owner) }
        if let uid { writer.varint(UInt64(uid)) }
        if let client { writer.string(client) }
        if let address { writer.string(address) }
        if let resume { writer.string(resume) }
        if let detachedNanoseconds { writer.signed(detachedNanoseconds) }
        writer.array(views) { $0.string($1) }
        form.write(to: &writer, forms: forms)
    }

    init(reading reader: inout BinaryReader, forms: [FormDefinition]) throws(HandoverStateError) {
        let id = try reader.string("a session's id")
        let seq = try reader.varint("session \(id)'s seq")
        let age = try reader.signed("session \(id)'s age")
        let present = try reader.byte("session \(id)'s flags")
        guard present & ~Present.all == 0 else { throw .malformed("session \(id)'s flags: \(present)") }
        let owner = present & Present.owner != 0 ? try reader.string("session \(id)'s owner") : nil
        let uid = present & Present.uid != 0 ? try reader.uint32("session \(id)'s uid") : nil
        let client = present & Present.client != 0 ? try reader.string("session \(id)'s client") : nil
        let address = present & Present.address != 0 ? try reader.string("session \(id)'s address") : nil
        let resume = present & Present.resume != 0 ? try reader.string("session \(id)'s resume secret") : nil
        let detached = present & Present.detached != 0 ? try reader.signed("session \(id)'s detached time") : nil
        let views = try reader.array("session \(id)'s views") { reader throws(HandoverStateError) in try reader.string("a view") }
        let form = try FormSession(reading: &reader, forms: forms, session: id)
        self.init(
            id: id, form: form, seq: seq, ageNanoseconds: age, owner: owner, views: views, uid: uid, client: client, address: address, resume: resume,
            detachedNanoseconds: detached)
    }
}

extension HandoverState.ConnectionRecord {
    private enum Present {
        static let client: UInt8 = 1 << 0
        static let address: UInt8 = 1 << 1
        static let uid: UInt8 = 1 << 2
        static let discarding: UInt8 = 1 << 3
        static let all: UInt8 = 0x0F
    }

    func write(to writer: inout BinaryWriter) {
        writer.string(name)
        writer.array(sessions) { $0.string($1) }
        writer.array(lines) { writer, line in
            switch line {
            case .line(let bytes):
                writer.byte(0)
                writer.data(bytes.bytes)
            case .tooLong:
                writer.byte(1)
            }
        }
        writer.data(partial.bytes)
        writer.data(unsent.bytes)
        var present: UInt8 = discarding ? Present.discarding : 0
        if client != nil { present |= Present.client }
        if address != nil { present |= Present.address }
        if uid != nil { present |= Present.uid }
        writer.byte(present)
        if let client { writer.string(client) }
        if let address { writer.string(address) }
        if let uid { writer.varint(UInt64(uid)) }
    }

    init(reading reader: inout BinaryReader) throws(HandoverStateError) {
        let name = try reader.string("a connection's name")
        let sessions = try reader.array("connection \(name)'s sessions") { reader throws(HandoverStateError) in try reader.string("a session id") }
        let lines = try reader.array("connection \(name)'s waiting lines") { reader throws(HandoverStateError) -> HandoverState.PendingLine in
            switch try reader.byte("a waiting line's kind") {
            case 0: .line(HandoverBytes(try reader.data("a waiting line")))
            case 1: .tooLong
            case let other: throw .malformed("connection \(name): waiting line kind \(other)")
            }
        }
        let partial = try reader.data("connection \(name)'s partial line")
        let unsent = try reader.data("connection \(name)'s unsent output")
        let present = try reader.byte("connection \(name)'s flags")
        guard present & ~Present.all == 0 else { throw .malformed("connection \(name)'s flags: \(present)") }
        let client = present & Present.client != 0 ? try reader.string("connection \(name)'s client") : nil
        let address = present & Present.address != 0 ? try reader.string("connection \(name)'s address") : nil
        let uid = present & Present.uid != 0 ? try reader.uint32("connection \(name)'s uid") : nil
        self.init(
            name: name, sessions: sessions, lines: lines, partial: partial, discarding: present & Present.discarding != 0, unsent: unsent, client: client,
            address: address, uid: uid)
    }
}

extension FormSession {
    func write(to writer: inout BinaryWriter, forms: HandoverFormTable) {
        writer.varint(forms.index(of: form))
        writer.array(values) { $0.string($1) }
        writer.array(validations) { writer, validation in
            writer.byte(validation.state.code)
            validation.message.write(to: &writer)
        }
        writer.byte(phase.code)
        writer.string(locale)
        writer.optional(lastResult) { writer, result in
            writer.bool(result.ok)
            result.message.write(to: &writer)
            writer.optional(result.user) { $0.string($1) }
        }
        writer.optional(pendingCheck) { $1.write(to: &$0) }
        writer.array(pendingQuality) { $1.write(to: &$0) }
        writer.varint(lastCheckID)
    }

    init(reading reader: inout BinaryReader, forms: [FormDefinition], session id: String) throws(HandoverStateError) {
        let index = try reader.int("session \(id)'s form")
        guard forms.indices.contains(index) else { throw .malformed("session \(id) names form definition \(index); the state has \(forms.count)") }
        let form = forms[index]
        let values = try reader.array("session \(id)'s values") { reader throws(HandoverStateError) in try reader.string("a value") }
        let validations = try reader.array("session \(id)'s validations") { reader throws(HandoverStateError) in
            Validation(try ValidationState(code: try reader.byte("a validation's state")), try MessageRef(reading: &reader))
        }
        guard values.count == form.fields.count, validations.count == form.fields.count else {
            throw .malformed("session \(id): \(values.count) values and \(validations.count) validations for a form of \(form.fields.count) fields")
        }
        let phase = try Phase(code: try reader.byte("session \(id)'s phase"))
        let locale = try reader.string("session \(id)'s locale")
        let lastResult = try reader.optional("session \(id)'s result") { reader throws(HandoverStateError) in
            StoredResult(
                ok: try reader.bool("a result's outcome"), message: try MessageRef(reading: &reader),
                user: try reader.optional("a result's user") { reader throws(HandoverStateError) in try reader.string("a result's user") })
        }
        let pendingCheck = try reader.optional("session \(id)'s check in flight") { reader throws(HandoverStateError) in try PendingCheck(reading: &reader) }
        let pendingQuality = try reader.array("session \(id)'s quality checks") { reader throws(HandoverStateError) in try PendingCheck(reading: &reader) }
        let lastCheckID = try reader.varint("session \(id)'s last check")
        self.init(
            decoded: form, values: values, validations: validations, phase: phase, locale: locale, lastResult: lastResult, pendingCheck: pendingCheck,
            pendingQuality: pendingQuality, lastCheckID: lastCheckID)
    }
}

extension FormSession.PendingCheck {
    func write(to writer: inout BinaryWriter) {
        writer.varint(id)
        writer.varint(field)
        writer.string(value)
        writer.signed(deadline.nanoseconds)
    }

    init(reading reader: inout BinaryReader) throws(HandoverStateError) {
        id = try reader.varint("a check's id")
        field = try reader.int("a check's field")
        value = try reader.string("a check's value")
        deadline = Moment(nanoseconds: try reader.signed("a check's deadline"))
    }
}

extension MessageRef {
    func write(to writer: inout BinaryWriter) {
        writer.string(id)
        writer.array(params) { writer, parameter in
            writer.string(parameter.name)
            switch parameter.value {
            case .integer(let value):
                writer.byte(0)
                writer.signed(Int64(value))
            case .string(let value):
                writer.byte(1)
                writer.string(value)
            }
        }
    }

    init(reading reader: inout BinaryReader) throws(HandoverStateError) {
        let id = try reader.string("a message id")
        let params = try reader.array("message \(id)'s parameters") { reader throws(HandoverStateError) -> LocalizedMessage.Parameter in
            let name = try reader.string("a parameter's name")
            switch try reader.byte("parameter \(name)'s kind") {
            case 0: return .init(name, .integer(Int(try reader.signed("parameter \(name)"))))
            case 1: return .init(name, .string(try reader.string("parameter \(name)")))
            case let other: throw .malformed("parameter \(name): kind \(other)")
            }
        }
        self.init(id, params)
    }
}

/// The one byte each enumeration is stored as; a code this signupd does not know is malformed.
extension ValidationState {
    var code: UInt8 {
        switch self {
        case .empty: 0
        case .validating: 1
        case .ok: 2
        case .failed: 3
        }
    }

    init(code: UInt8) throws(HandoverStateError) {
        switch code {
        case 0: self = .empty
        case 1: self = .validating
        case 2: self = .ok
        case 3: self = .failed
        default: throw .malformed("validation state \(code)")
        }
    }
}

extension FormSession.Phase {
    var code: UInt8 {
        switch self {
        case .editing: 0
        case .submitting: 1
        case .finished: 2
        }
    }

    init(code: UInt8) throws(HandoverStateError) {
        switch code {
        case 0: self = .editing
        case 1: self = .submitting
        case 2: self = .finished
        default: throw .malformed("phase \(code)")
        }
    }
}
