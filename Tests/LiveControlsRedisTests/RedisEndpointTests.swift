import LiveControlsRedis
import XCTest

final class RedisEndpointTests: XCTestCase {
    func testURLsWithSchemeHostPortAndDatabase() throws {
        XCTAssertEqual(try RedisEndpoint(url: "redis://localhost"), RedisEndpoint(host: "localhost"))
        XCTAssertEqual(try RedisEndpoint(url: "redis://localhost/"), RedisEndpoint(host: "localhost"))
        XCTAssertEqual(try RedisEndpoint(url: "redis://10.0.0.7:6380"), RedisEndpoint(host: "10.0.0.7", port: 6380))
        XCTAssertEqual(try RedisEndpoint(url: "redis://cache:7000/3"), RedisEndpoint(host: "cache", port: 7000, database: 3))
        XCTAssertEqual(try RedisEndpoint(url: "redis://cache/2"), RedisEndpoint(host: "cache", database: 2))
        XCTAssertEqual(try RedisEndpoint(url: "REDIS://cache"), RedisEndpoint(host: "cache"))
        XCTAssertEqual(try RedisEndpoint(url: "redis://[::1]:6380/1"), RedisEndpoint(host: "::1", port: 6380, database: 1))
    }

    func testHostColonPortWithoutScheme() throws {
        XCTAssertEqual(try RedisEndpoint(url: "127.0.0.1:6379"), RedisEndpoint(host: "127.0.0.1"))
        XCTAssertEqual(try RedisEndpoint(url: "redis-1:16379"), RedisEndpoint(host: "redis-1", port: 16379))
    }

    func testDescriptionIsAURLThatReadsBack() throws {
        for endpoint in [
            RedisEndpoint(host: "localhost"), RedisEndpoint(host: "h", port: 7000, database: 5),
            RedisEndpoint(host: "::1", port: 6380),
        ] {
            XCTAssertEqual(try RedisEndpoint(url: endpoint.description), endpoint, endpoint.description)
        }
        XCTAssertEqual(RedisEndpoint(host: "h", port: 7000, database: 5).description, "redis://h:7000/5")
        XCTAssertEqual(RedisEndpoint(host: "h").description, "redis://h:6379")
    }

    func testRejectsEverythingElse() {
        for url in [
            "", "localhost", "redis://", "redis://:6379", "http://localhost:6379", "rediss://", "rediss://:1",
            "redisss://localhost", "rediss-sentinel://h1",
            "redis://:@localhost", "redis://:a%zz@localhost", "redis://:a%+F@localhost", "secret@localhost:6379",
            "redis://localhost:0",
            "redis://localhost:65536", "redis://localhost:abc", "redis://localhost:", "redis://localhost/x",
            "redis://localhost/-1", "localhost:6379/2", "redis://localhost?db=1", "::1:6379", "redis://[::1",
            "redis://a b:1", "localhost:+1",
        ] {
            XCTAssertThrowsError(try RedisEndpoint(url: url), url) { error in
                XCTAssertEqual((error as? RedisError)?.kind, .invalidURL, url)
            }
        }
    }

    func testCredentialsArePercentDecodedAndNeverShownInTheDescription() throws {
        let plain = try RedisEndpoint(url: "redis://:s3cret@cache:6380/2")
        XCTAssertEqual(plain, RedisEndpoint(host: "cache", port: 6380, database: 2, password: "s3cret"))
        XCTAssertEqual(plain.description, "redis://:***@cache:6380/2")
        let acl = try RedisEndpoint(url: "redis://app:p%40ss%3Aw%2Frd@10.0.0.7")
        XCTAssertEqual(acl.username, "app")
        XCTAssertEqual(acl.password, "p@ss:w/rd")
        XCTAssertFalse(acl.description.contains("p@ss") || acl.description.contains("p%40ss"))
        XCTAssertEqual(try RedisEndpoint(url: acl.url), acl, "url keeps the credentials and reads back")
        XCTAssertEqual(try RedisEndpoint(url: "redis://[::1]:6379").url, "redis://[::1]:6379")
    }

