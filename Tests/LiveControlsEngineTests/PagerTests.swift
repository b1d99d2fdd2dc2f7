import LiveControlsProtocol
import XCTest

@testable import LiveControlsEngine

final class PagerTests: XCTestCase {
    typealias H = SeedHarness
    let today = CivilDate(year: 2024, month: 2, day: 29)

    func pager(_ config: JSONObject) throws -> Pager {
        var full = config
        full["kind"] = "pager"
        return try Pager(config: H.node(.object(full)), id: ControlID("c"), today: today)
    }

    // MARK: Gregorian arithmetic

    func testLeapYearsAndMonthLengths() {
        XCTAssertTrue(Gregorian.isLeapYear(2024))
        XCTAssertTrue(Gregorian.isLeapYear(2000))
        XCTAssertFalse(Gregorian.isLeapYear(1900))
        XCTAssertFalse(Gregorian.isLeapYear(2023))
        XCTAssertEqual(Gregorian.daysInMonth(year: 2024, month: 2), 29)
        XCTAssertEqual(Gregorian.daysInMonth(year: 2100, month: 2), 28)
        XCTAssertEqual((1...12).map { Gregorian.daysInMonth(year: 2023, month: $0) }, [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])
    }

    func testDayCountsRoundTrip() {
        XCTAssertEqual(Gregorian.days(year: 1970, month: 1, day: 1), 0)
        XCTAssertEqual(Gregorian.days(year: 2000, month: 3, day: 1), 11_017)
        XCTAssertEqual(Gregorian.days(year: 1969, month: 12, day: 31), -1)
        XCTAssertEqual(Gregorian.date(days: 19_782), CivilDate(year: 2024, month: 2, day: 29))
        XCTAssertEqual(Gregorian.weekday(days: 19_782), 4, "2024-02-29 was a Thursday")
        XCTAssertEqual(Gregorian.weekday(days: -1), 3, "1969-12-31 was a Wednesday")
        // Every day of 1600…2400 converts both ways, one after another.
        var expected = Gregorian.days(year: 1600, month: 1, day: 1)
        for year in stride(from: 1600, through: 2400, by: 1) {
            for month in 1...12 {
                for day in 1...Gregorian.daysInMonth(year: year, month: month) {
                    let n = Gregorian.days(year: year, month: month, day: day)
                    guard n == expected, Gregorian.date(days: n) == CivilDate(year: year, month: month, day: day) else {
                        return XCTFail("\(year)-\(month)-\(day) ↔ \(n)")
                    }
                    expected += 1
                }
            }
        }
    }

    func testParsingIsStrict() throws {
        XCTAssertEqual(try Gregorian.parse("2024-02-29", withDay: true), CivilDate(year: 2024, month: 2, day: 29))
        for bad in ["2023-02-29", "2024-13-01", "2024-00-10", "2024-1-01", "24-01-01", "2024/01/01", "2024-04-31", "0000-01-01", "2024-01-01x"] {
            XCTAssertThrowsError(try Gregorian.parse(bad, withDay: true), bad)
        }
        XCTAssertEqual(try Gregorian.parse("9999-12", withDay: false), CivilDate(year: 9999, month: 12, day: 1))
        XCTAssertThrowsError(try Gregorian.parse("2024-02-01", withDay: false))
        XCTAssertEqual(PagerPosition.json(PagerPosition.month(year: 1, month: 1), in: .month), "0001-01")
    }

    // MARK: Domains

