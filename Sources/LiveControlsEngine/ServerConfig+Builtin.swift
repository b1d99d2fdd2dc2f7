import LiveControlsProtocol

extension ServerConfig {
    /// The config used without `--config`: template `demo`, and a room `demo` made from it.
    public static let builtinJSON: JSONValue = [
        "defaultTemplate": "demo",
        "rooms": ["demo": ["template": "demo"]],
        "templates": [
            "demo": [
                "controls": [
                    "quantity": [
                        "kind": "stepper", "label": "Quantity", "min": 0, "max": 99, "value": 1, "step": 1,
                        "hold": ["delayMs": 500, "intervalMs": 100, "minIntervalMs": 100, "maxHoldMs": 30000],
                    ],
                ],
            ],
        ],
    ]

    public static func builtin() -> ServerConfig {
        do { return try ServerConfig(json: builtinJSON, file: "<built-in>") } catch {
            preconditionFailure("the built-in config is invalid: \(error)")
        }
    }
}
