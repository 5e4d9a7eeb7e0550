/// What a device is: its name, hardware and system, the app under evaluation and the screen. A device says it in
/// `<hello>` (`DeviceHello`); the server keeps it with the session's devices (`DeviceRecord`). Every field is
/// optional: a device sends what it knows.
public struct DeviceDescription: Sendable, Hashable, Codable {
    /// The name its owner gave it (`deviceName` in `<hello>`).
    public var name: String?
    /// Hardware identifier, as `uname` reports it on iOS (`iPhone3,1`).
    public var model: String?
    public var systemVersion: String?
    public var appId: String?
    public var appVersion: String?
    /// The screen in points, and its pixels per point.
    public var screenWidth: Double?
    public var screenHeight: Double?
    public var screenScale: Double?

    public init(name: String? = nil, model: String? = nil, systemVersion: String? = nil, appId: String? = nil,
                appVersion: String? = nil, screenWidth: Double? = nil, screenHeight: Double? = nil, screenScale: Double? = nil) {
        self.name = name
        self.model = model
        self.systemVersion = systemVersion
        self.appId = appId
        self.appVersion = appVersion
        self.screenWidth = screenWidth
        self.screenHeight = screenHeight
        self.screenScale = screenScale
    }
}

/// A value that carries a device's description (a hello, a device record) and reads its fields as its own
/// (`hello.model`, `record.screenScale`).
@dynamicMemberLookup
public protocol DeviceDescribing {
    var device: DeviceDescription { get set }
}

extension DeviceDescribing {
    public subscript<Value>(dynamicMember field: WritableKeyPath<DeviceDescription, Value>) -> Value {
        get { device[keyPath: field] }
        set { device[keyPath: field] = newValue }
    }
}