    func testIntegerDomainWithStepAndBounds() throws {
        var p = try pager(["start": 10, "step": 5, "min": 0, "max": 22, "radius": 1])
        XCTAssertEqual(p.render()["window"], [5, 10, 15])
        try H.apply(&p, "next")
        XCTAssertEqual(p.render()["position"], 15)
        XCTAssertEqual(p.render()["window"], [10, 15, 20])
        try H.apply(&p, "next")
        XCTAssertEqual(p.render()["canNext"], false, "25 would pass max 22: no clamping")
        XCTAssertEqual(p.render()["window"], [15, 20], "the window stops at the bound")
        H.refuse(.atBound, &p, "next")
        try H.apply(&p, "goto", ["position": 3])
        XCTAssertEqual(p.render()["canPrev"], false)
        H.refuse(.atBound, &p, "prev")
        H.refuse(.outOfRange, &p, "goto", ["position": 23])
        H.refuse(.invalidArgs, &p, "goto", ["position": "3"])
        H.refuse(.invalidArgs, &p, "goto", ["position": 2.5])
        H.refuse(.invalidArgs, &p, "goto")
        H.refuse(.unknownIntent, &p, "set", ["value": 1])
    }

    /// Issue 15: the seed's `refreshAction` (pull to refresh) and `updateBinding` (content changed) as one shared
    /// intent: `refresh` moves `generation`, and every client reloads the pages it shows.
    func testRefreshMovesTheGenerationEveryClientReloadsOn() throws {
        var p = try pager(["start": 10])
        XCTAssertEqual(p.render()["generation"], 0)
        try H.apply(&p, "refresh")
        try H.apply(&p, "refresh", by: H.bob)
        XCTAssertEqual(p.render()["generation"], 2)
        XCTAssertEqual(p.render()["position"], 10, "the position stays")
        let copy = try H.storedRoundTrip(p)
        XCTAssertEqual(copy.render(), p.render(), "the generation is kept")
        XCTAssertEqual(ControlCoding.configuration(of: copy), ControlCoding.configuration(of: try pager(["start": 10])),
                       "refreshing is use, not configuration")
    }

    func testUnboundedIntegersDefaultToZeroAndStopOnlyAtSafeIntegers() throws {
        var p = try pager([:])
        XCTAssertEqual(p.render()["position"], 0)
        XCTAssertEqual(p.render()["window"], [-2, -1, 0, 1, 2], "default radius 2")
        XCTAssertEqual(p.render()["min"], .null)
        try H.apply(&p, "goto", ["position": .int(PagerPosition.maxSafeInteger)])
        H.refuse(.atBound, &p, "next")
        XCTAssertEqual(p.window.count, 3)
        H.refuse(.invalidArgs, &p, "goto", ["position": .int(PagerPosition.maxSafeInteger + 1)])
        XCTAssertEqual(try pager(["min": 5]).position, 5, "no start: 0 moved into the bounds")
    }

    func testMonthsCrossYearBoundaries() throws {
        var p = try pager(["domain": "month", "start": "2023-12"])
        XCTAssertEqual(p.render()["window"], ["2023-10", "2023-11", "2023-12", "2024-01", "2024-02"])
        try H.apply(&p, "next")
        XCTAssertEqual(p.render()["position"], "2024-01")
        try H.apply(&p, "prev")
        try H.apply(&p, "prev")
        XCTAssertEqual(p.render()["position"], "2023-11")
        try H.apply(&p, "goto", ["position": "0001-02"])
        try H.apply(&p, "prev")
        XCTAssertEqual(p.render()["canPrev"], false, "0001-01 is the first month there is")
        H.refuse(.invalidArgs, &p, "goto", ["position": "2024-13"])
        H.refuse(.invalidArgs, &p, "goto", ["position": "2024-02-01"])
        H.refuse(.invalidArgs, &p, "goto", ["position": 202401])
        var quarters = try pager(["domain": "month", "start": "2024-11", "step": 3, "radius": 0])
        try H.apply(&quarters, "next")
        XCTAssertEqual(quarters.render()["window"], ["2025-02"])
    }

