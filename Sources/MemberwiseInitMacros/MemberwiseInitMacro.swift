internal import SwiftCompilerPlugin
public import SwiftSyntax
internal import SwiftSyntaxBuilder
public import SwiftSyntaxMacros

/// `@MemberwiseInit`: see its declaration in the MemberwiseInit module.
public struct MemberwiseInitMacro: MemberMacro {
    public static func expansion(of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
                                 conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext) throws -> [DeclSyntax] {
        let access = try accessLevel(of: node)
        var parameters: [String] = []
        var assignments: [String] = []
        for member in declaration.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self),
                  !variable.modifiers.contains(where: { ["static", "class", "lazy"].contains($0.name.text) }) else { continue }
            let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
            for binding in variable.bindings where isStored(binding) {
                guard let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text else {
                    throw MacroExpansionErrorMessage("@MemberwiseInit: give each stored property a name of its own (no tuple patterns)")
                }
                if isLet, binding.initializer != nil { continue }
                guard let type = binding.typeAnnotation?.type else {
                    if binding.initializer != nil { continue }
                    throw MacroExpansionErrorMessage("@MemberwiseInit: '\(name)' needs a type annotation (one property per declaration)")
                }
                var defaultValue = binding.initializer?.value.trimmedDescription
                if defaultValue == nil, !isLet, type.is(OptionalTypeSyntax.self) || type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
                    defaultValue = "nil"
                }
                let escaping = isFunction(type) ? "@escaping " : ""
                parameters.append("\(name): \(escaping)\(type.trimmedDescription)" + (defaultValue.map { " = \($0)" } ?? ""))
                assignments.append("self.\(name) = \(name)")
            }
        }
        return ["\(raw: access) init(\(raw: parameters.joined(separator: ", "))) {\n\(raw: assignments.joined(separator: "\n"))\n}"]
    }

    private static func accessLevel(of node: AttributeSyntax) throws -> String {
        guard let argument = node.arguments?.as(LabeledExprListSyntax.self)?.first?.expression else { return "public" }
        guard let level = argument.as(MemberAccessExprSyntax.self)?.declName.baseName.text.trimmingBackticks,
              ["public", "package", "internal"].contains(level) else {
            throw MacroExpansionErrorMessage("@MemberwiseInit: the access level is .public, .package or .internal")
        }
        return level
    }

    /// Stored: no accessors, or only observers (`willSet`, `didSet`).
    private static func isStored(_ binding: PatternBindingSyntax) -> Bool {
        switch binding.accessorBlock?.accessors {
        case nil:
            return true
        case .getter:
            return false
        case .accessors(let accessors):
            return accessors.allSatisfy { [.keyword(.willSet), .keyword(.didSet)].contains($0.accessorSpecifier.tokenKind) }
        }
    }

    /// A closure parameter stored in a property must be `@escaping`; an optional one already is.
    private static func isFunction(_ type: TypeSyntax) -> Bool {
        if type.is(FunctionTypeSyntax.self) { return true }
        if let attributed = type.as(AttributedTypeSyntax.self) { return isFunction(attributed.baseType) }
        return false
    }
}

extension String {
    fileprivate var trimmingBackticks: String { filter { $0 != "`" } }
}

@main
struct MemberwiseInitPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [MemberwiseInitMacro.self]
}
