import Foundation
import LiveControlsProtocol
import LiveControlsTestSupport
import XCTest

/// A million generated frames through the decoder: each yields a message or a typed error, never a crash.
/// (`FUZZ_ITERATIONS` changes the count; `scripts/fuzz` runs the fuzzers in a release build.)
final class DecoderFuzzTests: XCTestCase {
    static let iterations = Int(ProcessInfo.processInfo.environment["FUZZ_ITERATIONS"] ?? "") ?? 1_000_000

    static let seeds: [String] = [
        #"{"type":"join","room":"demo","name":"Ann","since":{"epoch":"e1","version":3},"id":"j1"}"#,
        #"{"type":"intent","id":"c1","room":"demo","control":"quantity","intent":"press","args":{"direction":"next"}}"#,
        #"{"type":"intent","id":7,"room":"demo","control":"quantity","intent":"set","args":{"value":42}}"#,
        #"{"type":"leave","room":"demo","id":"l"}"#,
        #"[1,2.5e3,-0,"\u00e9\ud83d\ude00",true,false,null,{"a":{"b":[{}]}}]"#,
    ]

    static let tokens: [[UInt8]] = ["{", "}", "[", "]", ",", ":", "\"", "\\", "\\u", "d83d", "null", "true", "-", "0", "1e", ".",
                                    "type", "join", "intent", "room", "id", " ", "\u{0}", "\u{1f}"].map { Array($0.utf8) } + [[0xff], [0xc3], [0xe2, 0x82]]

    func mutate(_ input: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            switch Int.random(in: 0..<6, using: &rng) {
            case 0 where !bytes.isEmpty: bytes.remove(at: Int.random(in: 0..<bytes.count, using: &rng))
            case 1: bytes.insert(UInt8.random(in: 0...255, using: &rng), at: Int.random(in: 0...bytes.count, using: &rng))
            case 2 where !bytes.isEmpty: bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            case 3: bytes.insert(contentsOf: Self.tokens.randomElement(using: &rng)!, at: Int.random(in: 0...bytes.count, using: &rng))
            case 4 where !bytes.isEmpty: bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &rng)))  // truncate
            default: bytes += bytes.prefix(Int.random(in: 0...min(bytes.count, 32), using: &rng))
            }
        }
        return bytes
    }

    func testDecoderSurvivesAMillionMutatedFrames() {
        var rng = SplitMix64(state: 0x5EED)
        let seeds = Self.seeds.map { Array($0.utf8) }
        var decoded = 0, refused: [ErrorCode: Int] = [:]
        for i in 0..<Self.iterations {
            let input = mutate(seeds[i % seeds.count], &rng)
            let result = input.withUnsafeBufferPointer { buffer in
                Result { () throws(ProtocolError) -> ClientMessage in try ClientMessage.decode(buffer) }
            }
            switch result {
            case .success: decoded += 1
            case let .failure(error):
                XCTAssertFalse(error.message.isEmpty)
                refused[error.code, default: 0] += 1
            }
        }
        XCTAssertGreaterThan(decoded, 0)
        XCTAssertGreaterThan(refused[.invalidJSON, default: 0], 0)
        XCTAssertGreaterThan(refused[.invalidMessage, default: 0] + refused[.unknownType, default: 0], 0)
    }

    func testDeeplyNestedInputIsRefusedNotOverflowed() {
        let deep = Array(repeating: UInt8(ascii: "["), count: 100_000)
        XCTAssertThrowsError(try JSONParser.parse(deep)) { error in
            XCTAssertTrue("\(error)".contains("nesting"))
        }
    }
}
