#!/bin/sh
# Stand-in for sysbench in the runner's unit tests: replays a real capture.
# Controlled by the environment:
#   FAKE_RECORD      file that receives what the fake saw: its arguments, the
#                    password variables, a --config-file's content, its start
#                    time and how the gate ended
#   FAKE_STDOUT      file copied to stdout line by line (a real capture)
#   FAKE_STDERR      file copied to stderr afterwards
#   FAKE_GATE        after FAKE_GATE_LINES stdout lines, wait until this file
#                    exists (at most 20 s) before printing the rest
#   FAKE_STAT_FROM/FAKE_STAT_TO  copy FROM over TO after the output (a
#                    device's stat file advancing during the run)
#   FAKE_ECHO_PWD    if set, print $MYSQL_PWD on stdout and stderr
#   FAKE_SIGNAL      if set, the fake kills itself with this signal at the end
#                    (SEGV: what Debian's 1.0.20 does when it reconnects)
#   FAKE_EXIT        exit status (default 0)
#   FAKE_VERSION_DELAY  seconds --version sleeps before it answers (a starved
#                    node, where starting a process took more than 30 s)
if [ "$1" = "--version" ]; then
	sleep "${FAKE_VERSION_DELAY:-0}"
	echo "sysbench 1.0.20"
	exit 0
fi
rec=${FAKE_RECORD:-/dev/null}
{
	echo "start=$(date +%s.%N)"
	for a in "$@"; do
		echo "arg=$a"
		case $a in
		--config-file=*) echo "config=$(cat "${a#--config-file=}")" ;;
		esac
	done
	echo "MYSQL_PWD=${MYSQL_PWD-<unset>}"
	echo "MYSQL_PASSWORD=${MYSQL_PASSWORD-<unset>}"
} >>"$rec"
if [ -n "$FAKE_ECHO_PWD" ]; then
	echo "connecting with password $MYSQL_PWD"
	echo "stderr: password $MYSQL_PWD" >&2
fi
n=0
if [ -n "$FAKE_STDOUT" ]; then
	while IFS= read -r line || [ -n "$line" ]; do
		printf '%s\n' "$line"
		n=$((n + 1))
		if [ -n "$FAKE_GATE" ] && [ "$n" -eq "${FAKE_GATE_LINES:-1}" ]; then
			i=0
			while [ ! -e "$FAKE_GATE" ] && [ $i -lt 200 ]; do
				sleep 0.1
				i=$((i + 1))
			done
			if [ -e "$FAKE_GATE" ]; then echo "gate=opened" >>"$rec"; else echo "gate=timeout" >>"$rec"; fi
		fi
	done <"$FAKE_STDOUT"
fi
if [ -n "$FAKE_STDERR" ]; then
	cat "$FAKE_STDERR" >&2
fi
if [ -n "$FAKE_STAT_FROM" ]; then
	cp "$FAKE_STAT_FROM" "$FAKE_STAT_TO"
fi
if [ -n "$FAKE_SIGNAL" ]; then
	kill -s "$FAKE_SIGNAL" $$
fi
exit "${FAKE_EXIT:-0}"
