/// What `--version` prints, as Debian's daemons and commands do: the program, muEval's version (the one
/// `muevalctl status` shows) and, where the build knew it, the commit it was built from (the BuildCommit
/// plugin writes `buildCommit`). Bug reports start here.
public enum BuildInfo {
    /// The commit the running binary was built from, `-modified` when its tree had changes; nil when unknown.
    public static let commit: String? = buildCommit

    /// `muevald 0.1.0 (commit 1a2b3c4d5e6f)`, or without the parenthesis when the commit is unknown.
    public static func versionLine(program: String) -> String {
        "\(program) \(MuEvalVersion.current)" + (commit.map { " (commit \($0))" } ?? "")
    }
}
