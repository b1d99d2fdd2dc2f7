import LiveControlsEngine
import XCTest

final class TokenTests: XCTestCase {
    func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    func testSHA256MatchesFIPSVectors() {
        XCTAssertEqual(hex(SHA256.hash(Array("abc".utf8))), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(hex(SHA256.hash([])), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(hex(SHA256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))),
                       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        XCTAssertEqual(hex(SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))),
                       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    func testHMACMatchesRFC4231Vectors() {
        XCTAssertEqual(hex(HMACSHA256.authenticate(Array("Hi There".utf8), key: [UInt8](repeating: 0x0b, count: 20))),
                       "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        XCTAssertEqual(hex(HMACSHA256.authenticate(Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8))),
                       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        // Test case 6: a key longer than the block size is hashed first.
        XCTAssertEqual(hex(HMACSHA256.authenticate(Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
                                                   key: [UInt8](repeating: 0xaa, count: 131))),
                       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    func testBase64URLRoundTripsEveryLength() {
        for n in 0..<40 {
            let bytes = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            XCTAssertEqual(Base64URL.decode(Base64URL.encode(bytes)), bytes)
        }
        XCTAssertNil(Base64URL.decode("a"))
        XCTAssertNil(Base64URL.decode("ab+c"))
    }

    /// Issue 19: the last character of a base64url part could carry unused bits, so one token had several
    /// spellings (a revocation list by token string could be passed by another spelling of a revoked token).
    func testOnlyTheCanonicalSpellingOfAPartIsAccepted() throws {
        XCTAssertEqual(Base64URL.decode("YQ"), [0x61])
        XCTAssertNil(Base64URL.decode("YR"), "the same byte with unused bits set")
        XCTAssertEqual(Base64URL.decode("YWI"), [0x61, 0x62])
        XCTAssertNil(Base64URL.decode("YWJ"))
        let token = authority.sign(AccessToken(role: .editor, rooms: ["*"], expiresAt: 2_000))
        // A 32-byte signature is 43 characters: its last one has 2 unused bits. Flip them: another spelling.
        var characters = Array(token)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let last = alphabet.firstIndex(of: characters[characters.count - 1])!
        characters[characters.count - 1] = alphabet[last ^ 1]
        XCTAssertThrowsError(try authority.verify(String(characters), now: 1_000))
        XCTAssertNoThrow(try authority.verify(token, now: 1_000))
    }

    let authority = TokenAuthority(secret: "unit-test-secret-0123456789")

    func testSignedTokenVerifiesWithItsClaims() throws {
        let token = AccessToken(subject: "u1", name: "Ann", role: .viewer, rooms: ["demo", "team-*"], expiresAt: 2_000, issuedAt: 1_000)
        let verified = try authority.verify(authority.sign(token), now: 1_500)
        XCTAssertEqual(verified, token)
        XCTAssertTrue(verified.allows(room: "team-9"))
        XCTAssertTrue(verified.allows(room: "demo"))
        XCTAssertFalse(verified.allows(room: "demo2"))
    }

    func testExpiryIsExclusive() throws {
        let text = authority.sign(AccessToken(role: .editor, rooms: ["*"], expiresAt: 2_000))
        XCTAssertNoThrow(try authority.verify(text, now: 1_999))
        XCTAssertThrowsError(try authority.verify(text, now: 2_000)) { XCTAssertEqual($0 as? TokenError, .expired) }
    }

    /// A JWT NumericDate may have a fraction (RFC 7519 §2): such an `exp` is valid, cut to the second before.
    func testAnExpiryWithAFractionIsASecondsCount() throws {
        func signed(_ payload: String) -> String {
            let input = Base64URL.encode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
            return input + "." + Base64URL.encode(HMACSHA256.authenticate(Array(input.utf8), key: Array("unit-test-secret-0123456789".utf8)))
        }
        let fractional = signed(#"{"role":"editor","rooms":["*"],"exp":2000.5,"iat":1000.25}"#)
        XCTAssertEqual(try authority.verify(fractional, now: 1_999).expiresAt, 2_000)
        XCTAssertEqual(try authority.verify(fractional, now: 1_999).issuedAt, 1_000)
        XCTAssertThrowsError(try authority.verify(fractional, now: 2_000)) { XCTAssertEqual($0 as? TokenError, .expired) }
        XCTAssertThrowsError(try authority.verify(signed(#"{"role":"editor","rooms":["*"],"exp":"2000"}"#), now: 1_000)) {
            XCTAssertEqual($0 as? TokenError, .invalid("exp must be a number of seconds since 1970"))
        }
        XCTAssertThrowsError(try authority.verify(signed(#"{"role":"editor","rooms":["*"]}"#), now: 1_000)) {
            XCTAssertEqual($0 as? TokenError, .invalid("exp (expiry, seconds since 1970) is required"))
        }
    }

    /// Found by an audit: a `name` of another type passed, unlike every other claim of the wrong shape.
    func testANameMustBeAShortStringOrNull() throws {
        func signed(_ payload: String) -> String {
            let input = Base64URL.encode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
            return input + "." + Base64URL.encode(HMACSHA256.authenticate(Array(input.utf8), key: Array("unit-test-secret-0123456789".utf8)))
        }
        let base = #""role":"editor","rooms":["*"],"exp":2000"#
        XCTAssertEqual(try authority.verify(signed("{\(base),\"name\":\"Ann\"}"), now: 1_000).name, "Ann")
        XCTAssertNil(try authority.verify(signed("{\(base),\"name\":null}"), now: 1_000).name)
        XCTAssertEqual(try authority.verify(signed("{\(base),\"name\":\"\(String(repeating: "é", count: 64))\"}"), now: 1_000).name?.count, 64)
        for bad in ["5", #"{"a":1}"#, "[\"Ann\"]", "true", "\"\(String(repeating: "x", count: 65))\""] {
            XCTAssertThrowsError(try authority.verify(signed("{\(base),\"name\":\(bad)}"), now: 1_000), bad) {
                XCTAssertEqual($0 as? TokenError, .invalid("name must be a string of at most 64 characters"))
            }
        }
    }

    func testTamperedOrForeignTokensAreInvalid() {
        let text = authority.sign(AccessToken(role: .viewer, rooms: ["demo"], expiresAt: 2_000))
        var parts = text.split(separator: ".").map(String.init)
        let admin = Base64URL.encode(Array(#"{"role":"admin","rooms":["*"],"exp":2000}"#.utf8))
        parts[1] = admin
        for forged in [parts.joined(separator: "."), TokenAuthority(secret: "other-secret-0123456789").sign(AccessToken(role: .admin, rooms: ["*"], expiresAt: 2_000)), "x.y", ""] {
            XCTAssertThrowsError(try authority.verify(forged, now: 1_000)) { error in
                guard case .invalid = error as? TokenError else { return XCTFail("expected invalid, got \(error)") }
            }
        }
    }

    func testRolesAreOrdered() {
        XCTAssertLessThan(Role.viewer, Role.editor)
        XCTAssertLessThan(Role.editor, Role.admin)
    }
}
