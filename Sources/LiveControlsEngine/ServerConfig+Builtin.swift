import LiveControlsProtocol

extension ServerConfig {
    /// The config used without `--config`: template `demo`, and a room `demo` made from it; template `workshop`, a
    /// host-led agenda (only members with role `host` move it), whose rooms an admin or the server API creates.
    public static let builtinJSON: JSONValue = [
        "defaultTemplate": "demo",
        "rooms": ["demo": ["template": "demo"]],
        "templates": [
            "workshop": [
                "controls": [
                    "agenda": [
                        "kind": "wizard", "label": "Agenda",
                        "steps": [
                            ["id": "intro", "title": "Introductions"],
                            ["id": "ideas", "title": "Ideas"],
                            ["id": "vote", "title": "Vote"],
                            ["id": "wrapup", "title": "Wrap-up"],
                        ],
                    ],
                    // The host starts it for each step; when it runs out, the agenda moves on.
                    "timebox": [
                        "kind": "timer", "label": "Timebox", "mode": "countdown", "durationMs": 600_000,
                        "then": ["control": "agenda", "intent": "next"],
                    ],
                    // Ideas are added as options; each member votes for two, privately until the host reveals the tally.
                    "vote": [
                        "kind": "poll", "label": "Which ideas go ahead?", "mode": "multi", "maxVotes": 2, "allowAdd": true,
                        "maxOptions": 20, "seeVotes": ["host"],
                    ],
                    // What was decided, typed by everyone at once.
                    "wrapup": ["kind": "text", "label": "Wrap-up", "maxLength": 20_000],
                ],
                "permissions": [
                    "agenda": ["*": ["host"]],
                    "timebox": ["*": ["host"]],
                    "vote": ["open": ["host"], "close": ["host"], "reveal": ["host"], "reset": ["host"]],
                ],
            ],
            "demo": [
                "controls": [
                    "quantity": [
                        "kind": "stepper", "label": "Quantity", "min": 0, "max": 99, "value": 1, "step": 1,
                        "hold": ["delayMs": 500, "intervalMs": 100, "minIntervalMs": 100, "maxHoldMs": 30000],
                    ],
                    // ArrayStepper's sections example: equal names stay distinct items.
                    "person": [
                        "kind": "list", "label": "Person", "display": "{name}: {age}",
                        "sections": [
                            ["id": "siblings", "header": "Siblings", "items": [["name": "Joe", "age": 23], ["name": "Tim", "age": 20]]],
                            ["id": "parents", "header": "Parents", "items": [["name": "Joe", "age": nil], ["name": "James", "age": nil]]],
                        ],
                        "selected": ["name": "Joe", "age": 23], "selectionPolicy": "fail",
                        "hold": ["delayMs": 500, "intervalMs": 250, "maxHoldMs": 30000],
                    ],
                    // StepView: onboarding steps; two of them wait for their part of `signup`.
                    "onboarding": [
                        "kind": "wizard", "label": "Onboarding", "index": 0, "cycle": false,
                        "steps": [
                            ["id": "welcome", "title": "Welcome"],
                            ["id": "account", "title": "Your account", "form": "signup", "element": "account"],
                            ["id": "profile", "title": "About you", "form": "signup", "element": "profile"],
                            ["id": "done", "title": "All set"],
                        ],
                    ],
                    // StackedForm: three elements, one expanded at a time.
                    "signup": [
                        "kind": "form", "label": "Sign up",
                        "elements": [
                            [
                                "id": "account", "title": "Account", "cta": "Continue", "summary": "{name} <{email}>",
                                "fields": [
                                    ["id": "email", "label": "Email", "type": "text", "required": true, "maxLength": 254,
                                     "pattern": "[^@\\s]+@[^@\\s]+\\.[^@\\s]+"],
                                    ["id": "name", "label": "Name", "type": "text", "required": true, "minLength": 2, "maxLength": 60],
                                ],
                            ],
                            [
                                "id": "profile", "title": "About you", "cta": "Continue", "summary": "{plan}, age {age|not given}",
                                "fields": [
                                    ["id": "age", "label": "Age", "type": "number", "integer": true, "min": 13, "max": 120],
                                    ["id": "plan", "label": "Plan", "type": "choice", "choices": ["free", "pro", "team"], "value": "free", "required": true],
                                ],
                            ],
                            [
                                "id": "terms", "title": "Terms", "cta": "Create account", "summary": "Terms accepted",
                                "fields": [["id": "accept", "label": "I accept the terms", "type": "boolean", "required": true]],
                            ],
                        ],
                    ],
                    // InfiniteScrollViews' calendar: months around the current month (`today` of `builtin`).
                    "month": [
                        "kind": "pager", "label": "Month", "domain": "month", "start": "current", "radius": 2,
                        "hold": ["delayMs": 500, "intervalMs": 250, "maxHoldMs": 30000],
                    ],
                    // A switch that only a held press changes: everyone sees who is confirming until when.
                    "onAir": ["kind": "toggle", "label": "On air", "confirmHoldMs": 800],
                    // A five-minute countdown everyone sees run, counted on each client's clock.
                    "timebox": ["kind": "timer", "label": "Timebox", "mode": "countdown", "durationMs": 300_000],
                    // A fader: dragged by one, watched moving by all (its patches at most every 16 ms).
                    "volume": ["kind": "range", "label": "Volume", "min": 0, "max": 1, "step": 0.05, "value": 0.5, "minIntervalMs": 16],
                    // A vote: each member sees its own ballot and how many voted, until someone reveals the tally.
                    "lunch": ["kind": "poll", "label": "Lunch", "options": ["Pizza", "Sushi", "Salad"], "allowAdd": true, "maxOptions": 8],
                    // A shared note: several people type into it at once, and nobody's text is lost.
                    "notes": ["kind": "text", "label": "Notes", "text": "", "maxLength": 2_000],
                ],
            ],
        ],
    ]

    /// The built-in config read on `today` (its month pager starts at today's month).
    public static func builtin(today: CivilDate) -> ServerConfig {
        do { return try ServerConfig(json: builtinJSON, file: "<built-in>", today: today) } catch {
            preconditionFailure("the built-in config is invalid: \(error)")
        }
    }
}
