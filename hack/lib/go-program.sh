# hack/lib/go-program.sh: the Go programs of hack/ that a shell script hands its command line over to
# (hack/test.sh: hack/testrun, hack/demo.sh: hack/demorun), each built once for each version of its sources.
# shellcheck shell=bash

# go_program PREFIX PACKAGE SOURCE...: print the path of PACKAGE's binary (hack/NAME), built under
# $ZNS_CACHE_DIR/bin when no binary of these SOURCEs is there yet; when it cannot be built, say why as PREFIX
# and return 1. Run it in the repository.
go_program() {
  local prefix=$1 pkg=$2 name cache sum bin tmp
  shift 2
  name=${pkg##*/}
  cache=${ZNS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/zns-mysql}/bin
  sum=$(cat "$@" | sha256sum | cut -c1-16) || return
  bin="$cache/$name-$sum"
  if [[ ! -x "$bin" ]]; then
    command -v go >/dev/null || { echo "$prefix: ERROR: needs Go on PATH (https://go.dev/dl/) to build $pkg" >&2; return 1; }
    mkdir -p "$cache" && tmp=$(mktemp "$cache/$name.XXXXXX") || return
    # a temporary name, then a rename: runs that start together never exec a half-written binary
    if ! CGO_ENABLED=0 go build -o "$tmp" "./$pkg" >&2; then
      rm -f "$tmp"
      echo "$prefix: ERROR: building $pkg failed (above); 'go build ./$pkg' shows it again" >&2
      return 1
    fi
    mv -f "$tmp" "$bin"
  fi
  printf '%s\n' "$bin"
}

# go_sources FILE...: the FILEs that are not Go tests, one a line (what a program's binary is built from).
go_sources() {
  local f
  for f in "$@"; do [[ "$f" == *_test.go ]] || printf '%s\n' "$f"; done
}
