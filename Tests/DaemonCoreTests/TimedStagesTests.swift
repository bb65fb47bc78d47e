import Testing

@testable import SignupDaemonCore

/// The start's stages as the `serving` line reports them (issue 29's cold start).
@Suite struct TimedStagesTests {
    @Test func eachStageIsTheTimeSinceTheLastAndTheTotalTheirSum() {
        let start = ContinuousClock.now
        var stages = TimedStages(now: start)
        stages.finished("options", now: start + .microseconds(480))
        stages.finished("forms", now: start + .microseconds(3_530))
        stages.finished("ready", now: start + .milliseconds(12) + .microseconds(7))
        #expect(stages.stages.map(\.name) == ["options", "forms", "ready"])
        #expect(stages.stages.map(\.took) == [.microseconds(480), .microseconds(3_050), .microseconds(8_477)])
        #expect(stages.total == .milliseconds(12) + .microseconds(7))
        #expect(stages.description == "12.00 ms: options 0.48 ms, forms 3.05 ms, ready 8.47 ms")
    }

    @Test(arguments: [
        (Duration.zero, "0.00"), (.microseconds(9), "0.00"), (.microseconds(10), "0.01"), (.microseconds(1_090), "1.09"),
        (.seconds(2) + .microseconds(500), "2000.50"),
    ])
    func millisecondsHaveTwoDecimals(duration: Duration, text: String) {
        #expect(TimedStages.milliseconds(duration) == text)
    }
}
