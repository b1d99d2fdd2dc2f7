@testable import LiveControlsTransport
import XCTest

/// Which route a method and path are, or why none is: ids in the path are checked before the method.
final class APIRouteTests: XCTestCase {
    func testASessionIdIsOneTo64LettersDigitsUnderscoresAndDashes() {
        let longest = "s" + String(repeating: "a", count: 63)
        XCTAssertEqual(try APIRoute.match(method: "DELETE", path: "/api/v1/rooms/demo/members/\(longest)").get(),
                       .disconnect(room: "demo", session: longest))
        XCTAssertEqual(try APIRoute.match(method: "DELETE", path: "/api/v1/rooms/demo/members/s_x-1").get(),
                       .disconnect(room: "demo", session: "s_x-1"))
        for bad in [longest + "a", "", "s.x", "s x", "sé", "s\n"] {
            guard case let .failure(error) = APIRoute.match(method: "DELETE", path: "/api/v1/rooms/demo/members/\(bad)") else {
                return XCTFail("\(bad.debugDescription) was taken for a session id")
            }
            XCTAssertEqual(error.status, 400, bad.debugDescription)
        }
        // An id that cannot be is a 400 whatever the method; a good one with the wrong method a 405.
        guard case let .failure(badID) = APIRoute.match(method: "GET", path: "/api/v1/rooms/demo/members/s.x") else {
            return XCTFail("s.x was taken for a session id")
        }
        XCTAssertEqual(badID.status, 400)
        guard case let .failure(wrongMethod) = APIRoute.match(method: "GET", path: "/api/v1/rooms/demo/members/s1") else {
            return XCTFail("GET of a member was routed")
        }
        XCTAssertEqual(wrongMethod.status, 405)
        XCTAssertEqual(wrongMethod.allow, ["DELETE"])
    }

    func testTheAPIMountIsSlashAPIAndWhatIsUnderIt() {
        XCTAssertTrue(APIRoute.isAPIPath("/api"))
        XCTAssertTrue(APIRoute.isAPIPath("/api/"))
        XCTAssertTrue(APIRoute.isAPIPath("/api/v1/rooms"))
        XCTAssertFalse(APIRoute.isAPIPath("/apis"))
        XCTAssertFalse(APIRoute.isAPIPath("/healthz"))
    }

    func testTheNodesAreOneGETRoute() {
        XCTAssertEqual(try APIRoute.match(method: "GET", path: "/api/v1/nodes").get(), .nodes)
        guard case let .failure(wrongMethod) = APIRoute.match(method: "POST", path: "/api/v1/nodes") else { return XCTFail("POST /nodes") }
        XCTAssertEqual(wrongMethod.allow, ["GET"])
        XCTAssertNil(APIRoute.nodes.room)
    }
}
