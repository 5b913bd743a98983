#!/bin/sh
# images/apt-install.sh: install Debian packages inside an image build, each pinned to an upstream version.
#
#   apt-install.sh NAME[=VERSION-PREFIX | ==EXACT-VERSION] ...
#
# NAME=1:10.11 installs NAME and fails unless its installed version starts with "1:10.11". A Debian mirror
# keeps only the newest revision of a release (security and point updates replace it), so an exact version
# would break the build at the next update; the prefix pins what matters (the upstream series) and the build
# log records the exact versions. NAME==VERSION asks apt for exactly that version (for repositories that keep
# every release, such as Percona's).
# No recommends, no services started by maintainer scripts, apt lists removed afterwards.
set -eu

printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
chmod 0755 /usr/sbin/policy-rc.d

names=""
for spec in "$@"; do
  case "$spec" in
    *==*) names="$names ${spec%%==*}=${spec#*==}" ;;
    *) names="$names ${spec%%=*}" ;;
  esac
done
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086 # $names is the package list, split into words on purpose (sh has no arrays)
apt-get install -y -qq --no-install-recommends $names >/dev/null

status=0
for spec in "$@"; do
  name=${spec%%=*}
  version=$(dpkg-query -W -f='${Version}' "$name")
  case "$spec" in
    *==*)
      want=${spec#*==}
      [ "$version" = "$want" ] || { echo "apt-install: $name is $version, not $want" >&2; status=1; }
      echo "apt-install: $name $version"
      ;;
    *=*)
      want=${spec#*=}
      case "$version" in
        "$want"*) echo "apt-install: $name $version (pinned $want)" ;;
        *) echo "apt-install: $name is $version, not the pinned $want: update the pin or the base image" >&2; status=1 ;;
      esac
      ;;
    *) echo "apt-install: $name $version" ;;
  esac
done

rm -f /usr/sbin/policy-rc.d
apt-get clean
rm -rf /var/lib/apt/lists/* /var/log/apt/* /var/log/dpkg.log
exit $status
