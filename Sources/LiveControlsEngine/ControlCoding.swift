import Foundation
import LiveControlsProtocol

/// Encodes controls for the store, and decodes them by kind. A kind without coding cannot be restored
/// exactly; its room then starts a new epoch after a restart.
public enum ControlCoding {
    private static let decoders: [String: @Sendable (Data) throws -> any Control] = [
        Stepper.kind: { try JSONDecoder().decode(Stepper.self, from: $0) },
        ListStepper.kind: { try JSONDecoder().decode(ListStepper.self, from: $0) },
        Wizard.kind: { try JSONDecoder().decode(Wizard.self, from: $0) },
        Form.kind: { try JSONDecoder().decode(Form.self, from: $0) },
        Pager.kind: { try JSONDecoder().decode(Pager.self, from: $0) },
    ]

    public static func kind(of control: any Control) -> String { type(of: control).kind }

    /// The control's exact state as JSON text, or nil when its kind is not `Codable`.
    public static func encode(_ control: any Control) -> String? {
        guard let encodable = control as? any Encodable, decoders[kind(of: control)] != nil else { return nil }
        guard let data = try? JSONEncoder().encode(encodable) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    public static func decode(kind: String, state: String) -> (any Control)? {
        guard let decoder = decoders[kind] else { return nil }
        return try? decoder(Data(state.utf8))
    }
}
