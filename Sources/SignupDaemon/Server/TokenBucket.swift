import NIOCore

/// The one token bucket every budget uses (expensive requests per connection, connects per
/// uid, availability checks per uid and per session, carried connections per uid): `rate`
/// tokens a second up to `capacity`, starting full.
///
/// Two ways to spend: `take` refuses when no token is there; `reserve` always takes one,
/// going into debt, and says how long until the debt is paid (a check past its budget is
/// not refused but started in its turn).
struct TokenBucket: Sendable, Equatable {
    /// Tokens added per second.
    let rate: Double
    /// The most it holds (the burst).
    let capacity: Double
    private(set) var tokens: Double
    private var refilled: NIODeadline

    init(rate: Double, capacity: Double, now: NIODeadline) {
        self.rate = rate
        self.capacity = capacity
        tokens = capacity
        refilled = now
    }

    /// A bucket whose burst is twice its rate (the budgets' usual shape).
    init(perSecond: Double, now: NIODeadline) {
        self.init(rate: perSecond, capacity: perSecond * 2, now: now)
    }

    /// Adds what the time since the last refill earned. A clock going back earns nothing,
    /// then or when it comes forward again (the time is not counted twice).
    mutating func refill(now: NIODeadline) {
        guard now > refilled else { return }
        let elapsed = Double((now - refilled).nanoseconds) / 1e9
        refilled = now
        tokens = min(capacity, tokens + elapsed * rate)
    }

    /// Takes `count` tokens (one by default) if they are there.
    mutating func take(_ count: Int = 1, now: NIODeadline) -> Bool {
        refill(now: now)
        guard tokens >= Double(count) else { return false }
        tokens -= Double(count)
        return true
    }

    /// Takes one token, into debt if need be; how long until the debt is paid (zero: none).
    mutating func reserve(now: NIODeadline) -> TimeAmount {
        refill(now: now)
        tokens -= 1
        return tokens >= 0 ? .zero : .nanoseconds(Int64((-tokens / rate * 1e9).rounded(.up)))
    }

    /// Gives one token back (a reservation that will never be used).
    mutating func refund() {
        tokens = min(capacity, tokens + 1)
    }

    /// Full: the same as a new bucket, so a table of buckets may forget it.
    var isFull: Bool { tokens >= capacity }
}

/// Token buckets by key (uid, …), holding only the keys that spent recently: a full bucket
/// is the default and is forgotten.
struct TokenBuckets<Key: Hashable & Sendable>: Sendable {
    let rate: Double
    let capacity: Double
    private var buckets: [Key: TokenBucket] = [:]
    /// The table is swept of refilled buckets when it grows past this.
    private let sweepAbove: Int

    init(rate: Double, capacity: Double, sweepAbove: Int = 1024) {
        self.rate = rate
        self.capacity = capacity
        self.sweepAbove = sweepAbove
    }

    init(perSecond: Double) {
        self.init(rate: perSecond, capacity: perSecond * 2)
    }

    /// Takes one of `key`'s tokens if one is there.
    mutating func take(_ key: Key, now: NIODeadline) -> Bool {
        update(key, now: now) { $0.take(now: now) }
    }

    /// Takes one of `key`'s tokens, into debt if need be (`TokenBucket.reserve`).
    mutating func reserve(_ key: Key, now: NIODeadline) -> TimeAmount {
        update(key, now: now) { $0.reserve(now: now) }
    }

    /// Gives `key` one token back.
    mutating func refund(_ key: Key) {
        guard var bucket = buckets[key] else { return }
        bucket.refund()
        buckets[key] = bucket.isFull ? nil : bucket
    }

    /// `key`'s bucket as it is now (a full one if it has none).
    func bucket(_ key: Key, now: NIODeadline) -> TokenBucket {
        var bucket = buckets[key] ?? TokenBucket(rate: rate, capacity: capacity, now: now)
        bucket.refill(now: now)
        return bucket
    }

    /// Keys holding a bucket that is not full (for tests).
    var count: Int { buckets.count }

    private mutating func update<T>(_ key: Key, now: NIODeadline, _ body: (inout TokenBucket) -> T) -> T {
        var bucket = buckets[key] ?? TokenBucket(rate: rate, capacity: capacity, now: now)
        let result = body(&bucket)
        buckets[key] = bucket.isFull ? nil : bucket
        if buckets.count > sweepAbove {
            buckets = buckets.filter { _, old in
                var old = old
                old.refill(now: now)
                return !old.isFull
            }
        }
        return result
    }
}
