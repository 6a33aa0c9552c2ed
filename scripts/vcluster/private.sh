#!/usr/bin/env bash
# Runs CMD for the virtual cluster host HOST (adaqp-<pid>-h<i>) of scripts/vcluster.sh: with
# --private-dir, in a mount namespace of its own where ADAQP_VCLUSTER_PRIVATE_DIR is a bind mount
# of ADAQP_VCLUSTER_PRIVATE_STORE/h<i>, so that the host's processes see only their own folder
# there; otherwise CMD as it is.
#   private.sh HOST CMD...
set -euo pipefail
host=$1
shift
if [[ -z ${ADAQP_VCLUSTER_PRIVATE_DIR:-} ]]; then exec "$@"; fi
[[ $host =~ -(h[0-9]+)$ ]] || {
  echo "[vcluster] private: '$host' is not a virtual cluster host" >&2
  exit 2
}
store="${ADAQP_VCLUSTER_PRIVATE_STORE:?set by vcluster.sh}/${BASH_REMATCH[1]}"
# shellcheck disable=SC2016  # expanded by the inner shell
exec unshare --mount --propagation private /bin/sh -c \
  'mount --bind "$0" "$1" && shift && exec "$@"' "$store" "$ADAQP_VCLUSTER_PRIVATE_DIR" "$@"
