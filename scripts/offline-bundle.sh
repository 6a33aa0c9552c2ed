#!/usr/bin/env bash
# Collects everything scripts/setup.sh would download, for a machine without network access:
#   <bundle>/debs/    the Debian packages setup.sh installs and their dependencies (recursive,
#                     Depends and PreDepends only), minus the packages the target already has;
#   <bundle>/wheels/  the PyTorch wheels (and their CUDA runtime wheels) and numpy;
#   <bundle>/MANIFEST the Debian release and architecture, the package and wheel lists.
# Run it on a connected machine with the same Debian release and architecture as the target, then
# copy the folder over and run scripts/offline-install.sh there.
#
# Usage: scripts/offline-bundle.sh <bundle-dir> [--target-installed FILE]
#   FILE: the target's installed packages, one name a line, made there with
#         dpkg-query -W -f='${Package}\n' > installed.txt
#   Without it, the packages installed on this machine are left out instead (right when this
#   machine is a fresh copy of the target's image).
# Environment: ADAQP_BUNDLE_PACKAGES (space-separated Debian packages instead of setup.sh's list),
#   ADAQP_BUNDLE_WHEELS (space-separated pip requirements instead of "torch==<setup.sh's> numpy"),
#   ADAQP_PYTHON (the Python whose pip downloads the wheels; default python3). The wheels are for
#   that Python's version and platform: use the same Python minor version as the target.
set -euo pipefail
# shellcheck source=scripts/lib/adaqp.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/adaqp.sh"

(($# >= 1)) || die "usage: $0 <bundle-dir> [--target-installed FILE]"
BUNDLE=$1
shift
TARGET_INSTALLED=""
while (($#)); do
  case $1 in
    --target-installed)
      (($# >= 2)) || die "--target-installed needs a file"
      TARGET_INSTALLED=$2
      [ -r "$TARGET_INSTALLED" ] || die "cannot read $TARGET_INSTALLED"
      shift 2
      ;;
    *) die "unknown argument $1" ;;
  esac
done
PYTHON=${ADAQP_PYTHON:-python3}
for tool in apt-get apt-cache dpkg-query; do
  command -v "$tool" >/dev/null || die "needs $tool (Debian)"
done

# setup.sh is the one list of what the project needs: read its APT_PACKAGES and TORCH_VERSION.
SETUP=$ADAQP_ROOT/scripts/setup.sh
if [ -n "${ADAQP_BUNDLE_PACKAGES:-}" ]; then
  read -r -a packages <<<"$ADAQP_BUNDLE_PACKAGES"
else
  read -r -a packages <<<"$(sed -n '/^APT_PACKAGES=(/,/)/p' "$SETUP" | sed 's/APT_PACKAGES=(//; s/)//' | tr '\n' ' ')"
fi
((${#packages[@]})) || die "no Debian packages found in $SETUP"
torch_version=$(sed -n 's/^TORCH_VERSION=\([0-9.]*\).*/\1/p' "$SETUP")
[ -n "$torch_version" ] || die "no TORCH_VERSION in $SETUP"
if [ -n "${ADAQP_BUNDLE_WHEELS:-}" ]; then
  read -r -a wheels <<<"$ADAQP_BUNDLE_WHEELS"
else
  wheels=("torch==$torch_version" numpy)
fi

mkdir -p "$BUNDLE/debs" "$BUNDLE/wheels"
BUNDLE=$(cd "$BUNDLE" && pwd)

# The dependency closure: every real package (virtual ones print as <name>) reachable through
# Depends/PreDepends.
log "resolving dependencies of ${#packages[@]} package(s)"
mapfile -t closure < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
  --no-breaks --no-replaces --no-enhances "${packages[@]}" | grep -v '^[ <]' | sort -u)

if [ -n "$TARGET_INSTALLED" ]; then
  installed_list=$(sort -u "$TARGET_INSTALLED")
else
  installed_list=$(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' | awk '$1 == "ii" {print $2}' | sort -u)
fi
mapfile -t needed < <(comm -23 <(printf '%s\n' "${closure[@]}") <(printf '%s\n' "$installed_list"))
log "${#closure[@]} package(s) in the closure, ${#needed[@]} not installed on the target"

if ((${#needed[@]})); then
  (cd "$BUNDLE/debs" && apt-get download "${needed[@]}")
fi

log "downloading wheels: ${wheels[*]}"
"$PYTHON" -m pip download --dest "$BUNDLE/wheels" "${wheels[@]}"

{
  echo "debian_version_id=$(sed -n 's/^VERSION_ID="\?\([^"]*\)"\?$/\1/p' /etc/os-release)"
  echo "architecture=$(dpkg --print-architecture)"
  echo "python=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  echo "requested_packages=${packages[*]}"
  echo "wheel_requirements=${wheels[*]}"
  echo "debs:"
  find "$BUNDLE/debs" -name '*.deb' -printf '  %f\n' | sort
  echo "wheels:"
  find "$BUNDLE/wheels" -type f -printf '  %f\n' | sort
} >"$BUNDLE/MANIFEST"
log "bundle ready in $BUNDLE ($(du -sh "$BUNDLE" | cut -f1)); see $BUNDLE/MANIFEST"
