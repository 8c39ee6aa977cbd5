#!/bin/bash
# `mthpd run` with far more memory than one pass's budget: nothing starves.
#   1. Three workloads of 16 fully written 2 MiB ranges each and
#      pages_to_scan=4096 (one pass scans 8 ranges' worth): before the
#      cursor this ended [8, 0, 0] huge ranges, forever.  All 48 must become
#      THPs within 8 passes (24576 pages / 4096 a pass = 6, plus the pass
#      that finds them and one for slack), their memory unchanged.
#   2. A large workload (256 ranges: 64 passes of budget) is being worked
#      on when a small one arrives in the same cgroup: the small one must be
#      collapsed within two passes of its arrival, not after the large one.
#   3. A second policy with its own cgroup: while the large workload still
#      has work, a workload of the other policy is collapsed within two
#      passes too (the budget is split between policies).
#   4. With a pass every 60 s, a new process is collapsed long before the
#      next pass: discovery runs once a second between passes.
. "$(dirname "$0")/lib.sh"
require_all

child_cgroups fair-a fair-b
A=${CGROUPS[0]} B=${CGROUPS[1]}

CONF=$TMP/conf
mkdir -p "$CONF/policy.d"
cat >"$CONF/mthpd.conf" <<EOT
[Daemon]
scan_sleep_millisecs=250
pages_to_scan=4096
state_file=$TMP/status
metrics_file=
EOT
for p in a b; do
	printf '[Match]\ncgroup=/mthpd-fair-%s-*\n[Policy]\nmin_age=0\nsizes=2M\nmax_ptes_none=0\n' "$p" \
		>"$CONF/policy.d/50-$p.conf"
done
"$MTHPD" check-config --config-dir "$CONF" >"$TMP/check.out" || die "check-config: $(cat "$TMP/check.out")"

# passes: the daemon's pass count from its state file (0 before the first).
passes() { state passes_total; }

# collapse_pass PID NR: the pass in which the daemon's NR-th successful
# collapse for PID was logged (its debug records come before the pass's
# summary line), or nothing.
collapse_pass() {
	awk -v pid="$1" -v nr="$2" '
		index($0, "pid " pid " ") && / 2M at 0x[0-9a-f]+: succeeded/ { n++ }
		n >= nr && match($0, /pass [0-9]+:/) {
			print substr($0, RSTART + 5, RLENGTH - 6); exit }' "$TMP/run.log"
}

# wait_huge NAME PID BASE NR MAXPASSES FROM: until every range of the
# workload is a THP (60 s at most), then checks from the daemon's log that
# this took at most MAXPASSES passes after pass FROM, the last one complete
# before the workload existed.  The time the test takes to look does not
# count: only the pass that did it.
wait_huge() {
	local name=$1 pid=$2 base=$3 nr=$4 max=$5 from=$6 i kb at
	for ((i = 0; i < 600; i++)); do
		kb=$(anon_huge_kb "$pid" "$base" "$nr")
		[ "$kb" = $((nr * 2048)) ] && break
		sleep 0.1
	done
	if [ "$kb" != $((nr * 2048)) ]; then
		check_fail "$name: $kb of $((nr * 2048)) kB huge after 60 s"
		return 1
	fi
	for ((i = 0; i < 50; i++)); do
		at=$(collapse_pass "$pid" "$nr")
		[ -n "$at" ] && break
		sleep 0.1 # the pass's summary line comes at its end
	done
	echo "$name: all $nr ranges huge in pass ${at:-?}, $((${at:-0} - from)) passes after pass $from"
	[ -n "$at" ] && [ $((at - from)) -le "$max" ] ||
		check_fail "$name: collapsed in pass ${at:-?}, expected at most $max passes after pass $from"
}

full() { # full N: N "full" patterns
	local i
	for ((i = 0; i < $1; i++)); do echo full; done
}

# shellcheck disable=SC2046 # the patterns are meant to split into words
{
	in_cgroup "$A" $(full 16)
	P1=$WL_PID B1=$WL_BASE F1=$WL_FD
	in_cgroup "$A" $(full 16)
	P2=$WL_PID B2=$WL_BASE F2=$WL_FD
	in_cgroup "$A" $(full 16)
	P3=$WL_PID B3=$WL_BASE F3=$WL_FD
}

# debug: one line per collapse decision, which collapse_pass reads
MTHPD_DEBUG=1 "$MTHPD" run --config-dir "$CONF" 2>"$TMP/run.log" &
DAEMON=$!

