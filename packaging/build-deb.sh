#!/bin/sh
# mueval_VERSION_ARCH.deb and mueval-tools_VERSION_ARCH.deb from release binaries (docs/PACKAGING.md).
#
#   packaging/build-deb.sh BIN OUT [VERSION]
#
# BIN holds muevald, muevalctl and muevalsim, built with --static-swift-stdlib (`make deb` builds
# them); OUT receives the packages (and mueval-dbgsym's .ddeb). VERSION defaults to muEval's own
# (MuEvalVersion.current). Needs debhelper and dpkg-dev (`make deb` installs them) and
# generate-manual, built from swift-argument-parser's checkout next to BIN (GENERATE_MANUAL= names
# another).
set -eu

[ $# -ge 2 ] || { sed -n 4p "$0" >&2; exit 2; }
source=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
version=${3:-$(sed -n 's/^ *public static let current = "\([0-9][0-9.]*\)"$/\1/p' "$source/Sources/BuildInfo/MuEvalVersion.swift")}
[ -n "$version" ] || { echo "build-deb.sh: no MuEvalVersion.current in Sources/BuildInfo/MuEvalVersion.swift" >&2; exit 1; }
for tool in muevald muevalctl muevalsim; do
	[ -x "$bin/$tool" ] || { echo "build-deb.sh: $bin/$tool is not built" >&2; exit 1; }
done
generate_manual=${GENERATE_MANUAL:-$(dirname "$bin")/manual-tool/release/generate-manual}

# The changelog's date, the man pages' and SOURCE_DATE_EPOCH (file times in the package) are the
# commit's, so that the same commit gives the same package.
if epoch=$(git -C "$source" log -1 --format=%ct 2>/dev/null); then
	commit=" from commit $(git -C "$source" log -1 --format=%h)"
	maintainer=${DEB_MAINTAINER:-$(git -C "$source" log -1 --format='%an <%ae>')}
else
	epoch=$(date +%s) commit="" maintainer=${DEB_MAINTAINER:?"not a git checkout: set DEB_MAINTAINER='Name <email>'"}
fi
export SOURCE_DATE_EPOCH=$epoch
release=$(. /etc/os-release && echo "$VERSION_CODENAME")

tree=$(mktemp -d "${TMPDIR:-/tmp}/mueval-deb.XXXXXX")
trap 'rm -rf "$tree"' EXIT
cp -r "$source/packaging/deb" "$tree/debian"
sed -i "s|@MAINTAINER@|$maintainer|" "$tree/debian/control"
cat > "$tree/debian/changelog" <<CHANGELOG
mueval ($version) $release; urgency=medium

  * muEval $version$commit, built on Debian $release.

 -- $maintainer  $(date -R -u -d "@$epoch")
CHANGELOG

# Man pages from the argument parsers and the configuration table: they say what --help says.
mkdir "$tree/man"
day=$(date -u -d "@$epoch" +%Y-%m-%d)
"$generate_manual" "$bin/muevald" --section 8 --date "$day" -o "$tree/man"
"$generate_manual" "$bin/muevalctl" --section 1 --date "$day" -o "$tree/man"
"$generate_manual" "$bin/muevalsim" --section 1 --date "$day" -o "$tree/man"
env -u STATE_DIRECTORY python3 "$source/packaging/man/muevald-toml.py" "$bin/muevald" "$source/config/muevald.toml" "$day" > "$tree/man/muevald.toml.5"

cd "$tree"
MUEVAL_SOURCE="$source" MUEVAL_BIN="$bin" MUEVAL_OUT="$out" debian/rules binary

# Errors and warnings fail the build; packaging/deb/*.lintian-overrides justify what is accepted.
if [ "${LINTIAN:-yes}" = yes ]; then
	arch=$(dpkg --print-architecture)
	lintian --fail-on error,warning --info "$out/mueval_${version}_$arch.deb" "$out/mueval-tools_${version}_$arch.deb"
fi
