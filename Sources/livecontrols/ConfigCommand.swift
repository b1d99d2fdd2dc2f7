import ArgumentParser
import Foundation
import LiveControlsEngine
import LiveControlsProtocol

/// `livecontrols config`: the built-in config as a starting point for `--config`, and `config --check FILE`: what a
/// file makes, or where it is wrong (line and column, and the JSON Pointer of the value).
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Print the built-in config (a starting point for --config), or check a config file.",
        discussion: """
            livecontrols config > my-config.json       # the built-in templates and rooms, to edit
            livecontrols config --check my-config.json  # what it makes, or its errors (exit 2)
            """
    )

    @Option(help: "Check this config file: print the templates and rooms it makes, or its error (exit status 2).")
    var check: String?

    func run() throws {
        guard let check else {
            print(PrettyJSON.text(ServerConfig.builtinJSON))
            return
        }
        let config: ServerConfig
        do {
            config = try ConfigFile.load(check, today: CivilDate.today(fromUnixSeconds: Int(time(nil))))
        } catch let failure as ConfigFailure {
            FileHandle.standardError.write(Data("livecontrols: \(failure)\n".utf8))
            throw ExitCode(2)
        }
        print("\(check): valid")
        print("templates (\(config.templates.count)), default \(config.defaultTemplate):")
        for name in config.templates.keys.sorted() {
            let template = config.templates[name]!
            let controls = template.controls.map { "\($0.id.rawValue) (\(ControlCoding.kind(of: $0.control)))" }
            print("  \(name): \(controls.joined(separator: ", "))\(template.presence ? "" : "; presence off")")
        }
        print("rooms made at start (\(config.rooms.count)):" + (config.rooms.isEmpty ? " none" : ""))
        for room in config.rooms { print("  \(room.name) (template \(room.template))") }
        print("rooms created on join: \(config.createRoomsOnJoin ? "yes, from template \(config.defaultTemplate) unless the join names one" : "no")")
        if !config.webhooks.isEmpty { print("webhook endpoints: \(config.webhooks.count)") }
    }
}

/// Reads a config file, with the errors `serve --config` and `config --check` print.
enum ConfigFile {
    static func load(_ path: String, today: CivilDate) throws -> ServerConfig {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ConfigFailure(message: "\(path): no such file (relative paths start from \(FileManager.default.currentDirectoryPath))")
        }
        guard !isDirectory.boolValue else {
            throw ConfigFailure(message: "\(path): is a directory; --config takes a JSON file")
        }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            let readable = FileManager.default.isReadableFile(atPath: path)
            throw ConfigFailure(message: "\(path): cannot read: \(readable ? "not UTF-8 text" : "permission denied")")
        }
        do {
            return try ServerConfig(text: text, file: path, today: today)
        } catch {
            throw ConfigFailure(message: error.description)
        }
    }
}

/// JSON indented by two spaces, members in their order (the built-in config as a file to edit).
enum PrettyJSON {
    static func text(_ value: JSONValue, indent: String = "") -> String {
        let inner = indent + "  "
        switch value {
        case let .object(object) where !object.isEmpty:
            let members = object.map { inner + JSONWriter.string(.string($0.key)) + ": " + text($0.value, indent: inner) }
            return "{\n" + members.joined(separator: ",\n") + "\n" + indent + "}"
        case let .array(array) where !array.isEmpty:
            if array.allSatisfy({ $0.objectValue == nil && $0.arrayValue == nil }) {
                return "[" + array.map { JSONWriter.string($0) }.joined(separator: ", ") + "]"
            }
            return "[\n" + array.map { inner + text($0, indent: inner) }.joined(separator: ",\n") + "\n" + indent + "]"
        default:
            return JSONWriter.string(value)
        }
    }
}
