/// The version of what the standard interpreters (`Interpreters.standard`) find. **Add one to it in the same
/// commit as any change that changes an interpreter's results** (a detector's rule, a threshold's default, how the
/// journal is read beneath them): the study digests stored in session files (docs/STUDIES.md, "Digests") record
/// the version they were made with, and one of another version is made again, from the session, when next needed.
/// A change that leaves every result as it was (speed, memory, streaming) keeps the version.
public enum AnalysisVersion {
    public static let current: Int64 = 1
}
