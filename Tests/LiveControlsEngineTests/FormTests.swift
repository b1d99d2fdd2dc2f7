import LiveControlsProtocol
import XCTest

@testable import LiveControlsEngine

final class FormTests: XCTestCase {
    typealias H = SeedHarness

    static let config: JSONValue = [
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
                    ["id": "plan", "type": "choice", "choices": ["free", "pro"], "value": "free", "required": true],
                    ["id": "height", "type": "number", "min": 0.5],
                ],
            ],
            ["id": "terms", "fields": [["id": "accept", "type": "boolean", "required": true]]],
        ],
    ]

    func form() throws -> Form { try Form(config: H.node(Self.config), id: ControlID("signup")) }

    func field(_ f: Form, _ element: Int, _ field: Int) -> JSONValue? {
        f.render()["elements"]?.arrayValue?[element]["fields"]?.arrayValue?[field]
    }

    func element(_ f: Form, _ index: Int) -> JSONValue? { f.render()["elements"]?.arrayValue?[index] }

    func fillAccount(_ f: inout Form) throws {
        try H.apply(&f, "set", ["element": "account", "field": "email", "value": "ann@x.org"])
        try H.apply(&f, "set", ["element": "account", "field": "name", "value": "Ann"])
    }

    func testInitialStateHasOneExpandedElementAndComputedErrors() throws {
        let f = try form()
        let state = f.render()
        XCTAssertEqual(state["kind"], "form")
        XCTAssertEqual(state["label"], "Sign up")
        XCTAssertEqual(state["current"], "account")
        XCTAssertEqual(state["completed"], false)
        XCTAssertEqual(state["canFinish"], false)
        XCTAssertEqual(state["cta"], "Continue", "default CTA")
        XCTAssertEqual(state["data"], .null)
        XCTAssertEqual(f.render()["elements"]?.arrayValue?.map { $0["status"] }, ["expanded", "collapsed", "collapsed"])
        XCTAssertEqual(element(f, 1)?["cta"], .null, "cta: null hides the button")
        XCTAssertEqual(element(f, 2)?["cta"], "Done", "the last element's default CTA")
        XCTAssertEqual(field(f, 0, 0)?["error"], "required")
        XCTAssertEqual(field(f, 0, 1)?["label"], "Name")
        XCTAssertEqual(field(f, 2, 0)?["value"], false, "booleans start false")
        XCTAssertEqual(field(f, 2, 0)?["error"], "must be checked")
        XCTAssertEqual(field(f, 1, 1)?["choices"], ["free", "pro"])
    }

    func testSetStoresRuleBreakingValuesAndReportsErrors() throws {
        var f = try form()
        let cases: [(String, JSONValue, JSONValue)] = [
            ("email", "ann", "does not match the expected format"),
            ("email", "ann@x", .null),
            ("email", "a-very-long-name@example.org", "at most 20 characters"),
            ("email", "   ", "required"),
            ("name", "A", "at least 2 characters"),
            ("name", .null, "required"),
        ]
        for (id, value, error) in cases {
            try H.apply(&f, "set", ["element": "account", "field": .string(id), "value": value])
            let i = id == "email" ? 0 : 1
            XCTAssertEqual(field(f, 0, i)?["value"], value, "the value is kept even when it breaks a rule")
            XCTAssertEqual(field(f, 0, i)?["error"], error, "\(id) = \(value)")
        }
        XCTAssertEqual(element(f, 0)?["valid"], false)
        try fillAccount(&f)
        XCTAssertEqual(element(f, 0)?["valid"], true)
        XCTAssertEqual(f.render()["canFinish"], true)
        XCTAssertEqual(element(f, 0)?["summary"], "Ann <ann@x.org>")
    }

    func testTypeMismatchesAndUnknownNamesAreRefused() throws {
        var f = try form()
        H.refuse(.invalidArgs, &f, "set", ["element": "account", "field": "email", "value": 42])
        H.refuse(.invalidArgs, &f, "set", ["element": "account", "field": "email", "value": .string(String(repeating: "x", count: 10_001))])
        H.refuse(.invalidArgs, &f, "set", ["element": "account", "field": "email"])
        H.refuse(.notFound, &f, "set", ["element": "nope", "field": "email", "value": "x"])
        H.refuse(.notFound, &f, "set", ["element": "account", "field": "nope", "value": "x"])
        H.refuse(.conflict, &f, "set", ["element": "profile", "field": "age", "value": 30])
        try fillAccount(&f)
        try H.apply(&f, "finish")
        H.refuse(.invalidArgs, &f, "set", ["element": "profile", "field": "age", "value": "30"])
        H.refuse(.invalidArgs, &f, "set", ["element": "profile", "field": "plan", "value": "gold"])
        H.refuse(.invalidArgs, &f, "set", ["element": "profile", "field": "plan", "value": 1])
        H.refuse(.conflict, &f, "set", ["element": "account", "field": "name", "value": "Bo"])
        H.refuse(.unknownIntent, &f, "submit")
    }

    func testNumberChoiceAndBooleanRules() throws {
        var f = try form()
        try fillAccount(&f)
        try H.apply(&f, "finish")
        for (value, error) in [(JSONValue.int(12), JSONValue("must be ≥ 13")), (121, "must be ≤ 120"), (30.5, "must be a whole number"), (30.0, .null), (.null, .null)] {
            try H.apply(&f, "set", ["element": "profile", "field": "age", "value": value])
            XCTAssertEqual(field(f, 1, 0)?["error"], error, "age = \(value)")
        }
        try H.apply(&f, "set", ["element": "profile", "field": "height", "value": 0.25])
        XCTAssertEqual(field(f, 1, 2)?["error"], "must be ≥ 0.5")
        try H.apply(&f, "set", ["element": "profile", "field": "height", "value": 1.8])
        try H.apply(&f, "set", ["element": "profile", "field": "plan", "value": .null])
        XCTAssertEqual(field(f, 1, 1)?["error"], "required")
        H.refuse(.notValid, &f, "finish")
        try H.apply(&f, "set", ["element": "profile", "field": "plan", "value": "pro"])
        try H.apply(&f, "finish")
        H.refuse(.notValid, &f, "finish")
        try H.apply(&f, "set", ["element": "terms", "field": "accept", "value": true])
        XCTAssertEqual(field(f, 2, 0)?["error"], .null)
    }

    func testFinishWalksTheElementsAndCompletesWithData() throws {
        var f = try form()
        do {
            _ = try H.apply(&f, "finish")
            XCTFail("finish while invalid")
        } catch {
            XCTAssertEqual(error.code, .notValid)
            XCTAssertTrue(error.message.contains("email: required"), error.message)
        }
        try fillAccount(&f)
        try H.apply(&f, "finish", ["element": "account"])
        XCTAssertEqual(f.render()["elements"]?.arrayValue?.map { $0["status"] }, ["collapsed", "expanded", "collapsed"])
        XCTAssertEqual(f.render()["cta"], .null)
        H.refuse(.conflict, &f, "finish", ["element": "account"])
        H.refuse(.notFound, &f, "finish", ["element": "ghost"])
        try H.apply(&f, "finish")
        try H.apply(&f, "set", ["element": "terms", "field": "accept", "value": true])
        try H.apply(&f, "finish")
        let state = f.render()
        XCTAssertEqual(state["completed"], true)
        XCTAssertEqual(state["current"], .null)
        XCTAssertEqual(state["canFinish"], false)
        XCTAssertEqual(state["elements"]?.arrayValue?.map { $0["status"] }, ["collapsed", "collapsed", "collapsed"])
        XCTAssertEqual(state["data"], [
            "account": ["email": "ann@x.org", "name": "Ann"],
            "profile": ["age": nil, "plan": "free", "height": nil],
            "terms": ["accept": true],
        ])
        H.refuse(.finished, &f, "set", ["element": "terms", "field": "accept", "value": false])
        H.refuse(.finished, &f, "finish")
        H.refuse(.finished, &f, "expand", ["element": "account"])
        try H.apply(&f, "reset")
        XCTAssertEqual(f.render(), try form().render(), "reset restores the configured form")
    }

    func testExpandGoesBackToAnEarlierElementOnly() throws {
        var f = try form()
        try fillAccount(&f)
        try H.apply(&f, "finish")
        H.refuse(.outOfRange, &f, "expand", ["element": "terms"])
        H.refuse(.notFound, &f, "expand", ["element": "ghost"])
        try H.apply(&f, "expand", ["element": "account"])
        XCTAssertEqual(f.render()["current"], "account")
        XCTAssertEqual(field(f, 0, 1)?["value"], "Ann", "going back keeps what was filled")
        try H.apply(&f, "expand", ["element": "account"])
        try H.apply(&f, "set", ["element": "account", "field": "name", "value": "Annie"])
        try H.apply(&f, "finish")
        XCTAssertEqual(f.render()["current"], "profile", "finishing expands the next element")
        XCTAssertEqual(element(f, 0)?["summary"], "Annie <ann@x.org>")
    }

    func testConcurrentSetsOnDifferentFieldsBothLand() throws {
        var room = H.room([("signup", try form())])
        let a = try H.roomApply(&room, "signup", "set", ["element": "account", "field": "email", "value": "ann@x.org"], by: H.ann)
        let b = try H.roomApply(&room, "signup", "set", ["element": "account", "field": "name", "value": "Bob"], by: H.bob)
        let paths = { (p: Patch?) in (p?.ops ?? []).compactMap { op -> String? in
            if case .replace(let path, _) = op { return path.description }
            return nil
        } }
        XCTAssertEqual(paths(a), ["/controls/signup/elements/0/summary", "/controls/signup/elements/0/fields/0/value",
                                  "/controls/signup/elements/0/fields/0/error"])
        XCTAssertEqual(paths(b), ["/controls/signup/canFinish", "/controls/signup/elements/0/valid", "/controls/signup/elements/0/summary",
                                  "/controls/signup/elements/0/fields/1/value", "/controls/signup/elements/0/fields/1/error"],
                       "validity updates in the same patch")
        let account = room.render()["controls"]?["signup"]?["elements"]?.arrayValue?[0]
        XCTAssertEqual(account?["fields"]?.arrayValue?.map { $0["value"] }, ["ann@x.org", "Bob"])
        try H.roomApply(&room, "signup", "finish", by: H.bob)
        try H.roomApply(&room, "signup", "reset")
    }

    func testConfigErrors() {
        func form(_ fields: JSONValue, cta: JSONValue? = nil) -> JSONValue {
            var element: JSONObject = ["id": "e", "fields": fields]
            if let cta { element["cta"] = cta }
            return ["kind": "form", "elements": [.object(element)]]
        }
        let field = "/templates/t/controls/c/elements/0/fields/0"
        let cases: [(JSONValue, String, String)] = [
            (["kind": "form"], "/templates/t/controls/c/elements", "missing"),
            (["kind": "form", "elements": []], "/templates/t/controls/c/elements", "at least one element"),
            (["kind": "form", "elements": [["id": "e"], ["id": "e"]]], "/templates/t/controls/c/elements/1/id", "duplicate"),
            (form([["id": "f", "type": "date"]]), "\(field)/type", "must be one of"),
            (form([["id": "f", "type": "text", "min": 1]]), "\(field)/min", "does not apply to text"),
            (form([["id": "f", "type": "text", "pattern": "(["]]), "\(field)/pattern", "not a valid regular expression"),
            (form([["id": "f", "type": "text", "minLength": 5, "maxLength": 2]]), "\(field)/maxLength", "minLength"),
            (form([["id": "f", "type": "number", "min": "1"]]), "\(field)/min", "expected a number"),
            (form([["id": "f", "type": "number", "min": 5, "max": 1]]), "\(field)/max", "≥ min"),
            (form([["id": "f", "type": "choice"]]), "\(field)/choices", "needs choices"),
            (form([["id": "f", "type": "choice", "choices": ["a", "a"]]]), "\(field)/choices/1", "duplicate"),
            (form([["id": "f", "type": "choice", "choices": ["a"], "value": "b"]]), "\(field)/value", "not one of"),
            (form([["id": "f", "type": "boolean", "value": "yes"]]), "\(field)/value", "boolean field"),
            (form([["id": "f", "type": "text"], ["id": "f", "type": "text"]]), "/templates/t/controls/c/elements/0/fields/1/id", "duplicate"),
            (form([], cta: 5), "/templates/t/controls/c/elements/0/cta", "expected a string"),
        ]
        for (config, path, words) in cases {
            let error = H.configError(config)
            XCTAssertEqual(error?.path, path, "\(config)")
            XCTAssertTrue(error?.message.contains(words) ?? false, "\(String(describing: error))")
        }
    }

    func testStoredStateRoundTripKeepsValuesRulesAndTheResetPoint() throws {
        var f = try form()
        try fillAccount(&f)
        try H.apply(&f, "finish")
        try H.apply(&f, "set", ["element": "profile", "field": "height", "value": 1.75])
        var copy = try H.storedRoundTrip(f)
        XCTAssertEqual(copy.render(), f.render())
        try H.apply(&copy, "set", ["element": "profile", "field": "age", "value": 9])
        XCTAssertEqual(field(copy, 1, 0)?["error"], "must be ≥ 13", "rules survive")
        try H.apply(&copy, "reset")
        XCTAssertEqual(copy.render(), try form().render())
    }
}
