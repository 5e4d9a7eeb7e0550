internal import Foundation
internal import PackagePlugin

/// Writes `BuildCommit.swift` into the BuildInfo module before every build: the commit the tree was built
/// from (`git rev-parse`, with `-modified` when the tree differs from it), or nil where that is unknown
/// (a tarball, no git, a checkout git will not read). The file is rewritten only when its text changes, so an
/// unchanged tree recompiles nothing.
@main
struct BuildCommit: BuildToolPlugin {
    /// Run with `sh -c SCRIPT sh PACKAGE_DIRECTORY OUTPUT_DIRECTORY`.
    static let script = #"""
        commit=$(git -C "$1" rev-parse --short=12 HEAD 2>/dev/null) || commit=""
        if [ -n "$commit" ] && ! git -C "$1" diff --quiet HEAD -- 2>/dev/null; then commit="$commit-modified"; fi
        if [ -n "$commit" ]; then value="\"$commit\""; else value=nil; fi
        mkdir -p "$2"
        printf '// Written by the BuildCommit plugin before each build.\nlet buildCommit: String? = %s\n' "$value" > "$2/BuildCommit.swift.new"
        if cmp -s "$2/BuildCommit.swift.new" "$2/BuildCommit.swift"; then rm "$2/BuildCommit.swift.new"
        else mv "$2/BuildCommit.swift.new" "$2/BuildCommit.swift"; fi
        """#

    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "generated")
        return [.prebuildCommand(
            displayName: "The build's commit",
            executable: URL(filePath: "/bin/sh"),
            arguments: ["-c", Self.script, "sh", context.package.directoryURL.path, output.path],
            outputFilesDirectory: output)]
    }
}
