import CLibWebSockets
import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsRuntime

/// One server API request on the service thread: waiting for its body, then for its reply from the rooms.
final class APIExchange {
    /// Tells this request from a later one on the same connection (a reply for a request whose connection
    /// closed, or went on to the next request, is dropped).
    let id: Int
    let route: APIRoute
    let grant: AuthPolicy.APIGrant
    /// Query arguments the route reads (`APIQuery.parameters(of:)`), each given at most once.
    var query: [String: String] = [:]
    var body: [UInt8] = []
    /// Whether the request waits for its body (`HTTP_BODY` … `HTTP_BODY_COMPLETION`).
    var awaitingBody = false
    /// What it counts against `apiBodyBytesReceiving` (its declared length) until it ends, and the client address
    /// it counts against (`apiBodyBytesByAddress`).
    var reservedBodyBytes = 0
    var bodyAddress = ""
    /// Its answer ends the connection (`LiveControlsServer.declaresBody`).
    var closeAfter = false

    init(id: Int, route: APIRoute, grant: AuthPolicy.APIGrant) {
        self.id = id
        self.route = route
        self.grant = grant
    }
}

extension LiveControlsServer {
    /// Service thread, `LWS_CALLBACK_HTTP` under `/api`: routes and authorizes the request, then waits for its body
    /// (`HTTP_BODY`…`HTTP_BODY_COMPLETION`) or hands it to the rooms at once.
    func serveAPI(_ wsi: OpaquePointer, method: String, path: String) -> Int32 {
        let declared = header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH).flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? 0
        let chunked = header(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) != nil
        // A refusal before the body is read: the connection cannot be reused for a next request. (Also a POST, PUT or
        // PATCH without Content-Length, for which lws expects a body: `declaresBody`.)
        let unread = declaresBody(wsi)
        logger.debug("API request", metadata: ["method": "\(method)", "path": "\(path)"])
        // Who asks comes first: a caller without a valid credential learns nothing about the routes.
        let grant: AuthPolicy.APIGrant
        switch options.auth.authorizeAPI(authorization: header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION)) {
        case let .success(g): grant = g
        case let .failure(error):
            let refusal = APIError(status: APIError.status(of: error.code), error)
            return chunked ? respondAndClose(wsi, PendingHTTPResponse(APIResponse.failure(refusal))) : refuse(wsi, refusal, closeAfter: unread)
        }
        if chunked {
            // libwebsockets does not read chunked request bodies: the chunks would be taken for the next request.
            return respondAndClose(wsi, PendingHTTPResponse(APIResponse.failure(
                APIError(status: 411, ProtocolError(.invalidMessage, "send the body with a Content-Length (chunked bodies are not read)")))))
        }
        let route: APIRoute
        switch APIRoute.match(method: method, path: path) {
        case let .success(r): route = r
        case let .failure(error): return refuse(wsi, error, closeAfter: unread)
        }
        if let room = route.room, !grant.allows(room: room) {
            return refuse(wsi, APIError(status: 403, ProtocolError(.forbidden, "the token does not grant room \(room)", room: room)), closeAfter: unread)
        }
        let query: [String: String]
        switch APIQuery.read(urlArguments(wsi), for: route) {
        case let .success(q): query = q
        case let .failure(error): return refuse(wsi, error, closeAfter: unread)
        }
        if !route.takesBody, declared > 0 {
            return refuse(wsi, .badBody("\(method) \(path) takes no body"), closeAfter: true)
        }
        nextExchange += 1
        let exchange = APIExchange(id: nextExchange, route: route, grant: grant)
        exchange.query = query
        exchange.closeAfter = unread && declared == 0  // no body to read, though lws would read one: answer, then close
        apiExchanges[wsi] = exchange
        guard route.takesBody else {
            handle(exchange, wsi)
            return 0
        }
        if declared > options.apiMaxBodyBytes {
            return refuse(wsi, APIError(status: 413, ProtocolError(.tooLarge, "the body is \(declared) bytes; the API reads at most \(options.apiMaxBodyBytes)")),
                          closeAfter: true)
        }
        if declared == 0 {
            handle(exchange, wsi)
        } else {
            // In all, and a quarter of that for one client address: one client's slow uploads cannot hold every
            // other client's back.
            let address = shares.clientAddress(peer: peerAddress(wsi), forwardedFor: header(wsi, WSI_TOKEN_X_FORWARDED_FOR))
            let ownShare = options.apiBodyBytesInFlight / 4
            guard apiBodyBytesReceiving + declared <= options.apiBodyBytesInFlight,
                  apiBodyBytesByAddress[address, default: 0] + declared <= max(ownShare, options.apiMaxBodyBytes) else {
                apiExchanges[wsi] = nil
                logger.warning("API request refused: too many request bodies being received", metadata: [
                    "receiving": "\(apiBodyBytesReceiving)", "limit": "\(options.apiBodyBytesInFlight)", "address": "\(address)"])
                return refuse(wsi, APIError(status: 503, ProtocolError(.unavailable, "the server is receiving too many request bodies at once; retry in a moment")),
                              closeAfter: true)
            }
            apiBodyBytesReceiving += declared
            apiBodyBytesByAddress[address, default: 0] += declared
            exchange.reservedBodyBytes = declared
            exchange.bodyAddress = address
            exchange.body.reserveCapacity(declared)
            exchange.awaitingBody = true
        }
        return 0
    }

    /// Service thread, `HTTP_BODY`: one piece of a body the request declared (lws delivers no more than declared).
    func receiveAPIBody(_ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int) {
        guard let exchange = apiExchanges[wsi], exchange.awaitingBody, let input, length > 0 else { return }
        guard exchange.body.count + length <= options.apiMaxBodyBytes else { return }
        exchange.body.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
    }

    /// Service thread, `HTTP_BODY_COMPLETION`.
    func completeAPIBody(_ wsi: OpaquePointer) {
        guard let exchange = apiExchanges[wsi], exchange.awaitingBody else { return }
        exchange.awaitingBody = false
        releaseBody(of: exchange)
        handle(exchange, wsi)
    }

    /// The exchange's body no longer counts as being received (complete, or its connection gone).
    func releaseBody(of exchange: APIExchange) {
        guard exchange.reservedBodyBytes > 0 else { return }
        apiBodyBytesReceiving -= exchange.reservedBodyBytes
        let left = apiBodyBytesByAddress[exchange.bodyAddress, default: 0] - exchange.reservedBodyBytes
        apiBodyBytesByAddress[exchange.bodyAddress] = left > 0 ? left : nil
        exchange.reservedBodyBytes = 0
    }

    private func refuse(_ wsi: OpaquePointer, _ error: APIError, closeAfter: Bool) -> Int32 {
        var response = PendingHTTPResponse(APIResponse.failure(error))
        response.closeAfter = closeAfter
        response.headOnly = requestMethodAndPath(wsi).method == "HEAD"  // (the API has no HEAD route: a 405 or a 401)
        respond(wsi, response)
        return 0
    }

    /// Service thread: hands the request to the rooms; the reply comes back through `Hub.perform`.
    private func handle(_ exchange: APIExchange, _ wsi: OpaquePointer) {
        guard let administration = registry.administration else { return }
        // Nothing more is read from the connection until the rooms answer (`respond` reads again): bytes already read
        // behind this request (one pipelined behind it) would otherwise be offered to lws's parser on every pass of the
        // service thread, which would spin until the answer.
        lws_rx_flow_control(wsi, 0)
        let key = UInt(bitPattern: wsi)
        let id = exchange.id
        let reply: @Sendable (APIResponse) -> Void = { [self] response in
            let deliver: @Sendable () -> Void = { [self] in
                guard let wsi = OpaquePointer(bitPattern: key), let current = apiExchanges[wsi], current.id == id else { return }
                var answer = PendingHTTPResponse(response)
                answer.closeAfter = current.closeAfter
                respond(wsi, answer)
            }
            // Answered on the service thread itself (a refusal, a disconnect): no hop through the hub.
            if hub.onServiceThread { deliver() } else { hub.perform(deliver) }
        }
        let room = exchange.route.room ?? ""
        switch exchange.route {
        case .listRooms:
            let grant = exchange.grant
            administration.listRooms { result in
                reply(result.map { rooms in APIResponse.ok(["rooms": .array(rooms.filter { grant.allows(room: $0.name) }.map(\.json))]) }
                    .mapError(APIError.init).orFailure)
            }
        case .createRoom:
            switch APIBody.parse(exchange.body).flatMap(APIBody.creation) {
            case let .failure(error):
                reply(.failure(error))
            case let .success((name, template, intents)):
                guard exchange.grant.allows(room: name) else {
                    return reply(.failure(APIError(status: 403, ProtocolError(.forbidden, "the token does not grant room \(name)", room: name))))
                }
                administration.createRoom(name, template: template, intents: intents) { result in
                    reply(result.map { APIResponse.ok($0.json, status: 201) }.mapError(APIError.init).orFailure)
                }
            }
        case .getRoom:
            administration.describeRoom(room) { result in reply(result.map { APIResponse.ok($0.json) }.mapError(APIError.init).orFailure) }
        case .members:
            administration.describeRoom(room) { result in
                reply(result.map { details in
                    APIResponse.ok(["room": .string(details.name), "epoch": .string(details.epoch), "version": .int(details.version),
                                    "members": .array(details.members.map(\.json))])
                }.mapError(APIError.init).orFailure)
            }
        case .deleteRoom:
            administration.deleteRoom(room) { result in
                reply(result.map { version in
                    var body = version.json
                    body["deleted"] = true
                    return APIResponse.ok(body)
                }.mapError(APIError.init).orFailure)
            }
        case .applyIntents:
            switch APIBody.parse(exchange.body).flatMap(APIBody.intents) {
            case let .failure(error): reply(.failure(error))
            case let .success(intents):
                administration.applyIntents(room, intents) { result in reply(result.map { APIResponse.ok($0.json) }.mapError(APIError.init).orFailure) }
            }
        case .resetRoom:
            administration.resetRoom(room) { result in reply(result.map { APIResponse.ok($0.json) }.mapError(APIError.init).orFailure) }
        case .broadcast:
            switch APIBody.parse(exchange.body).flatMap(APIBody.broadcastEvent) {
            case let .failure(error): reply(.failure(error))
            case let .success(event):
                administration.broadcast(room, event: event) { result in reply(result.map { APIResponse.ok($0.json) }.mapError(APIError.init).orFailure) }
            }
        case .patches:
            guard let text = exchange.query["after"], let after = APIQuery.integer(text) else {
                return reply(.failure(.badBody("the query needs after=VERSION, an integer ≥ 0")))
            }
            let epoch = exchange.query["epoch"]
            if let epoch, epoch.isEmpty || !epoch.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7A) }) {
                return reply(.failure(.badBody("epoch must be a room's epoch (lowercase letters and digits)")))
            }
            administration.history(room, epoch: epoch, after: after) { result in
                reply(result.map { APIResponse.ok($0.json) }.mapError(APIError.init).orFailure)
            }
        case let .disconnect(room, session):
            administration.disconnect(SessionID(session), room: room, grantedRooms: exchange.grant.token?.rooms) { outcome in
                reply(Self.response(to: outcome, session: session, room: room))
            }
        case .webhooks, .failedWebhooks, .retryWebhook:
            handleWebhooks(exchange, reply)
        case .nodes:
            // Which node owns which room is the whole server's layout, not one room's: the API key's alone.
            guard exchange.grant.token == nil else {
                return reply(.failure(APIError(status: 403, ProtocolError(.forbidden, "only the API key may list the cluster's nodes (a token sees its rooms' owners in GET /rooms)"))))
            }
            administration.listNodes { result in
                reply(result.map { nodes in
                    APIResponse.ok(["cluster": .bool(nodes != nil), "nodes": .array((nodes ?? []).map(\.json))])
                }.mapError(APIError.init).orFailure)
            }
        }
    }

    private static func response(to outcome: DisconnectOutcome, session: String, room: String) -> APIResponse {
        switch outcome {
        case .disconnected:
            return .ok(["room": .string(room), "session": .string(session), "disconnected": true])
        case .notFound:
            return .failure(APIError(status: 404, ProtocolError(.notFound, "no session \(session) is in room \(room)", room: room)))
        case .unknownRoom:
            return .failure(APIError(status: 404, ProtocolError(.unknownRoom, "there is no room \(room)", room: room)))
        case let .forbidden(other):
            return .failure(APIError(status: 403, ProtocolError(.forbidden, "session \(session) is also in room \(other), which the token does not grant", room: room)))
        case let .unavailable(message):
            return .failure(APIError(status: 503, ProtocolError(.unavailable, "the node of session \(session) could not be asked: \(message); retry", room: room)))
        }
    }

    /// The close code of a connection the server API disconnected: the client should not reconnect on its own.
    static let disconnectedCloseCode: UInt16 = 4001
}

