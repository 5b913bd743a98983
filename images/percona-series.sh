#!/bin/sh
# images/percona-series.sh: the Percona Server release and apt repository of a series (Dockerfile.percona-zenfs).
#
#   percona-series.sh SERIES RELEASE_80 RELEASE_84 [RELEASE]
#
# prints "<release> <repository>": for SERIES 8.0, RELEASE_80 and ps-80 (the only series with ZenFS); for 8.4,
# RELEASE_84 and ps-84-lts (no ZenFS: Percona removed it in 8.1.0-1). A non-empty RELEASE replaces the series'
# release and must belong to the series. Anything else fails with the reason, before the build reaches the
# network, so that a wrong build argument is not mistaken for an unreachable repository.
set -eu
if [ "$#" -lt 3 ] || [ "$#" -gt 4 ]; then
  echo "usage: percona-series.sh SERIES RELEASE_80 RELEASE_84 [RELEASE]" >&2
  exit 2
fi
series=$1
case "$series" in
  8.0) release=$2 repo=ps-80 ;;
  8.4) release=$3 repo=ps-84-lts ;;
  *) echo "percona-series: PERCONA_SERIES=$series: want 8.0 (with ZenFS) or 8.4 (no ZenFS)" >&2; exit 1 ;;
esac
[ -z "${4:-}" ] || release=$4
case "$release" in
  "$series".[0-9]*-[0-9]*) ;;
  *)
    echo "percona-series: release '$release' is not a Percona Server $series release (<$series.N>-<M>, as in versions.mk)" >&2
    exit 1
    ;;
esac
echo "$release $repo"
