import MemberwiseInitMacros
import SwiftSyntaxMacros
import SwiftSyntaxMacrosTestSupport
import XCTest

final class MemberwiseInitMacroTests: XCTestCase {
    private let macros: [String: any Macro.Type] = ["MemberwiseInit": MemberwiseInitMacro.self]

    func testParametersFollowTheStoredPropertiesWithTheirDefaults() {
        assertMacroExpansion("""
            @MemberwiseInit
            public struct Listener {
                public var host: String
                public var port: Int = 7000
                public var note: String?
                public let fixed: String?
                public let version = 2
                public var counted = 0
                public static var shared = 1
                public var computed: Int { port + 1 }
                public var observed: Bool { didSet { } }
                public var handler: @Sendable () -> Void
                public var optionalHandler: (() -> Void)?
            }
            """, expandedSource: """
            public struct Listener {
                public var host: String
                public var port: Int = 7000
                public var note: String?
                public let fixed: String?
                public let version = 2
                public var counted = 0
                public static var shared = 1
                public var computed: Int { port + 1 }
                public var observed: Bool { didSet { } }
                public var handler: @Sendable () -> Void
                public var optionalHandler: (() -> Void)?

                public init(host: String, port: Int = 7000, note: String? = nil, fixed: String?, observed: Bool, handler: @escaping @Sendable () -> Void, optionalHandler: (() -> Void)? = nil) {
                    self.host = host
                    self.port = port
                    self.note = note
                    self.fixed = fixed
                    self.observed = observed
                    self.handler = handler
                    self.optionalHandler = optionalHandler
                }
            }
            """, macros: macros)
    }

    func testTheAccessLevelIsTheArgument() {
        assertMacroExpansion("""
            @MemberwiseInit(.package)
            struct Problem {
                var code: Int32
            }
            """, expandedSource: """
            struct Problem {
                var code: Int32

                package init(code: Int32) {
                    self.code = code
                }
            }
            """, macros: macros)
    }

    func testAPropertyWithNeitherTypeNorValueIsAnError() {
        assertMacroExpansion("""
            @MemberwiseInit
            public struct Pair {
                public var first, second: Int
            }
            """, expandedSource: """
            public struct Pair {
                public var first, second: Int
            }
            """, diagnostics: [
                DiagnosticSpec(message: "@MemberwiseInit: 'first' needs a type annotation (one property per declaration)", line: 1, column: 1),
            ], macros: macros)
    }

    func testAnUnknownAccessLevelIsAnError() {
        assertMacroExpansion("""
            @MemberwiseInit(.open)
            public struct Empty {}
            """, expandedSource: """
            public struct Empty {}
            """, diagnostics: [
                DiagnosticSpec(message: "@MemberwiseInit: the access level is .public, .package or .internal", line: 1, column: 1),
            ], macros: macros)
    }
}
