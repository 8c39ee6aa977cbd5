#!/bin/bash
# pace=auto (lib/pace.h): full speed for a service that does not feel the
# collapses, gentle for one that does.
#
# 1. An idle process (64 fully written ranges, it sleeps): it neither
#    waits for the CPU nor faults, so the daemon takes no rest: every range
#    huge within 30 s and mthpd_pace_rests_total stays 0.
# 2. A busy one: the same ranges, with a thread that reads every page over
#    and over (workload --touch).  While the kernel copies a range, the
#    range is unmapped; the thread faults on it and waits for the copy.
#    The daemon sees the fault (the process's fault count grew while it
#    worked; each counts as long as the call held its range), or the
#    thread's wait for the CPU, and rests:
#    mthpd_pace_rests_total grows (mthpd_pace_rests_fault_total too, where
#    a fault came first), and every range still ends up huge.
# Memory contents are checked after each.  The latency this buys a real
# service is measured by bench/redis, not here.
. "$(dirname "$0")/lib.sh"
require_all

NR=64
child_cgroups auto
A=${CGROUPS[0]}

CONF=$TMP/conf
mkdir -p "$CONF/policy.d"
printf '[Daemon]\nscan_sleep_millisecs=500\nstate_file=%s\nmetrics_file=%s\n' "$TMP/status" "$TMP/metrics" \
	>"$CONF/mthpd.conf"
printf '[Match]\ncgroup=/mthpd-auto-*\n[Policy]\nmin_age=0\nsizes=2M\nmax_ptes_none=0\npace=auto\n' \
	>"$CONF/policy.d/50-a.conf"
"$MTHPD" check-config --config-dir "$CONF" | grep -q '^pace=auto$' ||
	check_fail "check-config does not show pace=auto"

# metric NAME: its value for the policy (0 before the file has it).
metric() {
	local v
	v=$(sed -n "s/^mthpd_$1{policy=\"50-a.conf\"} //p" "$TMP/metrics" 2>/dev/null)
	echo "${v:-0}"
}

# run_case LABEL [--touch]: a workload of NR full ranges under the daemon until all are huge.
run_case() {
	local label=$1 i huge=0 want=$((NR * 2048)) t0 t1
	shift
	# shellcheck disable=SC2046  # one word per range
	in_cgroup "$A" "$@" $(for ((i = 0; i < NR; i++)); do echo full; done)
	P=$WL_PID B=$WL_BASE FD=$WL_FD
	rm -f "$TMP/metrics" "$TMP/status"
	t0=$(date +%s%N)
	"$MTHPD" run --config-dir "$CONF" 2>"$TMP/run.$label.log" &
	DAEMON=$!
	for ((i = 0; i < 1200; i++)); do
		huge=$(anon_huge_kb "$P" "$B" "$NR")
		[ "$huge" = "$want" ] && break
		sleep 0.05
	done
	t1=$(date +%s%N)
	[ "$huge" = "$want" ] || check_fail "$label: $((huge / 2048)) of $NR ranges huge after 60 s"
	echo "$label: $((huge / 2048)) of $NR ranges huge in $(((t1 - t0) / 1000000)) ms"
	# the metrics of the pass that made the last range huge
	sleep 1.5
	RESTS=$(metric pace_rests_total) FAULT_RESTS=$(metric pace_rests_fault_total)
	echo "$label: mthpd_pace_rests_total $RESTS, mthpd_pace_rests_fault_total $FAULT_RESTS"
	memory_ok "$P" "$FD"
	daemon_stop
	wl_kill "$P"
}

run_case idle
[ "$RESTS" = 0 ] || check_fail "idle: the daemon rested $RESTS times for a process that felt nothing"
[ -s "$TMP/metrics" ] || check_fail "idle: no metrics file"

run_case touch --touch
# Rests after faults here; in an ASan build, whose daemon and workload are
# slower, the thread's wait for the CPU (its cgroup's cpu.pressure) ended
# the windows before a fault did in one CI run (10 rests, none after
# a fault): either is the process feeling the work.
[ "$RESTS" -gt 0 ] ||
	check_fail "touch: no rest for a process that faults on the ranges being collapsed (mthpd_pace_rests_total 0)"
[ "$RESTS" -ge "$FAULT_RESTS" ] || check_fail "touch: more rests after faults ($FAULT_RESTS) than rests ($RESTS)"

finish