extension PendingHTTPResponse {
    init(_ response: APIResponse) {
        self.init(status: response.status, contentType: "application/json", headers: response.headers, body: response.bytes)
    }
}

extension Result where Success == APIResponse, Failure == APIError {
    var orFailure: APIResponse {
        switch self {
        case let .success(response): return response
        case let .failure(error): return .failure(error)
        }
    }
}

/// The server API's `disconnect` reaches this node's connections here (from this node's API, or another
/// node's in cluster mode).
extension LiveControlsServer: SessionCloser {
    package func disconnect(_ session: SessionID, room: String, grantedRooms: [String]?, _ reply: @escaping @Sendable (DisconnectOutcome) -> Void) {
        let work: @Sendable () -> Void = { [self] in reply(closeConnection(session, room: room, grantedRooms: grantedRooms)) }
        if hub.onServiceThread { work() } else { hub.perform(work) }
    }

    /// Service thread: closes the connection of a member of `room` with 4001.
    private func closeConnection(_ session: SessionID, room: String, grantedRooms: [String]?) -> DisconnectOutcome {
        serviceThread.assertOn()
        guard let connection = connections[session], connection.joined[room] != nil else { return .notFound }
        // The close takes the session out of every room it is in: the token must grant each of them.
        if let grantedRooms, let other = connection.joined.keys.sorted().first(where: { !AccessToken.patterns(grantedRooms, allow: $0) }) {
            return .forbidden(otherRoom: other)
        }
        logger.info("disconnecting a session through the server API", metadata: ["session": "\(session)", "room": "\(room)"])
        beginClose(connection, code: Self.disconnectedCloseCode, reason: "disconnected by the server")
        // Out of its rooms now, not when the client answers the close (lws waits up to 5 s for that): members and the
        // API see it gone at once, and nothing it still sends is applied.
        for membership in connection.joined.values { membership.room.leave(connection, id: nil, reason: .disconnect) }
        connection.joined.removeAll()
        return .disconnected
    }
}
