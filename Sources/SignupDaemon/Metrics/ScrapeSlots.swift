/// Who may hold the metrics socket's connections (issue 27's fresh eyes): sixteen uids with
/// four slow scrapers each took all 64 places and kept everyone else's Prometheus out. Each
/// uid may hold `perUID`; when all `total` are taken, a uid holding at least two fewer than
/// the biggest holder still gets in, and the biggest holder's oldest connection gives its
/// place — the rule the client socket follows. Root is never refused. A pure state machine:
/// `MetricsEndpoint` keeps it under a lock and closes what it says.
struct ScrapeSlots<Connection: Hashable & Sendable>: Sendable {
    let total: Int
    let perUID: Int
    /// Each uid's connections, oldest first (nil: a TCP scraper, whose uid is not known).
    private var held: [UInt32?: [Connection]] = [:]
    private(set) var count = 0

    init(total: Int, perUID: Int) {
        self.total = total
        self.perUID = perUID
    }

    enum Admission: Equatable, Sendable {
        case admitted
        /// Admitted in the place of this connection: close it.
        case admittedInPlaceOf(Connection)
        case refused
    }

    mutating func admit(_ connection: Connection, uid: UInt32?) -> Admission {
        let mine = held[uid]?.count ?? 0
        if uid == 0 || count < total {
            guard uid == 0 || uid == nil || mine < perUID else { return .refused }
            add(connection, uid: uid)
            return .admitted
        }
        guard let uid, mine < perUID else { return .refused }
        // The biggest holder among uids (ties: the lowest uid, so the choice is stable).
        let biggest = held.filter { $0.key != nil && $0.key != 0 }.max { ($0.value.count, $1.key!) < ($1.value.count, $0.key!) }
        guard let (victim, connections) = biggest, connections.count >= mine + 2, let oldest = connections.first else { return .refused }
        held[victim]?.removeFirst()
        if held[victim]?.isEmpty == true { held[victim] = nil }
        count -= 1
        add(connection, uid: uid)
        return .admittedInPlaceOf(oldest)
    }

    /// The connection closed (a displaced one was released already: nothing happens).
    mutating func release(_ connection: Connection, uid: UInt32?) {
        guard let index = held[uid]?.firstIndex(of: connection) else { return }
        held[uid]?.remove(at: index)
        if held[uid]?.isEmpty == true { held[uid] = nil }
        count -= 1
    }

    func held(by uid: UInt32?) -> Int { held[uid]?.count ?? 0 }

    private mutating func add(_ connection: Connection, uid: UInt32?) {
        held[uid, default: []].append(connection)
        count += 1
    }
}
