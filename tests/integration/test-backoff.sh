#!/bin/bash
# `mthpd run` does not retry, pass after pass, a range whose collapse fails
# for a lasting reason: a page of it stays referenced from a pipe
# (vmsplice), so the kernel answers EAGAIN (SCAN_PAGE_COUNT) every time.
# Over 5 s (passes every 200 ms while there is work, then once a second:
# the process is left with nothing but failures, in backoff) the daemon
# tries it once (try_again after its one EAGAIN retry) and then leaves it
# to its backoff (30 s, doubling, or until its pages change); the
# workload's other range is collapsed, and the memory is unchanged.
# Without the range backoff the process-level backoff alone would try it
# again after 1 s and 3 s.
. "$(dirname "$0")/lib.sh"
require_all

child_cgroups backoff
A=${CGROUPS[0]}

CONF=$TMP/conf
mkdir -p "$CONF/policy.d"
printf '[Daemon]\nscan_sleep_millisecs=200\nstate_file=%s\nmetrics_file=\n' "$TMP/status" >"$CONF/mthpd.conf"
printf '[Match]\ncgroup=/mthpd-backoff-*\n[Policy]\nmin_age=0\nsizes=2M\nmax_ptes_none=0\n' >"$CONF/policy.d/50-a.conf"

in_cgroup "$A" pinned full
P=$WL_PID B=$WL_BASE FD=$WL_FD
PINNED=$(printf '0x%x' $((B)))

MTHPD_DEBUG=1 "$MTHPD" run --config-dir "$CONF" 2>"$TMP/run.log" &
DAEMON=$!
huge_within "$P" "$B" 2 2048 || check_fail "the full range was not collapsed: $(anon_huge_kb "$P" "$B" 2) kB"
sleep 5
passes=$(state passes_total)
tries=$(grep -c "pid $P .*2M at $PINNED: try_again" "$TMP/run.log")
echo "pinned range $PINNED: $tries attempt(s) in $passes passes"
grep "pid $P .*2M at $PINNED" "$TMP/run.log" | sed 's/^/   log: /' | head -5
[ "$passes" -ge 4 ] || check_fail "only $passes passes in 5 s"
[ "$tries" = 1 ] || check_fail "the pinned range was attempted $tries times, expected once (then backoff)"
grep -q "pid $P .*2M at $PINNED: backoff" "$TMP/run.log" ||
	check_fail "no 'backoff' decision logged for the pinned range"
memory_ok "$P" "$FD"

daemon_stop
finish
