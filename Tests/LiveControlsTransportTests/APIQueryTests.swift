@testable import LiveControlsTransport
import XCTest

/// The query arguments the server API reads: each at most once, integers in plain decimal.
final class APIQueryTests: XCTestCase {
    func testIntegersArePlainDecimalWithinInt() {
        XCTAssertEqual(APIQuery.integer("0"), 0)
        XCTAssertEqual(APIQuery.integer("17"), 17)
        XCTAssertEqual(APIQuery.integer("9223372036854775807"), Int.max)
        for text in ["", "+1", "-1", "01", "00", "1.0", "1e3", " 1", "1 ", "0x1", "١", "9223372036854775808"] {
            XCTAssertNil(APIQuery.integer(text), text)
        }
    }

    func testAnArgumentTheRouteReadsMayBeGivenOnce() throws {
        let once = try APIQuery.read([("after", "3"), ("epoch", "e1"), ("other", "x"), ("other", "y")], for: .patches("demo")).get()
        XCTAssertEqual(once, ["after": "3", "epoch": "e1"], "arguments no route reads are ignored, even repeated")
        guard case let .failure(error) = APIQuery.read([("after", "3"), ("after", "3")], for: .patches("demo")) else {
            return XCTFail("a repeated after was taken")
        }
        XCTAssertEqual(error.status, 400)
        XCTAssertEqual(error.error.code, .invalidMessage)
        XCTAssertThrowsError(try APIQuery.read([("limit", "1"), ("limit", "2")], for: .failedWebhooks).get())
        XCTAssertEqual(try APIQuery.read([("limit", "1"), ("limit", "2")], for: .listRooms).get(), [:])
    }
}