echo "== 1. three workloads, 3 x 16 ranges, pages_to_scan=4096"
wait_huge first "$P1" "$B1" 16 8 0
wait_huge second "$P2" "$B2" 16 8 0
wait_huge third "$P3" "$B3" 16 8 0
for w in "$P1 $F1" "$P2 $F2" "$P3 $F3"; do
	# shellcheck disable=SC2086 # pid and fd
	v=$(wl_verify $w)
	[ "$v" = ok ] || check_fail "workload ${w% *}: memory after collapse: $v"
done
echo "workload memory: ok x3"

echo "== 2. a new process while a large one is worked on"
# The small workloads of parts 2 and 3 start now, outside any managed
# cgroup: starting one takes seconds under TCG, longer than the large one
# has left; moving it into a cgroup is instant.
wl_start full full
PS=$WL_PID BS=$WL_BASE FS=$WL_FD
wl_start full full full full
PB=$WL_PID BB=$WL_BASE FB=$WL_FD
# shellcheck disable=SC2046
in_cgroup "$A" $(full 256)
PL=$WL_PID BL=$WL_BASE FL=$WL_FD
# Let the large one be found and started on: a few passes.
p0=$(passes)
while [ $(($(passes) - p0)) -lt 3 ]; do sleep 0.05; done
kb=$(anon_huge_kb "$PL" "$BL" 256)
echo "large workload: $kb kB huge after 3 passes"
[ "$kb" -lt $((256 * 2048)) ] || die "the large workload is already done: the test proves nothing"
from=$(passes)
echo "$PS" >"$A/cgroup.procs" || die "cannot move $PS into $A"
wait_huge "new small process" "$PS" "$BS" 2 2 "$from"
v=$(wl_verify "$PS" "$FS")
[ "$v" = ok ] || check_fail "the small workload's memory: $v"

echo "== 3. another policy's process while the large one is still worked on"
kb=$(anon_huge_kb "$PL" "$BL" 256)
[ "$kb" -lt $((256 * 2048)) ] || die "the large workload is already done: part 3 proves nothing"
from=$(passes)
echo "$PB" >"$B/cgroup.procs" || die "cannot move $PB into $B"
wait_huge "other policy" "$PB" "$BB" 4 2 "$from"
v=$(wl_verify "$PB" "$FB")
[ "$v" = ok ] || check_fail "the other policy's workload memory: $v"

# The large one is finished too, in about 64 passes of budget, shared.
wait_huge "large" "$PL" "$BL" 256 80 0
v=$(wl_verify "$PL" "$FL")
[ "$v" = ok ] || check_fail "the large workload's memory: $v"

kill -TERM "$DAEMON"
wait "$DAEMON"
rc=$?
DAEMON=""
[ "$rc" = 0 ] || check_fail "mthpd run exited $rc after SIGTERM: $(tail -3 "$TMP/run.log")"

echo "== 4. a new process does not wait for the next pass"
# A pass every 60 s: discovery between passes (once a second) finds the
# new process and starts a pass for it, long before the regular one.
sed -i 's/^scan_sleep_millisecs=.*/scan_sleep_millisecs=60000/' "$CONF/mthpd.conf"
: >"$TMP/run.log"
rm -f "$TMP/status"
MTHPD_DEBUG=1 "$MTHPD" run --config-dir "$CONF" 2>"$TMP/run.log" &
DAEMON=$!
for ((i = 0; i < 100; i++)); do [ "$(passes)" -ge 1 ] && break; sleep 0.1; done
[ "$(passes)" -ge 1 ] || die "no first pass"
p0=$(passes)
wl_start full full
PN=$WL_PID BN=$WL_BASE FN=$WL_FD
echo "$PN" >"$A/cgroup.procs" || die "cannot move $PN into $A"
t0=$(date +%s)
for ((i = 0; i < 300; i++)); do
	[ "$(anon_huge_kb "$PN" "$BN" 2)" = 4096 ] && break
	sleep 0.1
done
t=$(($(date +%s) - t0))
if [ "$(anon_huge_kb "$PN" "$BN" 2)" = 4096 ]; then
	echo "new process: huge after about $t s, in pass $(passes) (pass $p0 before it came)"
else
	check_fail "new process: not huge after 30 s, with a pass every 60 s (passes: $p0 -> $(passes))"
fi
v=$(wl_verify "$PN" "$FN")
[ "$v" = ok ] || check_fail "the new process's memory: $v"
kill -TERM "$DAEMON"
wait "$DAEMON"
DAEMON=""
finish