    func testDaysCrossLeapDaysMonthsAndYears() throws {
        var p = try pager(["domain": "day", "start": "2024-02-28", "radius": 1])
        try H.apply(&p, "next")
        XCTAssertEqual(p.render()["position"], "2024-02-29")
        XCTAssertEqual(p.render()["window"], ["2024-02-28", "2024-02-29", "2024-03-01"])
        try H.apply(&p, "goto", ["position": "2023-02-28"])
        try H.apply(&p, "next")
        XCTAssertEqual(p.render()["position"], "2023-03-01", "no leap day in 2023")
        try H.apply(&p, "goto", ["position": "2023-12-31"])
        try H.apply(&p, "next")
        XCTAssertEqual(p.render()["position"], "2024-01-01")
        try H.apply(&p, "goto", ["position": "2100-03-01"])
        try H.apply(&p, "prev")
        XCTAssertEqual(p.render()["position"], "2100-02-28", "2100 is not a leap year")
        H.refuse(.invalidArgs, &p, "goto", ["position": "2023-02-29"])
        var weeks = try pager(["domain": "day", "start": "2024-02-26", "step": 7, "radius": 0])
        try H.apply(&weeks, "next")
        XCTAssertEqual(weeks.render()["position"], "2024-03-04")
    }

    func testCurrentResolvesFromTheInjectedToday() throws {
        let month = try pager(["domain": "month", "start": "current"])
        XCTAssertEqual(month.render()["position"], "2024-02")
        XCTAssertEqual(month.render()["window"], ["2023-12", "2024-01", "2024-02", "2024-03", "2024-04"])
        XCTAssertEqual(try pager(["domain": "day"]).render()["position"], "2024-02-29", "calendar domains start today by default")
        var future = try pager(["domain": "month", "min": "current", "max": "2024-04"])
        XCTAssertEqual(future.render()["canPrev"], false)
        try H.apply(&future, "next")
        try H.apply(&future, "next")
        XCTAssertEqual(future.render()["canNext"], false)
        H.refuse(.outOfRange, &future, "goto", ["position": "2024-01"])
    }

    func testTodayFromUnixSecondsIsTheUTCDate() {
        XCTAssertEqual(CivilDate.today(fromUnixSeconds: 0), CivilDate(year: 1970, month: 1, day: 1))
        XCTAssertEqual(CivilDate.today(fromUnixSeconds: 86_399), CivilDate(year: 1970, month: 1, day: 1))
        XCTAssertEqual(CivilDate.today(fromUnixSeconds: 86_400), CivilDate(year: 1970, month: 1, day: 2))
        XCTAssertEqual(CivilDate.today(fromUnixSeconds: -1), CivilDate(year: 1969, month: 12, day: 31))
        XCTAssertEqual(CivilDate.today(fromUnixSeconds: -86_400), CivilDate(year: 1969, month: 12, day: 31))
        XCTAssertEqual(CivilDate.today(fromUnixSeconds: -86_401), CivilDate(year: 1969, month: 12, day: 30))
        XCTAssertEqual(CivilDate.today(fromUnixSeconds: 1_772_236_800 - 1), CivilDate(year: 2026, month: 2, day: 27))
        XCTAssertEqual(CivilDate.today(fromUnixSeconds: 1_772_236_800), CivilDate(year: 2026, month: 2, day: 28))
        XCTAssertEqual(CivilDate.today(fromUnixSeconds: 1_772_323_199), CivilDate(year: 2026, month: 2, day: 28))
        XCTAssertEqual(CivilDate.today(fromUnixSeconds: 1_772_323_200), CivilDate(year: 2026, month: 3, day: 1))
    }

