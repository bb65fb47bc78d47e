// libFuzzer entry point over the line framer, the request decoder and the form engine
// together, as the daemon chains them. Built by scripts/fuzz.sh (not a SwiftPM target:
// libFuzzer brings its own main).
import FormEngine
import SignupProtocol

/// Fails loudly: libFuzzer records the input that got here.
func require(_ condition: Bool, _ what: @autoclosure () -> String) {
    if !condition { fatalError("invariant broken: \(what())") }
}

/// Every event must encode to one line of JSON that parses back as an object.
func checkEncodes(_ event: ServerEvent) {
    let line = event.line
    require(line.last == 0x0A && !line.dropLast().contains(0x0A), "one line per event")
    let parsed = try? JSONParser.parse(Array(line.dropLast()))
    require(parsed?.objectValue?["event"] != nil, "event re-parses: \(String(decoding: line, as: UTF8.self))")
}

/// The engine's own invariants after every step.
func checkInvariants(_ session: FormSession) {
    let allOK = session.validations.allSatisfy { $0.state == .ok }
    require(session.enabled == (allOK && !session.busy && !session.finished), "enabled = all ok and not busy")
    require(session.validations.count == session.form.fields.count, "one validation per field")
    if session.nextDeadline != nil {
        require(session.validations.contains { $0.state == .validating }, "a pending check shows validating")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    var framer = LineFramer(maxLineBytes: 4096)
    var sessions = FormLibrary.builtin.forms.map { FormSession(form: $0) }
    var now = Moment.zero
    var seq: UInt64 = 0
    let outcomes: [SubmitOutcome] = [
        .signedUp(user: "u"), .loggedIn(user: "u", token: "t"), .usernameTaken, .usernameTooSimilar, .invalidCredentials, .rateLimited, .storeUnavailable,
    ]
    let answers: [Availability] = [.available, .taken, .tooSimilar, .unreachable]

    func handle(_ line: UnsafeRawBufferPointer) {
        // A plain `set` read straight from its bytes is what the general path reads, and
        // every other line is refused word for word as the general path refuses it.
        let fast = Result { () throws(RequestError) -> Request in try Request.decode(line: line) }
        let full = Result { () throws(RequestError) -> Request in try Request.decodeInFull(line: line) }
        require(fast == full, "the plain-set reader agrees with the general path: \(String(decoding: line, as: UTF8.self).debugDescription)")
        let request: Request
        do {
            request = try Request.decode(line: line)
        } catch {
            checkEncodes(.error(code: error.code, message: error.message, session: nil, id: error.id))
            return
        }
        now = now + .milliseconds(Int64(line.count % 700))
        let which = line.count % sessions.count
        let input: FormInput
        switch request.operation {
        case .set(_, let field, let value): input = .set(field: field, value: value)
        case .submit: input = .submit
        case .ping, .describe, .sessions, .allSessions, .status, .client: input = .tick
        case .signups(let pause, let message): input = .signupsPaused(pause == true ? SignupPause(note: message) : nil)
        case .verify(let token), .logout(let token): input = .availability(check: UInt64(token.utf8.count % 5), answers[token.utf8.count % 3])
        case .open(let form, _): input = .submitCompleted(outcomes[form.utf8.count % outcomes.count])
        case .locale(_, let locale): input = .setLocale(locale)
        case .attach(let s), .resume(let s, _), .close(.some(let s)), .snapshot(.some(let s)): input = .set(field: "username", value: s)
        case .close(nil), .snapshot(nil):
            for event in sessions[which].snapshot() {
                seq += 1
                checkEncodes(.session(session: "s", seq: seq, event, id: request.id))
            }
            return
        }
        do {
            let step = try sessions[which].handle(input, now: now)
            for event in step.events {
                seq += 1
                checkEncodes(.session(session: "s", seq: seq, event, id: request.id))
            }
            for effect in step.effects {
                if case .startCheck(let id, let identity, _) = effect {
                    let value = identity.value
                    switch identity.kind {
                    case .username: require(UsernameRules.hasOnlyLettersAndDigits(value) && !value.isEmpty, "only valid names are checked")
                    case .phone:
                        let verdict = PhoneNumberText.ascii(value).map { PhoneNumberRule.basic.parse($0, identity.region) }
                        require(verdict.map { ($0.nationalDigits ?? 0) >= 11 || !$0.inRegion } == true && PhoneNumberRule.basic.identity(of: value, region: identity.region) != nil, "only valid phone numbers are checked")
                    case .email: require(EmailAddresses.isValid(value), "only valid addresses are checked")
                    }
                    require(id > 0, "check ids start at 1")
                }
            }
        } catch {
            // A refusal must leave the session consistent.
        }
        checkInvariants(sessions[which])
    }

    // The same bytes as a form file and a message catalogue: a problem, never a crash.
    let text = String(decoding: bytes, as: UTF8.self)
    if let form = try? FormFile.parse(text, file: "fuzz") {
        require(!form.fields.isEmpty && form.fields[form.identityField].kind.identityKind != nil, "a parsed form has an identity")
    }
    _ = try? MessageFile.parse(text, locale: "en", file: "fuzz")

    // Feed in two chunks split where the first byte says, to exercise partial lines.
    let split = size > 0 ? Int(bytes[0]) % (size + 1) : 0
    framer.feed(UnsafeRawBufferPointer(rebasing: bytes[..<split])) { frame in
        if case .line(let line) = frame { handle(line) }
    }
    framer.feed(UnsafeRawBufferPointer(rebasing: bytes[split...])) { frame in
        if case .line(let line) = frame { handle(line) }
    }
    framer.finish { frame in
        if case .line(let line) = frame { handle(line) }
    }
    return 0
}
