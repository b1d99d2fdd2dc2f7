import LiveControlsProtocol
import XCTest

@testable import LiveControlsEngine

/// Controls in the states the storage tests check, each built the same way the legacy fixtures
/// (`LegacyStoredStates`) were: same configs, same intents at the same instants.
enum StoredStateFixtures {
    typealias H = SeedHarness

    static let today = CivilDate(year: 2026, month: 2, day: 28)

    /// A wrapping stepper at rest.
    static func stepper() -> Stepper {
        Stepper(label: "Quantity", min: -5, max: 99, value: 7, step: 3, wrap: true,
                timing: HoldTiming(delayMs: 400, intervalMs: 120, minIntervalMs: 40, accelerationMs: 10, maxHoldMs: 20_000))
    }

    /// The same stepper held by `ann` since 1 s, two repeats in, one of them renewed.
    static func stepperMidHold() throws -> Stepper {
        var s = stepper()
        try H.apply(&s, "press", ["direction": "next"], at: .milliseconds(1000))
        var clock = SeedControlClock(now: .milliseconds(1000))
        clock.advance(to: 1530, &s)
        try H.apply(&s, "press", ["direction": "next"], at: .milliseconds(1530))
        return s
    }

    /// Sections with and without a header, an empty one, values of every JSON type (nested objects in
    /// their own key order, fractions, an exponent, escapes), ids moved on by a remove, held by `bob`.
    static func listWithSections() throws -> ListStepper {
        var list = try ListStepper(config: H.node([
            "kind": "list", "label": "People & things", "display": "{name}: {age|?}", "wrap": true, "maxItems": 50,
            "sections": [
                ["id": "siblings", "header": "Siblings", "items": [
                    ["name": "Joe", "age": 23, "tags": ["a", "b"]],
                    ["name": "Tim", "age": 20.5],
                ]],
                ["id": "misc", "items": [
                    ["z": 1, "a": ["y": 2.5, "x": nil]],
                    1.5, -0.25, 1e300, 42, true, nil,
                    "text with \"quotes\", a \\ backslash, ünïcode ✓ and a\nnewline",
                ]],
                ["id": "empty", "header": "Nobody yet", "items": []],
            ],
            "selected": 1.5,
            "hold": ["delayMs": 300, "intervalMs": 200, "maxHoldMs": 10_000],
        ]), id: ControlID("people"))
        try H.apply(&list, "remove", ["id": "i2"])
        try H.apply(&list, "append", ["value": ["name": "Ann", "age": 31], "section": "empty"])
        try H.apply(&list, "press", ["direction": "prev"], by: H.bob, at: .milliseconds(5000))
        return list
    }

    /// A list whose items were all removed: nothing selected, the id counter moved on.
    static func emptyList() throws -> ListStepper {
        var list = try ListStepper(config: H.node(["kind": "list", "values": ["only"]]), id: ControlID("l"))
        try H.apply(&list, "remove", ["id": "i1"])
        return list
    }

    static let wizardConfig: JSONValue = [
        "kind": "wizard", "label": "Onboarding",
        "steps": [
            ["id": "welcome", "title": "Welcome"],
            ["id": "account", "title": "Your account", "form": "signup", "element": "account"],
            ["id": "done"],
        ],
    ]

    /// Moved to the guarded step, with a step appended since.
    static func wizardMidWay() throws -> Wizard {
        var w = try Wizard(config: H.node(wizardConfig), id: ControlID("onboarding"))
        try H.apply(&w, "next")
        try H.apply(&w, "append", ["step": ["id": "extra", "title": "Extra", "form": "signup"]])
        return w
    }

    /// A cycling wizard started at its second step, then sent back past the first: phase `exit`.
    static func wizardExited() throws -> Wizard {
        var w = try Wizard(config: H.node(["kind": "wizard", "cycle": true, "index": 1, "steps": [["id": "a"], ["id": "b"]]]),
                           id: ControlID("w"))
        try H.apply(&w, "prev")
        try H.apply(&w, "prev")
        return w
    }

