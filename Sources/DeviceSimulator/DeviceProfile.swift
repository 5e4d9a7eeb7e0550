public import MuEvalWire
internal import WireProtocol

/// Who a simulated phone says it is in `<hello>`: an id, its owner's name, the model and the app.
public struct DeviceProfile: Sendable, Equatable {
    public let hello: DeviceHello

    /// The testers of the thesis's scenario first.
    static let owners = ["Jack", "Jill", "Jane", "John", "Mia", "Noah", "Lena", "Finn"]

    /// The identity of device `index` (from 0) of a run; the id follows from the seed, so a rerun with the
    /// same seed is the same device to the server (its bound session, its de-duplication).
    public init(index: Int, scenario: Scenario, random: SeededGenerator) {
        var random = random.derived(0)
        let model = scenario.deviceModel
        let hex = (0..<2).map { _ in String(random.next(), radix: 16, uppercase: true) }.joined()
        let padded = String(repeating: "0", count: max(0, 32 - hex.count)) + hex
        let chars = Array(padded.prefix(32))
        let uuid = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(chars[$0]) }.joined(separator: "-")
        let kind = model.model.hasPrefix("iPod") ? "iPod touch" : model.model.hasPrefix("iPad") ? "iPad" : "iPhone"
        let owner = Self.owners[index % Self.owners.count] + (index < Self.owners.count ? "" : " \(index / Self.owners.count + 1)")
        let device = DeviceDescription(name: "\(owner)'s \(kind)", model: model.model, systemVersion: model.systemVersion,
                                       appId: scenario.app.id, appVersion: scenario.app.version,
                                       screenWidth: Double(model.width), screenHeight: Double(model.height), screenScale: Double(model.scale))
        hello = DeviceHello(deviceId: "\(uuid)-\(kind.replacingOccurrences(of: " ", with: ""))", protocolVersion: 1, device: device)
    }

    public var deviceId: String { hello.deviceId }
}
