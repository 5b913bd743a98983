# hack/lib/progress.sh: progress for long steps, so that no step stays silent for more than a minute.
# Sourced by the cached builders (hack/kubernetes.sh, hack/images/*.sh, ...); the Go ones have
# hack/internal/stagerun's Heartbeat.
# Everything goes to stderr, prefixed by the caller's name ($TOOL_NAME or $LOG_PREFIX).
# shellcheck shell=bash

# Seconds between two "still running" lines (tests set it lower).
PROGRESS_EVERY=${ZNS_PROGRESS_EVERY:-30}

progress_name() { printf '%s' "${TOOL_NAME:-${LOG_PREFIX:-zns}}"; }
# mmss SECONDS: "4m05s"
mmss() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# heartbeat [--log FILE] LABEL HINT CMD...: run CMD; while it runs, every PROGRESS_EVERY seconds print
# "LABEL: still running, 2m30s elapsed (HINT)". With --log, CMD's output is appended to FILE (a build log,
# or the log a background job already writes) and each progress line ends with FILE's last line, so that a
# person sees where it is. Returns CMD's status.
heartbeat() {
  local logfile=""
  if [[ "$1" == --log ]]; then
    logfile=$2
    shift 2
  fi
  local label=$1 hint=$2 name t0=$SECONDS ticker rc=0
  shift 2
  name=$(progress_name)
  (
    # the ticker ends at once when told (its sleep runs in the background, so that the TERM trap fires
    # without waiting for it) and by itself once the script is gone. The sleep holds none of the script's
    # output: a TERM between `sleep &` and `sp=$!` orphans it, and an orphan holding stdout kept a caller
    # that reads the script's output to its end waiting for the full interval (seen once in CI).
    local sp="" last
    trap 'kill $(jobs -p) 2>/dev/null; exit 0' TERM
    while :; do
      # shellcheck disable=SC2217 # the sleep holds none of the script's descriptors, stdin included (above)
      sleep "$PROGRESS_EVERY" </dev/null >/dev/null 2>&1 &
      sp=$!
      wait "$sp"
      kill -0 "$$" 2>/dev/null || exit 0 # $$: the script, even in this subshell
      last=""
      if [[ -n "$logfile" && -s "$logfile" ]]; then
        last=$(tail -c 4096 "$logfile" 2>/dev/null | tr '\r' '\n' | sed '/^[[:space:]]*$/d' | tail -n 1 | cut -c1-140)
      fi
      printf '%s: %s: still running, %s elapsed%s%s\n' "$name" "$label" "$(mmss $((SECONDS - t0)))" \
        "${hint:+ ($hint)}" "${last:+; last: $last}" >&2
    done
  ) &
  ticker=$!
  if [[ -n "$logfile" ]]; then
    "$@" >>"$logfile" 2>&1 || rc=$?
  else
    "$@" || rc=$?
  fi
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  return "$rc"
}

# go_build_progress LABEL DIR GO-BUILD-ARGS... -- PACKAGES...: `go build -v` in DIR, reporting "compiled N
# of at most M packages" every PROGRESS_EVERY seconds instead of a silent wait (M counts every dependency,
# N only what was not in the build cache). Error output passes through unchanged.
go_build_progress() {
  local label=$1 dir=$2 args=() pkgs=() total name t0=$SECONDS
  shift 2
  while (($#)) && [[ "$1" != -- ]]; do
    args+=("$1")
    shift
  done
  [[ "${1:-}" == -- ]] && shift
  pkgs=("$@")
  name=$(progress_name)
  total=$(cd "$dir" && go list -mod=mod -deps "${pkgs[@]}" 2>/dev/null | wc -l) || total="?"
  printf '%s: %s: go build of %d package(s), %s packages with their dependencies\n' "$name" "$label" "${#pkgs[@]}" "$total" >&2
  (
    set -o pipefail
    cd "$dir" && go build -v "${args[@]}" "${pkgs[@]}" 2>&1 | {
      local n=0 last=$SECONDS line st
      while :; do
        # a timed read, so that the link phase (no output for minutes) still gets its progress lines
        IFS= read -r -t 5 line && st=0 || st=$?
        if ((st == 0)); then
          # `go build -v` names each package it compiles, one import path per line; anything else (errors,
          # "go: downloading ...") is passed on
          if [[ "$line" =~ ^[A-Za-z0-9_.~-]+(/[A-Za-z0-9_.~+-]+)*$ ]]; then
            n=$((n + 1))
          else
            printf '%s\n' "$line" >&2
          fi
        elif ((st <= 128)); then
          break # end of output: go build is done
        fi
        if ((SECONDS - last >= PROGRESS_EVERY)); then
          printf '%s: %s: compiled %d of at most %s packages, %s elapsed\n' "$name" "$label" "$n" "$total" \
            "$(mmss $((SECONDS - t0)))" >&2
          last=$SECONDS
        fi
      done
      printf '%s: %s: compiled %d packages (the rest came from the Go build cache) in %s\n' "$name" "$label" "$n" "$(mmss $((SECONDS - t0)))" >&2
    }
  )
}

# explain_failures: from here on, a command that fails where the script did not expect it (set -e) ends the
# script with a line naming the command, where it was and what to do, never with a bare non-zero status.
explain_failures() {
  set -E
  trap '_explain_failure "$?" "$BASH_COMMAND" "${BASH_SOURCE[0]:-?}" "$LINENO"' ERR
}
_explain_failure() {
  # subshells and command substitutions inherit the trap; only the script itself speaks
  [[ "$BASHPID" == "$$" ]] || return 0
  # shellcheck disable=SC2016 # the backquotes are literal: they set off the command in the message
  printf '%s: ERROR: `%s` failed (exit %s) at %s:%s. The lines above say why; fix that and run the same command again (finished builds are cached).\n' \
    "$(progress_name)" "$2" "$1" "${3#"${PWD}/"}" "$4" >&2
}