    func testAUserWithoutAPasswordAndErrorsThatNeverShowThePassword() throws {
        let user = try RedisEndpoint(url: "redis://app@cache")
        XCTAssertEqual(user.username, "app")
        XCTAssertNil(user.password)
        XCTAssertEqual(user.description, "redis://app@cache:6379")
        for url in ["redis://:hunter2#x@cache", "redis://app:hunter2@cache:99999", "redis://:hunter2%zz@cache"] {
            XCTAssertThrowsError(try RedisEndpoint(url: url), url) { error in
                XCTAssertFalse("\(error)".contains("hunter2"), "\(error)")
            }
        }
    }

    func testSentinelURLsNameTheSentinelsTheMasterAndItsCredentials() throws {
        let endpoint = try RedisEndpoint(url: "redis-sentinel://app:s3cret@10.0.0.1,10.0.0.2:26380,[::1]/mymaster/2")
        XCTAssertEqual(endpoint.sentinels, [SentinelAddress(host: "10.0.0.1"), SentinelAddress(host: "10.0.0.2", port: 26380),
                                            SentinelAddress(host: "::1")])
        XCTAssertEqual(endpoint.masterName, "mymaster")
        XCTAssertEqual(endpoint.database, 2)
        XCTAssertEqual(endpoint.username, "app")
        XCTAssertEqual(endpoint.password, "s3cret")
        XCTAssertEqual(endpoint.description, "redis-sentinel://app:***@10.0.0.1:26379,10.0.0.2:26380,[::1]:26379/mymaster/2")
        XCTAssertEqual(try RedisEndpoint(url: endpoint.url), endpoint, "url keeps everything and reads back")
        XCTAssertEqual(try RedisEndpoint(url: "redis-sentinel://sentinel/m").sentinels, [SentinelAddress(host: "sentinel")])
        let at = try RedisEndpoint(url: "redis-sentinel://h1/m@x")  // an @ in the path is no credential
        XCTAssertEqual(at.masterName, "m@x")
        XCTAssertNil(at.password)
        for bad in ["redis-sentinel://h1", "redis-sentinel://h1/", "redis-sentinel://h1,/m", "redis-sentinel://h1/m/x/y",
                    "redis-sentinel://h1/m/x", "redis-sentinel://h1:99999/m", "redis-sentinel://:hunter2@h1", "redis-sentinel://h1/m/"] {
            XCTAssertThrowsError(try RedisEndpoint(url: bad), bad) { error in
                XCTAssertFalse("\(error)".contains("hunter2"), "\(error)")
            }
        }
    }

    func testRedissURLsAreTheSameOverTLS() throws {
        var expected = RedisEndpoint(host: "cache", port: 6380, database: 1, username: "app", password: "pw")
        expected.tls = RedisTLS()
        let endpoint = try RedisEndpoint(url: "rediss://app:pw@cache:6380/1")
        XCTAssertEqual(endpoint, expected)
        XCTAssertEqual(endpoint.description, "rediss://app:***@cache:6380/1")
        XCTAssertEqual(try RedisEndpoint(url: endpoint.url), endpoint)
        XCTAssertNil(try RedisEndpoint(url: "redis://cache").tls)
        XCTAssertEqual(try RedisEndpoint(url: "REDISS://cache").tls, RedisTLS())

        let sentinel = try RedisEndpoint(url: "rediss-sentinel://s1,s2:26380/mymaster")
        XCTAssertEqual(sentinel.tls, RedisTLS())
        XCTAssertEqual(sentinel.sentinels, [SentinelAddress(host: "s1"), SentinelAddress(host: "s2", port: 26380)])
        XCTAssertEqual(sentinel.description, "rediss-sentinel://s1:26379,s2:26380/mymaster")
        XCTAssertEqual(try RedisEndpoint(url: sentinel.url), sentinel)
        XCTAssertNil(try RedisEndpoint(url: "redis-sentinel://s1/m").tls)
    }
}
