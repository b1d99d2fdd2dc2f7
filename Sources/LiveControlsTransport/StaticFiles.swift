import Foundation

/// The web root's files, served through the server's own HTTP answers (`respond`) rather than libwebsockets' file
/// mount: after a file lws served itself, lws 4.1 misparses a request pipelined behind it (answered 403, the
/// connection closed), and its 404 page does the same (issue 42). The web root holds a page and its scripts: each file
/// is read whole when asked for, up to `maxFileBytes`.
enum StaticFiles {
    /// Larger files are not served from the web root (500, said in the log): it is for a page and its assets.
    static let maxFileBytes = 16 << 20

    enum Outcome: Equatable {
        case file(contentType: String, bytes: [UInt8])
        /// A directory with an `index.html`, asked for without its final `/` (`/admin`): 301 to it with the slash, so
        /// that the page's relative links resolve inside it. `location` is relative (`./admin/`, the name
        /// percent-encoded), right behind a proxy's path prefix too.
        case redirect(location: String)
        case notFound
        case tooLarge
    }

    /// The file `path` (a request path, already percent-decoded and normalized by lws) names under `root` (resolved);
    /// `index.html` for a directory. Symlinks must stay inside the root (`RequestCheck.staysInside`, checked before).
    static func read(root: String, path: String) -> Outcome {
        guard path.hasPrefix("/"), !path.utf8.contains(0) else { return .notFound }
        var file = root + path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) else { return .notFound }
        if isDirectory.boolValue {
            file += file.hasSuffix("/") ? "index.html" : "/index.html"
            guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory), !isDirectory.boolValue else { return .notFound }
            if !path.hasSuffix("/"), let last = path.split(separator: "/").last {
                return .redirect(location: "./" + percentEncoded(String(last)) + "/")
            }
        }
        guard let handle = FileHandle(forReadingAtPath: file) else { return .notFound }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: maxFileBytes + 1) else { return .notFound }
        if data.count > maxFileBytes { return .tooLarge }
        return .file(contentType: contentType(of: file), bytes: [UInt8](data))
    }

    /// A path segment as a URL holds it: every byte but the unreserved ones (RFC 3986 §2.3) percent-encoded, so that
    /// a decoded `#`, `?`, `%`, space or `:` in a directory's name stays part of the name.
    static func percentEncoded(_ segment: String) -> String {
        var out = ""
        for byte in segment.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    static func contentType(of file: String) -> String {
        let ext = file.split(separator: "/").last.flatMap { name in name.contains(".") ? name.split(separator: ".").last : nil }
        switch ext.map({ $0.lowercased() }) {
        case "html", "htm": return "text/html; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "json", "map": return "application/json"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        case "ico": return "image/x-icon"
        case "woff2": return "font/woff2"
        case "woff": return "font/woff"
        case "txt", "md": return "text/plain; charset=utf-8"
        case "ts": return "text/plain; charset=utf-8"  // (a .d.ts beside a script)
        case "wasm": return "application/wasm"
        default: return "application/octet-stream"
        }
    }
}
