public import MuEvalWire
/// Reads property list value elements one at a time, with the wire protocol's parser and limits: how
/// an import takes the elements of an exported plist's root array without reading the whole document.
public struct PlistElementReader: Sendable {
    private var parser: MessageParser

    public init(limits: WireLimits = .init()) {
        parser = MessageParser(limits: limits)
    }

    /// The value `element` holds (one element, whitespace around it allowed).
    public mutating func value(_ element: UnsafeBufferPointer<UInt8>) throws(PlistElementError) -> PlistValue {
        try parser.plistValue(element).get()
    }
}

/// Why an element is not a property list value, and the byte offset in it where reading stopped.
public struct PlistElementError: Error, Sendable, Equatable {
    public var message: String
    public var offset: Int
}
