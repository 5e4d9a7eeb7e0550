/// The Zeroconf service type muevald announces and the capture library browses for (docs/ZEROCONF.md):
/// one spelling for both sides.
public enum CaptureService {
    public static let type = "_muEvaluationFramework-capture._tcp"
}
