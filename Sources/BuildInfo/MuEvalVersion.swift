/// muEval's version: what `--version` prints, `status` shows and Zeroconf announces; `packaging/build-deb.sh`
/// reads the line below.
public enum MuEvalVersion {
    public static let current = "0.1.0"
}
