import NIOCore
import Testing
@testable import SignupDaemonCore

/// The one token bucket every budget uses, on virtual time.
@Suite struct TokenBucketTests {
    let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    // Mutating calls cannot sit inside #expect.
    private func take(_ bucket: inout TokenBucket, _ now: NIODeadline) -> Bool { bucket.take(now: now) }
    private func reserve(_ bucket: inout TokenBucket, _ now: NIODeadline) -> TimeAmount { bucket.reserve(now: now) }

    @Test func aBucketStartsFullTakesItsBurstThenRefillsAtItsRate() {
        var bucket = TokenBucket(perSecond: 5, now: start)
        #expect(bucket.capacity == 10 && bucket.isFull)
        for _ in 0..<10 { #expect(take(&bucket, start)) }
        #expect(!take(&bucket, start))
        // A fifth of a second earns one token at 5 a second.
        #expect(!take(&bucket, start + .milliseconds(199)))
        #expect(take(&bucket, start + .milliseconds(200)))
        // Never more than its capacity, however long it waited.
        bucket.refill(now: start + .seconds(3600))
        #expect(bucket.tokens == 10 && bucket.isFull)
    }

    @Test func aClockGoingBackEarnsNothing() {
        var bucket = TokenBucket(rate: 1, capacity: 1, now: start + .seconds(10))
        #expect(take(&bucket, start + .seconds(10)))
        #expect(!take(&bucket, start))
        #expect(!take(&bucket, start + .seconds(10)))
        #expect(take(&bucket, start + .seconds(11)))
    }

    @Test func aReservationGoesIntoDebtAndSaysWhenItIsPaid() {
        var bucket = TokenBucket(rate: 2, capacity: 2, now: start)
        #expect(reserve(&bucket, start) == .zero)
        #expect(reserve(&bucket, start) == .zero)
        // The third waits half a second, the fourth a whole one: each has its own turn.
        #expect(reserve(&bucket, start) == .milliseconds(500))
        #expect(reserve(&bucket, start) == .seconds(1))
        bucket.refund()
        #expect(reserve(&bucket, start) == .seconds(1))
    }

    @Test func aTableOfBucketsForgetsFullOnesAndKeysApart() {
        var buckets = TokenBuckets<UInt32>(rate: 1, capacity: 2, sweepAbove: 4)
        let first = buckets.take(7, now: start)
        let second = buckets.take(7, now: start)
        let third = buckets.take(7, now: start)
        #expect(first && second && !third)
        // Another key has its own bucket.
        let other = buckets.take(8, now: start)
        #expect(other)
        #expect(buckets.count == 2)
        // Refunded to full: forgotten.
        buckets.refund(8)
        #expect(buckets.count == 1)
        // Past `sweepAbove` keys, those refilled since are swept.
        for key: UInt32 in 100..<105 { _ = buckets.take(key, now: start) }
        _ = buckets.take(200, now: start + .seconds(10))
        #expect(buckets.count == 1)
        #expect(buckets.bucket(7, now: start + .seconds(10)).isFull)
    }
}
