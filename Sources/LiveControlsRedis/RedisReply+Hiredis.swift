import CHiredis

extension RedisReply {
    /// Copies a hiredis reply (and its elements) into Swift values. The caller frees the top-level reply
    /// with `freeReplyObject` afterwards; `str` and `element[i]` belong to it and dangle after that.
    init(copying reply: UnsafePointer<redisReply>) {
        let r = reply.pointee
        switch r.type {
        case REDIS_REPLY_STRING:
            self = .string(Self.bytes(r.str, r.len))
        case REDIS_REPLY_STATUS:
            self = .status(String(decoding: Self.bytes(r.str, r.len), as: UTF8.self))
        case REDIS_REPLY_ERROR:
            self = .error(String(decoding: Self.bytes(r.str, r.len), as: UTF8.self))
        case REDIS_REPLY_INTEGER:
            self = .integer(Int64(r.integer))
        case REDIS_REPLY_ARRAY:
            var elements: [RedisReply] = []
            elements.reserveCapacity(Int(r.elements))
            for i in 0..<Int(r.elements) {
                if let element = r.element?[i] {
                    elements.append(RedisReply(copying: element))
                } else {
                    elements.append(.null)
                }
            }
            self = .array(elements)
        default:  // REDIS_REPLY_NIL
            self = .null
        }
    }

    /// Takes ownership of a reply from hiredis: copies it, then frees it.
    init(consuming raw: UnsafeMutableRawPointer) {
        self.init(copying: UnsafePointer(raw.assumingMemoryBound(to: redisReply.self)))
        freeReplyObject(raw)
    }

    private static func bytes(_ str: UnsafeMutablePointer<CChar>?, _ len: Int) -> [UInt8] {
        guard let str, len > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: str, count: len))
    }
}