    static let formConfig: JSONValue = [
        "kind": "form", "label": "Sign up",
        "elements": [
            [
                "id": "account", "title": "Account", "summary": "{name} <{email}>",
                "fields": [
                    ["id": "email", "type": "text", "required": true, "pattern": "[^@\\s]+@[^@\\s]+", "maxLength": 20],
                    ["id": "name", "label": "Name", "type": "text", "required": true, "minLength": 2],
                ],
            ],
            [
                "id": "profile", "cta": nil,
                "fields": [
                    ["id": "age", "type": "number", "integer": true, "min": 13, "max": 120],
                    ["id": "plan", "type": "choice", "choices": ["free", "pro", "team"], "value": "free", "required": true],
                    ["id": "height", "type": "number", "min": 0.5, "max": 2.75],
                ],
            ],
            ["id": "terms", "cta": "Create account", "fields": [["id": "accept", "label": "I accept", "type": "boolean", "required": true]]],
        ],
    ]

    /// The second element expanded, with a double, a broken rule (age 9) and a choice set.
    static func formMidWay() throws -> Form {
        var f = try Form(config: H.node(formConfig), id: ControlID("signup"))
        try H.apply(&f, "set", ["element": "account", "field": "email", "value": "ann@example.org"])
        try H.apply(&f, "set", ["element": "account", "field": "name", "value": "Ann"])
        try H.apply(&f, "finish", ["element": "account"])
        try H.apply(&f, "set", ["element": "profile", "field": "height", "value": 1.75])
        try H.apply(&f, "set", ["element": "profile", "field": "age", "value": 9])
        try H.apply(&f, "set", ["element": "profile", "field": "plan", "value": "team"])
        return f
    }

    /// Every element finished: `current` is nil and the data is shown.
    static func formCompleted() throws -> Form {
        var f = try formMidWay()
        try H.apply(&f, "set", ["element": "profile", "field": "age", "value": 42])
        try H.apply(&f, "finish")
        try H.apply(&f, "set", ["element": "terms", "field": "accept", "value": true])
        try H.apply(&f, "finish")
        return f
    }

    static func pager(_ config: JSONObject) throws -> Pager {
        var full = config
        full["kind"] = "pager"
        return try Pager(config: H.node(.object(full)), id: ControlID("p"), today: today)
    }

    /// Integers on a grid of 5, held by `ann` since 2 s, one repeat in.
    static func integerPagerMidHold() throws -> Pager {
        var p = try pager(["label": "Page", "start": 10, "min": -10, "max": 1000, "step": 5, "radius": 3,
                           "hold": ["delayMs": 250, "intervalMs": 100, "accelerationMs": 20, "minIntervalMs": 50, "maxHoldMs": 5000]])
        try H.apply(&p, "press", ["direction": "next"], at: .milliseconds(2000))
        var clock = SeedControlClock(now: .milliseconds(2000))
        clock.advance(to: 2300, &p)
        return p
    }

    /// Months from the current one (2026-02), bounded below only, moved back once.
    static func monthPager() throws -> Pager {
        var p = try pager(["domain": "month", "start": "current", "min": "2020-01", "radius": 1])
        try H.apply(&p, "prev")
        return p
    }

    /// Days across a leap day, held backwards by `bob`.
    static func dayPagerMidHold() throws -> Pager {
        var p = try pager(["domain": "day", "start": "2024-03-01", "min": "2024-01-01", "max": "2030-12-31", "step": 1])
        try H.apply(&p, "press", ["direction": "prev"], by: H.bob, at: .milliseconds(700))
        return p
    }

    /// Every fixture, by name.
    static func all() throws -> [(name: String, control: any Control)] {
        [
            ("stepper", stepper()),
            ("stepperMidHold", try stepperMidHold()),
            ("listWithSections", try listWithSections()),
            ("emptyList", try emptyList()),
            ("wizardMidWay", try wizardMidWay()),
            ("wizardExited", try wizardExited()),
            ("formMidWay", try formMidWay()),
            ("formCompleted", try formCompleted()),
            ("integerPagerMidHold", try integerPagerMidHold()),
            ("monthPager", try monthPager()),
            ("dayPagerMidHold", try dayPagerMidHold()),
        ]
    }
}
