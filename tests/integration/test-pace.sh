#!/bin/bash
# A policy's pace= spreads its collapses in time: with pace=10% over 128
# fully written ranges, the daemon collapses them one range per call, each
# call followed by a rest, and goes on by its pace timer, not by the next
# pass (scan_sleep_millisecs is 60 s here, longer than the test).  Checked
# from outside: every range ends up huge within 30 s; the daemon's own log
# shows the collapses in many visits, not in one; and its CPU time
# (/proc/PID/schedstat: process_madvise() runs in the daemon) over the
# wall time from the first huge range to the last stays far below 100%.
# The bound is generous (30% for a 10% pace): the test checks the
# mechanism, the latency it buys is measured by bench/redis.
. "$(dirname "$0")/lib.sh"
require_all

NR=128
child_cgroups pace
A=${CGROUPS[0]}

CONF=$TMP/conf
mkdir -p "$CONF/policy.d"
printf '[Daemon]\nscan_sleep_millisecs=60000\nstate_file=%s\nmetrics_file=\n' "$TMP/status" >"$CONF/mthpd.conf"
printf '[Match]\ncgroup=/mthpd-pace-*\n[Policy]\nmin_age=0\nsizes=2M\nmax_ptes_none=0\npace=10%%\n' >"$CONF/policy.d/50-a.conf"
"$MTHPD" check-config --config-dir "$CONF" | grep -q '^pace=10%$' ||
	check_fail "check-config does not show pace=10%"

# shellcheck disable=SC2046  # one word per range
in_cgroup "$A" $(for ((i = 0; i < NR; i++)); do echo full; done)
P=$WL_PID B=$WL_BASE FD=$WL_FD

cpu_ns() { read -r ns _ <"/proc/$DAEMON/schedstat" && echo "$ns"; }
now_ns() { date +%s%N; }

"$MTHPD" run --config-dir "$CONF" 2>"$TMP/run.log" &
DAEMON=$!
want=$((NR * 2048))
t0="" c0="" huge=0
for ((i = 0; i < 600; i++)); do
	huge=$(anon_huge_kb "$P" "$B" "$NR")
	if [ -z "$t0" ] && [ "$huge" -gt 0 ]; then
		t0=$(now_ns) c0=$(cpu_ns)
	fi
	[ "$huge" = "$want" ] && break
	sleep 0.05
done
t1=$(now_ns) c1=$(cpu_ns)
[ "$huge" = "$want" ] || check_fail "$((huge / 2048)) of $NR ranges huge after 30 s"
if [ -n "$t0" ]; then
	wall_ms=$(((t1 - t0) / 1000000))
	cpu_ms=$(((c1 - c0) / 1000000))
	echo "first to last huge range: ${wall_ms} ms of wall time, daemon CPU ${cpu_ms} ms"
	[ "$wall_ms" -gt 0 ] || check_fail "all $NR ranges went huge at once"
	[ $((cpu_ms * 100)) -le $((wall_ms * 30)) ] ||
		check_fail "the daemon worked ${cpu_ms} ms in ${wall_ms} ms: more than 30% for pace=10%"
fi
# one record per walk (or per 10 s of it), saying over how many visits:
# "pid P 'workload' ...: succeeded: 2M x64 (policy 50-a.conf) in 64 visits over 6.3 s"
sleep 0.5 # the walk's last visit, which ends it and logs it, after the last huge range
lines=$(grep -c "pid $P .*: succeeded: 2M x" "$TMP/run.log")
visits=$(grep "pid $P .*: succeeded: 2M x" "$TMP/run.log" |
	awk '{ v = 1; for (i = 1; i < NF; i++) if ($(i + 1) == "visits") v = $i; s += v } END { print s + 0 }')
blocks=$(grep -o "pid $P .*: succeeded: 2M x[0-9]*" "$TMP/run.log" | awk -F x '{ s += $NF } END { print s + 0 }')
echo "collapses of pid $P: $blocks in $visits visits, logged in $lines records"
grep "pid $P .*: succeeded: 2M x" "$TMP/run.log" | head -3 | sed 's/^/   log: /'
[ "$visits" -ge $((NR / 4)) ] || check_fail "$NR collapses in $visits visits: not paced (one range per call, then a rest)"
[ "$blocks" = "$NR" ] || check_fail "the records sum to $blocks collapses, not $NR"
[ $((lines * 4)) -le "$visits" ] || check_fail "$lines records for $visits visits: a paced walk should be logged whole, not per visit"
[ "$(state passes_total)" -le 2 ] || check_fail "$(state passes_total) passes: the pace timer, not passes, should go on"
memory_ok "$P" "$FD"

daemon_stop
finish
