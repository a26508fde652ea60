#!/usr/bin/env bash
# Installs CRIU 4.2.1 at a fixed prefix, built from Debian's own source package.
#
# Why: Debian 12's criu (3.17) fails kerndat init on this kernel and 4.1 hangs
# on dump; 4.2.1 works. The Debian mirror is read from the machine's own apt
# configuration, never written here. The orig tarball is verified against the
# sha256 listed in the .dsc (which apt verified against the signed index).
#
# A no-op when $CRIU_PREFIX/sbin/criu already reports the pinned version.
set -euo pipefail

CRIU_VERSION=${CRIU_VERSION:-4.2.1}
CRIU_DEBVER=${CRIU_DEBVER:-4.2.1-1}
CRIU_PREFIX=${CRIU_PREFIX:-/opt/faultwin/criu}
WORK=${CRIU_WORK:-/var/cache/faultwin/criu-build}
# First and last hex digits of the orig tarball's sha256 as published; the full
# value comes from the .dsc, this guards against a different tarball entirely.
SHA_HEAD=29ec0ee0
SHA_TAIL=f6725b9

bin=$CRIU_PREFIX/sbin/criu
log() { echo "criu: $*"; }

if [[ -x $bin ]] && "$bin" --version 2>/dev/null | grep -q "Version: $CRIU_VERSION\$"; then
  log "$CRIU_VERSION already installed at $bin"
  exit 0
fi

if [[ $(id -u) != 0 ]]; then
  echo "criu: building and installing CRIU needs root: sudo make deps" >&2
  exit 1
fi

# The machine's Debian mirror and keyring, from its deb822 sources or the
# one-line sources.list.
uri="" keyring=""
for f in /etc/apt/sources.list.d/*.sources; do
  [[ -f $f ]] || continue
  # The first stanza whose URI serves the main archive (not -security).
  read -r uri keyring < <(awk '
    /^[[:space:]]*$/ { if (u != "" && u !~ /security/) { print u, k; found=1; exit } u=""; k=""; next }
    /^URIs:/ { u=$2 } /^Signed-By:/ { k=$2 }
    END { if (!found && u != "" && u !~ /security/) print u, k }' "$f") || true
  [[ -n $uri ]] && break
done
if [[ -z $uri && -f /etc/apt/sources.list ]]; then
  uri=$(awk '$1=="deb" && $0 !~ /security/ { for (i=2;i<=NF;i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list)
fi
if [[ -z $uri ]]; then
  echo "criu: no Debian mirror found in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list" >&2
  exit 1
fi
keyring=${keyring:-/usr/share/keyrings/debian-archive-keyring.gpg}

mkdir -p "$WORK/lists/partial" "$WORK/src"
cat >"$WORK/faultwin-criu.sources" <<EOF
Types: deb-src
URIs: $uri
Suites: sid
Components: main
Signed-By: $keyring
EOF

aptopts=(-o "Dir::Etc::sourcelist=$WORK/faultwin-criu.sources" -o Dir::Etc::sourceparts=/dev/null
  -o "Dir::State::Lists=$WORK/lists" -o APT::Sandbox::User=root)

cd "$WORK/src"
dsc=criu_${CRIU_DEBVER}.dsc
orig=criu_${CRIU_VERSION}.orig.tar.xz
if [[ ! -f $dsc || ! -f $orig ]]; then
  log "fetching the sid source index"
  apt-get "${aptopts[@]}" update -qq
  log "downloading source package criu=$CRIU_DEBVER"
  # The .debian.tar.xz is not needed and is sometimes not served: tolerate its
  # failure, then insist on the two files that are.
  apt-get "${aptopts[@]}" source --download-only "criu=$CRIU_DEBVER" >apt-source.log 2>&1 || true
fi
for f in "$dsc" "$orig"; do
  if [[ ! -f $f ]]; then
    echo "criu: $f was not downloaded; see $WORK/src/apt-source.log" >&2
    exit 1
  fi
done

want=$(awk '/^Checksums-Sha256:/ { on=1; next } on && /^ / && $3 == "'"$orig"'" { print $1; exit } /^[^ ]/ { on=0 }' "$dsc")
got=$(sha256sum "$orig" | cut -d' ' -f1)
if [[ -z $want || $want != "$got" || $got != $SHA_HEAD* || $got != *$SHA_TAIL ]]; then
  echo "criu: checksum mismatch for $orig: .dsc says '${want}', file is '${got}' (expected ${SHA_HEAD}...${SHA_TAIL})" >&2
  exit 1
fi
log "verified $orig sha256 $got"

rm -rf "criu-$CRIU_VERSION"
tar -xf "$orig"
log "building (about a minute)"
make -C "criu-$CRIU_VERSION" -j"$(nproc)" criu >build.log 2>&1 || {
  echo "criu: build failed; last lines of $WORK/src/build.log:" >&2
  tail -20 build.log >&2
  exit 1
}
install -D -m 0755 "criu-$CRIU_VERSION/criu/criu" "$bin"
"$bin" --version
"$bin" --no-default-config check || {
  echo "criu: 'criu check' failed on this kernel; see above" >&2
  exit 1
}
log "installed $CRIU_VERSION at $bin"
