/// Who may call the initializer `@MemberwiseInit` writes.
public enum MemberwiseInitAccess {
    case `public`
    case `package`
    case `internal`
}

/// Writes the memberwise initializer Swift synthesizes only as `internal`, at the access level
/// given (`public` by default), so that a value type used from other modules has one definition
/// of its fields instead of a hand-written `self.x = x` copy of them.
///
/// Parameters follow the stored properties in declaration order. A `var`'s initial value is its
/// parameter's default, and an optional `var` without one defaults to `nil` (Swift's own rule);
/// a `let` with a value, static and computed properties are left out, as is a property without a
/// type annotation that has an initial value (it keeps that value). Closures are `@escaping`.
@attached(member, names: named(init))
public macro MemberwiseInit(_ access: MemberwiseInitAccess = .public) =
    #externalMacro(module: "MemberwiseInitMacros", type: "MemberwiseInitMacro")