    /// A config read on 2026-02-28 (the caller says so; nothing reads a clock) starts its "current" pagers there.
    func testConfigStartsCurrentPagersOnTheGivenToday() throws {
        let json: JSONValue = ["templates": ["t": ["controls": [
            "month": ["kind": "pager", "domain": "month", "start": "current"],
            "day": ["kind": "pager", "domain": "day", "start": "current", "radius": 1],
            "from": ["kind": "pager", "domain": "day", "min": "current"],
            "until": ["kind": "pager", "domain": "month", "start": "current", "max": "2026-01"],
            "since": ["kind": "pager", "domain": "month", "min": "current", "max": "2026-01", "start": "2025-06"],
            "ahead": ["kind": "pager", "domain": "day", "max": "current", "min": "2026-03-05", "start": "2026-03-09"],
        ]]]]
        let today = CivilDate.today(fromUnixSeconds: 1_772_236_800 + 12 * 3600)
        XCTAssertEqual(today, CivilDate(year: 2026, month: 2, day: 28))
        let room = Room(name: "r", template: try XCTUnwrap(try ServerConfig(json: json, file: "t.json", today: today).templates["t"]),
                        epoch: "e", historyLimit: 1)
        let controls = room.render()["controls"]
        XCTAssertEqual(controls?["month"]?["position"], "2026-02")
        XCTAssertEqual(controls?["day"]?["position"], "2026-02-28")
        XCTAssertEqual(controls?["day"]?["window"], ["2026-02-27", "2026-02-28", "2026-03-01"])
        XCTAssertEqual(controls?["from"]?["position"], "2026-02-28", "the default start moved into min")
        XCTAssertEqual(controls?["from"]?["min"], "2026-02-28")
        XCTAssertEqual(controls?["until"]?["position"], "2026-01",
                       "\"current\" written out is moved into min…max too: a config must not stop loading once today passes max")
        XCTAssertEqual(controls?["since"]?["min"], "2026-01", "a min of \"current\" past max stops at max")
        XCTAssertEqual(controls?["since"]?["position"], "2026-01", "an explicit start outside moving bounds is moved into them")
        XCTAssertEqual(controls?["ahead"]?["max"], "2026-03-05", "a max of \"current\" before min stops at min")
        XCTAssertEqual(controls?["ahead"]?["position"], "2026-03-05")

        let leap = try ServerConfig(json: json, file: "t.json", today: CivilDate(year: 2028, month: 2, day: 29))
        XCTAssertEqual((leap.templates["t"]?.controls[1].control as? Pager)?.render()["position"], "2028-02-29")
        let builtin = ServerConfig.builtin(today: today)
        XCTAssertEqual((builtin.templates["demo"]?.controls.first { $0.id == ControlID("month") }?.control as? Pager)?.render()["position"], "2026-02")
    }

    func testConfigErrors() {
        let cases: [(JSONValue, String, String)] = [
            (["kind": "pager", "domain": "week"], "/templates/t/controls/c/domain", "must be one of"),
            (["kind": "pager", "domain": "month", "start": "2024-2"], "/templates/t/controls/c/start", "is not YYYY-MM"),
            (["kind": "pager", "domain": "day", "start": "2023-02-29"], "/templates/t/controls/c/start", "day must be 01–28"),
            (["kind": "pager", "start": "current"], "/templates/t/controls/c/start", "needs a month or day domain"),
            (["kind": "pager", "min": 5, "max": 1], "/templates/t/controls/c/max", "before min"),
            (["kind": "pager", "start": 9, "max": 5], "/templates/t/controls/c/start", "outside"),
            (["kind": "pager", "step": 0], "/templates/t/controls/c/step", "must be"),
            (["kind": "pager", "radius": 51], "/templates/t/controls/c/radius", "must be"),
            (["kind": "pager", "hold": ["intervalMs": 0]], "/templates/t/controls/c/hold/intervalMs", "1…86400000"),
        ]
        for (config, path, words) in cases {
            let error = H.configError(config)
            XCTAssertEqual(error?.path, path, "\(config)")
            XCTAssertTrue(error?.message.contains(words) ?? false, "\(String(describing: error))")
        }
    }

    // MARK: Holds

