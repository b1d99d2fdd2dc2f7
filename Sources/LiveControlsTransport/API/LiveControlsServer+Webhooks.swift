import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsRuntime

/// The server API's webhook routes: the endpoints and what waits for them, deliveries given up, and retrying one.
extension LiveControlsServer {
    func handleWebhooks(_ exchange: APIExchange, _ reply: @escaping @Sendable (APIResponse) -> Void) {
        let grant = exchange.grant
        var limit = 100
        if exchange.route == .failedWebhooks, let text = exchange.query["limit"] {
            guard let value = APIQuery.integer(text), (1...1_000).contains(value) else { return reply(.failure(.badBody("limit must be an integer within 1…1000"))) }
            limit = value
        }
        // Endpoints are the server's own configuration, across every room: the API key's alone (issue 38), also
        // when there are none (an empty list would tell a token what it may not ask).
        if exchange.route == .webhooks, grant.token != nil {
            return reply(.failure(APIError(status: 403, ProtocolError(.forbidden, "only the API key may list webhook endpoints (a token may list and retry its rooms' failed deliveries)"))))
        }
        guard let webhooks = registry.webhooks else {
            if case .retryWebhook = exchange.route {
                return reply(.failure(APIError(status: 404, ProtocolError(.notFound, "no webhooks are configured"))))
            }
            return reply(.ok(exchange.route == .webhooks ? ["endpoints": []] : ["failed": []]))
        }
        switch exchange.route {
        case .webhooks:
            webhooks.status { endpoints in
                let list: [JSONValue] = endpoints.enumerated().map { index, status in
                    let events: [JSONValue] = status.endpoint.events.map { .string($0) }
                    let entry: JSONObject = [
                        "index": .int(index), "url": .string(status.endpoint.redactedURL), "events": .array(events),
                        "pending": .int(status.pending), "inFlight": .int(status.inFlight), "spilled": .bool(status.spilled),
                    ]
                    return .object(entry)
                }
                reply(.ok(["endpoints": .array(list)]))
            }
        case .failedWebhooks:
            var granted: (@Sendable (String) -> Bool)? = nil  // the API key: every room
            if grant.token != nil { granted = { grant.allows(room: $0) } }
            webhooks.failed(limit: limit, inRooms: granted) { result in
                switch result {
                case let .success(failed):
                    reply(.ok(["failed": .array(failed.map(\.json))]))
                case let .failure(error):
                    reply(.failure(APIError(status: 503, ProtocolError(.unavailable, "the store could not list failed deliveries: \(error)"))))
                }
            }
        case let .retryWebhook(id):
            // A token may retry only events of rooms it grants.
            webhooks.retry(eventID: id, allowed: { grant.allows(room: $0) }) { result in
                switch result {
                case let .success((_, room?)):
                    reply(.failure(APIError(status: 403, ProtocolError(.forbidden, "the token does not grant room \(room)", room: room))))
                case .success((0, nil)):
                    reply(.failure(APIError(status: 404, ProtocolError(.notFound, "no failed delivery of event \(id)"))))
                case let .success((count, nil)):
                    reply(.ok(["id": .string(id), "retried": .int(count)]))
                case let .failure(error):
                    reply(.failure(APIError(status: 503, ProtocolError(.unavailable, "the store could not retry it: \(error)"))))
                }
            }
        default:
            break
        }
    }
}

extension FailedWebhook {
    var json: JSONValue {
        ["endpoint": .string(WebhookEndpoint.redacted(endpoint)), "attempts": .int(attempts), "error": .string(error),
         "failedAt": .string(WebhookEvent.iso8601(milliseconds: failedAt)),
         "event": ["id": .string(event.id), "type": .string(event.type), "room": .string(event.room),
                   "timestamp": .string(WebhookEvent.iso8601(milliseconds: event.timestamp)), "data": .object(event.data)]]
    }
}
