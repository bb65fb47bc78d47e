/// Everything a new signupd process needs to carry on where the old one stopped, across a
/// `systemctl restart` or a package upgrade: every live session and every client
/// connection, named by the `FDNAME=` it has in systemd's file descriptor store.
///
/// It holds what users typed, passwords included: it only ever travels in a sealed memfd
/// private to the service (see `HandoverCodec`), never a file.
public struct HandoverState: Sendable, Codable, Equatable {
    public var sessions: [SessionRecord]
    public var connections: [ConnectionRecord]

    public init(sessions: [SessionRecord] = [], connections: [ConnectionRecord] = []) {
        self.sessions = sessions
        self.connections = connections
    }

    /// `forms` (format version 3): the definitions sessions name by index, read first.
    private enum CodingKeys: String, CodingKey {
        case sessions, connections, forms
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let forms = try container.decodeIfPresent([FormDefinition].self, forKey: .forms) {
            guard let table = decoder.userInfo[HandoverFormTable.key] as? HandoverFormTable else {
                throw DecodingError.dataCorruptedError(forKey: .forms, in: container, debugDescription: "form definitions without a table to read them into")
            }
            table.adopt(forms)
        }
        sessions = try container.decode([SessionRecord].self, forKey: .sessions)
        connections = try container.decode([ConnectionRecord].self, forKey: .connections)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sessions, forKey: .sessions)
        try container.encode(connections, forKey: .connections)
        if let table = encoder.userInfo[HandoverFormTable.key] as? HandoverFormTable {
            try container.encode(table.forms, forKey: .forms)
        }
    }

    /// One live session: the engine's whole state (form, locale, values, validations and
    /// their messages, its `Phase` — editing, submitting or finished — and checks in flight),
    /// the last `seq` it sent, and its age.
    public struct SessionRecord: Sendable, Codable, Equatable {
        public var id: String
        public var form: FormSession
        public var seq: UInt64
        /// How long it had been open when frozen, in nanoseconds (format version 2).
        public var ageNanoseconds: Int64
        /// The opening connection's name; the session ends when it closes. nil: its
        /// connection dropped (or was not carried) and it waits for `resume`.
        public var owner: String?
        /// Connections attached as views, in the order they attached.
        public var views: [String]
        /// Who opened it: the peer uid and, for a trusted front end, the client it named
        /// and the client's address (format version 3; absent before).
        public var uid: UInt32?
        public var client: String?
        public var address: String?
        /// The `resume` secret its `opened` carried.
        public var resume: String?
        /// How long it had been waiting for `resume` when frozen, in nanoseconds.
        public var detachedNanoseconds: Int64?

        public init(
            id: String, form: FormSession, seq: UInt64, ageNanoseconds: Int64 = 0, owner: String?, views: [String],
            uid: UInt32? = nil, client: String? = nil, address: String? = nil, resume: String? = nil, detachedNanoseconds: Int64? = nil
        ) {
            self.id = id
            self.form = form
            self.seq = seq
            self.ageNanoseconds = ageNanoseconds
            self.owner = owner
            self.views = views
            self.uid = uid
            self.client = client
            self.address = address
            self.resume = resume
            self.detachedNanoseconds = detachedNanoseconds
        }
    }

    /// One client connection: what it holds and the bytes in flight either way.
    public struct ConnectionRecord: Sendable, Codable, Equatable {
        /// Its `FDNAME=` in the file descriptor store.
        public var name: String
        /// The sessions it holds, owned or attached, in order (the last one is the default target).
        public var sessions: [String]
        /// Complete request lines read but not yet handled, in order.
        public var lines: [PendingLine]
        /// The unterminated tail of its input.
        public var partial: HandoverBytes
        /// True while the framer skips the rest of an overlong line.
        public var discarding: Bool
        /// Output produced but not yet taken by the kernel, in order.
        public var unsent: HandoverBytes
        /// The client a trusted front end named on it (`client` op), and its address.
        public var client: String?
        public var address: String?
        /// Its peer's uid: whom its bytes in flight are charged to when the state does not all
        /// fit (`HandoverCodec`). Absent in states written before it was recorded.
        public var uid: UInt32?

        public init(
            name: String, sessions: [String], lines: [PendingLine] = [], partial: [UInt8] = [], discarding: Bool = false, unsent: [UInt8] = [],
            client: String? = nil, address: String? = nil, uid: UInt32? = nil
        ) {
            self.uid = uid
            self.client = client
            self.address = address
            self.name = name
            self.sessions = sessions
            self.lines = lines
            self.partial = HandoverBytes(partial)
            self.discarding = discarding
            self.unsent = HandoverBytes(unsent)
        }
    }

    /// A framed request line waiting to be handled.
    public enum PendingLine: Sendable, Codable, Equatable {
        case line(HandoverBytes)
        /// A line over the limit: answered with `line_too_long` when its turn comes.
        case tooLong
    }

    /// Checks that the records agree with each other: every session's owner and views are
    /// connections, every session a connection holds exists, names and ids are unique.
    public func validate() throws(HandoverStateError) {
        var names = Set<String>()
        for connection in connections where !names.insert(connection.name).inserted {
            throw .malformed("connection \(connection.name) appears twice")
        }
        var ids = Set<String>()
        for session in sessions {
            guard ids.insert(session.id).inserted else { throw .malformed("session \(session.id) appears twice") }
            if let owner = session.owner {
                guard names.contains(owner) else { throw .malformed("session \(session.id) is owned by unknown connection \(owner)") }
            } else if session.uid == nil {
                throw .malformed("session \(session.id) has neither an owning connection nor an owner uid")
            }
            for view in session.views where !names.contains(view) {
                throw .malformed("session \(session.id) has unknown view \(view)")
            }
        }
        for connection in connections {
            for id in connection.sessions where !ids.contains(id) {
                throw .malformed("connection \(connection.name) holds unknown session \(id)")
            }
        }
    }
}

/// Bytes, encoded compactly (base64) in the state's payload.
public struct HandoverBytes: Sendable, Equatable, Codable {
    public var bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let bytes = Base64.decode(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not base64"))
        }
        self.bytes = bytes
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Base64.encode(bytes))
    }
}