    func testHoldPagesThroughMonthsAndStopsAtMax() throws {
        var p = try pager(["domain": "month", "start": "2024-10", "max": "2025-02"])
        XCTAssertEqual(p.timing.intervalMs, 250)
        XCTAssertEqual(p.timing.delayMs, 500)
        var clock = SeedControlClock()
        try H.apply(&p, "press", ["direction": "next"])
        XCTAssertEqual(p.render()["position"], "2024-11")
        XCTAssertEqual(clock.advance(to: 500, &p).map(\.tick), [1])
        XCTAssertEqual(p.render()["position"], "2024-12")
        let events = clock.advance(to: 5000, &p)
        XCTAssertEqual(events.map(\.tick), [2, 3])
        XCTAssertEqual(p.render()["position"], "2025-02")
        XCTAssertEqual(events.last?.ended, [HoldEnd(session: H.ann, reason: .bound)])
        XCTAssertEqual(p.render()["holding"], .null)
    }

    func testHoldEndsOnGotoToTheBoundOnLeaveAndOnLease() throws {
        var p = try pager(["start": 0, "min": -10, "max": 10, "hold": ["delayMs": 100, "intervalMs": 100, "maxHoldMs": 1000]])
        try H.apply(&p, "press", ["direction": "prev"])
        let ended = try H.apply(&p, "goto", ["position": -10], by: H.bob)
        XCTAssertEqual(ended.ended, [HoldEnd(session: H.ann, reason: .bound)])

        try H.apply(&p, "goto", ["position": 0])
        try H.apply(&p, "press", ["direction": "next"], by: H.bob)
        XCTAssertEqual(p.sessionLeft(H.ann, reason: .leave), .none)
        XCTAssertEqual(p.sessionLeft(H.bob, reason: .disconnect).ended, [HoldEnd(session: H.bob, reason: .disconnect)])

        var clock = SeedControlClock()
        try H.apply(&p, "goto", ["position": -10])
        try H.apply(&p, "press", ["direction": "next"])
        let events = clock.advance(to: 1000, &p)
        XCTAssertEqual(p.position, 0, "ticks at 100…900, then the lease runs out at 1000")
        XCTAssertEqual(events.last?.ended, [HoldEnd(session: H.ann, reason: .lease)])
    }

    func testRoomPatchesMatchFreshRenders() throws {
        var room = H.room([("month", try pager(["domain": "month", "start": "current"]))])
        let patch = try H.roomApply(&room, "month", "next")
        XCTAssertTrue(patch?.ops.contains(.replace(path: JSONPointer(["controls", "month", "position"]), value: "2024-03")) ?? false)
        try H.roomApply(&room, "month", "goto", ["position": "1999-12"], by: H.bob)
        try H.roomApply(&room, "month", "next")
        XCTAssertEqual(room.render()["controls"]?["month"]?["window"], ["1999-11", "1999-12", "2000-01", "2000-02", "2000-03"])
    }

    func testAStepMovesTheWindowByOneEntryNotAllOfThem() throws {
        // An audit saw a radius-50 pager send 102 ops per step, every window entry replaced; the window shifts by one.
        var room = H.room([("page", try pager(["domain": "integer", "start": 0, "radius": 50]))])
        let patch = try XCTUnwrap(try H.roomApply(&room, "page", "next"))
        let window = patch.ops.filter { $0.path.description.hasPrefix("/controls/page/window") }
        XCTAssertEqual(window.map(\.json), [["op": "remove", "path": "/controls/page/window/0"],
                                           ["op": "add", "path": "/controls/page/window/100", "value": 51]])
    }

    func testStoredStateRoundTrip() throws {
        var p = try pager(["domain": "day", "start": "2024-02-28", "min": "2024-01-01"])
        try H.apply(&p, "press", ["direction": "next"])
        let copy = try H.storedRoundTrip(p)
        XCTAssertEqual(copy.render(), p.render())
        XCTAssertEqual(copy.hold, p.hold)
        XCTAssertEqual(copy.wakeDeadline, p.wakeDeadline)
    }
}
