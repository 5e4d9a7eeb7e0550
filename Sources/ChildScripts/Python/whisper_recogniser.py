"""The Whisper recogniser's child (SpeechRecognition's `WhisperProcess`; docs/SPEECH.md), run by `python3 -I -B` (no
PYTHONPATH, no user site, neither the working directory nor this file's on sys.path; no byte code written into the
installation, which a package owns) in `/`, under the recogniser's limits.

    whisper_recogniser.py SITE MODEL_DIRECTORY LANGUAGE WORKERS BATCH HOTWORDS

SITE is the installation's `site` directory, MODEL_DIRECTORY the model's, LANGUAGE a two-letter code or `auto` (to
detect), WORKERS the worker threads, BATCH the batch size, HOTWORDS the lab's words ("" for none).

Input (standard input): pieces of 16 kHz mono audio, each a header (the sample count as a little-endian 32-bit
integer, the piece's start in seconds as a little-endian double) and that many little-endian 16-bit samples; a
count of 0 ends. Output: JSON lines. First `ready` (versions, the model's SHA-256), or `unavailable` (a package
missing) or `error`, then one line per piece as it is done, in any order: `piece`, `seconds`, `language`, `segments`
(`start`, `end`, `logprob`, `no_speech`) and `words` (`start`, `end`, `text`, `p`: its probability; seconds of
the recording), then `end` with the peak address space and resident memory.

Each piece goes through Silero's voice-activity detection (in faster-whisper, run by onnxruntime): only speech is
recognised, in stretches of up to 30 s, `batch` at a time (faster-whisper's batched pipeline, CTranslate2 int8,
greedy), each word timed by Whisper's cross-attention. A stretch Whisper itself judges likely silence and is unsure
of (no-speech probability over 0.6 and mean log probability under -1) is dropped: Whisper's own rule, which its
batched pipeline does not apply. The pieces queue holds one per worker, so memory stays bounded.
"""
import json, struct, sys, threading, types
def say(value):
    with lock:
        sys.stdout.write(json.dumps(value) + "\n")
        sys.stdout.flush()
lock = threading.Lock()
site, model_directory, language, workers, batch, hotwords = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
# Nothing is downloaded and no file is decoded here: the two modules faster-whisper imports for that are stand-ins that
# fail if used (muEval hands over samples, and the model is a directory). tqdm draws no progress bar.
for name in ("av", "huggingface_hub"):
    sys.modules[name] = types.ModuleType(name)
class Quiet:
    def __init__(self, *arguments, **options): pass
    def update(self, *arguments): pass
    def close(self): pass
for name in ("tqdm", "tqdm.auto"):
    sys.modules[name] = types.ModuleType(name)
    sys.modules[name].tqdm = Quiet
sys.path.append(site)
try:
    import hashlib, queue
    import numpy
    import ctranslate2, faster_whisper
    from faster_whisper import BatchedInferencePipeline, WhisperModel
except ModuleNotFoundError as error:
    say({"unavailable": (str(error) or type(error).__name__).splitlines()[0][:300]})
    sys.exit(0)
except (ImportError, MemoryError, OSError) as error:
    # Installed but not loadable: most likely the address space limit.
    say({"error": "faster-whisper cannot be loaded within the address space allowed ([transcription] memory_mib): "
         + (str(error) or type(error).__name__).splitlines()[0][:300]})
    sys.exit(0)
try:
    digest = hashlib.sha256()
    with open(model_directory + "/model.bin", "rb") as model_file:
        for block in iter(lambda: model_file.read(1 << 20), b""):
            digest.update(block)
    model = WhisperModel(model_directory, device="cpu", compute_type="int8", cpu_threads=1, num_workers=workers)
except Exception as error:
    say({"error": "the model in " + model_directory + " cannot be loaded: " + (str(error) or type(error).__name__).splitlines()[0][:300]})
    sys.exit(0)
if language != "auto" and language not in model.supported_languages:
    say({"error": "the model in " + model_directory + " does not know the language " + language
         + " (it knows " + ", ".join(model.supported_languages[:12]) + ("…" if len(model.supported_languages) > 12 else "") + ")"})
    sys.exit(0)
say({"ready": {"faster_whisper": faster_whisper.__version__, "ctranslate2": ctranslate2.__version__,
               "sha256": digest.hexdigest(), "multilingual": model.model.is_multilingual}})
pieces = queue.Queue(maxsize=workers)
failed = []

def recognise():
    pipeline = BatchedInferencePipeline(model)
    while True:
        item = pieces.get()
        if item is None:
            return
        index, offset, samples = item
        try:
            segments, info = pipeline.transcribe(
                samples, language=None if language == "auto" else language, batch_size=batch, beam_size=1,
                word_timestamps=True, vad_filter=True, hotwords=hotwords or None)
            words, kept = [], []
            for segment in segments:
                # Whisper's own rule for what it wrote over no speech: likely no speech and unsure of the words.
                if segment.no_speech_prob > 0.6 and segment.avg_logprob < -1.0:
                    continue
                kept.append({"start": round(offset + segment.start, 3), "end": round(offset + segment.end, 3), "logprob": round(segment.avg_logprob, 4),
                         "no_speech": round(segment.no_speech_prob, 4)})
                words += [{"start": round(offset + word.start, 3), "end": round(offset + word.end, 3), "text": word.word, "p": round(word.probability, 4)}
                          for word in segment.words or []]
            say({"piece": index, "seconds": len(samples) / 16000, "language": info.language,
                 "language_probability": round(info.language_probability, 3), "segments": kept, "words": words})
        except Exception as error:
            failed.append(error)
            say({"error": "recognition failed: " + (str(error) or type(error).__name__).splitlines()[0][:300]})

threads = [threading.Thread(target=recognise, daemon=True) for _ in range(workers)]
for thread in threads:
    thread.start()
source = sys.stdin.buffer
index = 0
while not failed:
    header = source.read(12)
    if len(header) < 12:
        break
    count, offset = struct.unpack("<Id", header)
    if count == 0:
        break
    data = source.read(2 * count)
    if len(data) < 2 * count:
        break
    pieces.put((index, offset, numpy.frombuffer(data, dtype="<i2").astype(numpy.float32) / 32768))
    index += 1
for thread in threads:
    pieces.put(None)
for thread in threads:
    thread.join()
peak = [line.split()[1] for line in open("/proc/self/status") if line.startswith(("VmPeak", "VmHWM"))]
say({"end": index, "vm_peak_kib": int(peak[0]), "rss_peak_kib": int(peak[1])})
