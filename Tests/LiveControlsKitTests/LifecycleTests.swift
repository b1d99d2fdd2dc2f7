import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LiveControlsKit
import XCTest

/// How handles and connections end: dropped claims, lost connections, giving up, 4001, closing while reconnecting.
@MainActor
final class LifecycleTests: XCTestCase {
    private var servers: [ServerProcess] = []
    private var clients: [LiveControlsClient] = []

    override func tearDown() async throws {
        for client in clients { await client.close() }
        for server in servers { server.stop() }
    }

    private func start(_ arguments: [String] = []) throws -> ServerProcess {
        let server = try ServerProcess(arguments)
        servers.append(server)
        return server
    }

    private func client(_ server: ServerProcess, name: String? = nil, attempts: Int? = nil) -> LiveControlsClient {
        var configuration = LiveControlsClient.Configuration()
        configuration.reconnectDelay = .milliseconds(50)
        configuration.maxReconnectAttempts = attempts
        let client = LiveControlsClient(url: server.wsURL, name: name, configuration: configuration)
        clients.append(client)
        return client
    }

    func testAConnectionThatNeverOpensFailsWithTheTimeOutSaidOnce() async throws {
        var configuration = LiveControlsClient.Configuration()
        configuration.connectTimeout = .milliseconds(100)
        let silent = LiveControlsClient(url: URL(string: "ws://127.0.0.1:9/ws")!, configuration: configuration, transport: SilentTransport())
        clients.append(silent)
        do {
            _ = try await silent.join("demo")
            XCTFail("joined without a connection")
        } catch let error as LiveControlsError {
            guard case .connectFailed(let why) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(why, "no connection within the time-out")
            XCTAssertEqual(error.description, "cannot connect: no connection within the time-out")
        }
    }

    func testDroppingAClaimHandleGivesTheClaimUp() async throws {
        let server = try start()
        let ann = try await client(server, name: "Ann").join("demo")
        let bob = try await client(server, name: "Bob").join("demo")
        var claim: Claim? = try await ann.control("signup")!.claim("account.email")
        try await eventually("Bob sees the claim") { bob.control("signup")?.claims["account.email"] != nil }
        XCTAssertEqual(claim?.isActive, true)
        claim = nil
        try await eventually("the claim is gone") { bob.control("signup")?.claims.isEmpty == true }
    }

    func testALostConnectionEndsHoldsAndClaimsAndTheClientGivesUpAfterItsAttempts() async throws {
        let server = try start()
        let client = client(server, attempts: 2)
        let room = try await client.join("demo")
        let hold = try await room.stepper("quantity")!.press(.next)
        let claim = try await room.control("signup")!.claim("account")
        server.stop()
        try await eventually("the handles ended") { !hold.isActive && !claim.isActive }
        XCTAssertNotNil(hold.endReason)
        XCTAssertNotNil(claim.endReason)
        try await eventually("given up") { client.connectionState == .closed }
        guard case .left(.connectionLost?) = room.status else { return XCTFail("\(room.status)") }
        await expectNotConnected { try await room.stepper("quantity")!.next() }
    }

    func testCloseWhileReconnectingStopsAtOnce() async throws {
        let server = try start()
        let client = client(server)
        let room = try await client.join("demo")
        server.stop()
        try await eventually("reconnecting") { if case .reconnecting = client.connectionState { true } else { false } }
        XCTAssertEqual(room.status, .reconnecting)
        await client.close()
        XCTAssertEqual(client.connectionState, .closed)
        XCTAssertEqual(room.status, .left(nil))
    }

    func testASessionDisconnectedByTheServerAPIIsNotReconnected() async throws {
        let key = "kit-test-api-key-0123456789"
        let server = try start(["--api-key", key])
        let client = client(server)
        let room = try await client.join("demo")
        let session = try XCTUnwrap(client.session)
        var request = URLRequest(url: server.httpURL.appendingPathComponent("api/v1/rooms/demo/members/\(session)"))
        request.httpMethod = "DELETE"
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        let (_, response) = try await URLSession.shared.data(for: request)
        XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 200)
        try await eventually("closed, not reconnecting") { client.connectionState == .closed }
        guard case .left(.connectionLost(let why)?) = room.status else { return XCTFail("\(room.status)") }
        XCTAssertTrue(why.contains("4001"), why)
    }

    private func expectNotConnected(_ operation: () async throws -> Void) async {
        do {
            try await operation()
            XCTFail("succeeded while closed")
        } catch let error as LiveControlsError {
            XCTAssertEqual(error, .notConnected)
        } catch {
            XCTFail("\(error)")
        }
    }
}
