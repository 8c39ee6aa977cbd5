#!/bin/bash
# An allocator that unmaps what it just used makes process_madvise() answer
# ENOMEM for a range that is gone: the same errno as a failed allocation.
# mthpd must not take it for one: only a real allocation failure (the
# kernel's thp_collapse_alloc_failed moved) stops all collapsing for
# alloc_sleep_millisecs.  A churner (tests/integration/churn.c) runs beside
# the daemon until its ranges are reported `unmapped`; then a normal
# workload in the same policy must be collapsed within a few seconds, not
# after the 60 s pause, and its memory must be unchanged.
. "$(dirname "$0")/lib.sh"
require_all
CHURN=$O/tests/integration/churn
[ -x "$CHURN" ] || die "$CHURN not built (run make)"

child_cgroups churn
A=${CGROUPS[0]}
CONF=$TMP/conf
mkdir -p "$CONF/policy.d"
printf '[Daemon]\nscan_sleep_millisecs=100\nalloc_sleep_millisecs=60000\nstate_file=%s\nmetrics_file=\n' \
	"$TMP/status" >"$CONF/mthpd.conf"
printf '[Match]\ncgroup=/mthpd-churn-*\n[Policy]\nmin_age=0\nsizes=2M\nmax_ptes_none=511\n' >"$CONF/policy.d/50-a.conf"

mkfifo "$TMP/churn.out" || die "mkfifo"
"$CHURN" >"$TMP/churn.out" &
C=$!
WL_PIDS+=("$C")
exec {cfd}<"$TMP/churn.out"
read -t "$TIMEOUT" -r line <&"$cfd" || die "churn did not start"
echo "$C" >"$A/cgroup.procs" || die "cannot move $C into $A"
failed_before=$(vmstat thp_collapse_alloc_failed)

"$MTHPD" run --config-dir "$CONF" 2>"$TMP/run.log" &
DAEMON=$!
seen=""
for ((i = 0; i < 400; i++)); do
	if grep -q "pid $C .*: unmapped: " "$TMP/run.log"; then
		seen=unmapped
		break
	fi
	if grep -q "pid $C .*: alloc_huge_page_failed: " "$TMP/run.log"; then
		seen=alloc_huge_page_failed
		break
	fi
	sleep 0.1
done
grep "pid $C " "$TMP/run.log" | sed 's/^/   log: /' | head -8
failed_after=$(vmstat thp_collapse_alloc_failed)
echo "churner: first failure '$seen' after $((i / 10)) s; thp_collapse_alloc_failed $failed_before -> $failed_after"
[ -n "$seen" ] || skip "the churner's ranges never went away between scan and collapse in 40 s"
if [ "$seen" = alloc_huge_page_failed ] && [ "$failed_after" = "$failed_before" ]; then
	check_fail "an unmapped range was reported as an allocation failure (thp_collapse_alloc_failed did not move)"
fi
[ "$failed_after" = "$failed_before" ] || skip "real allocation failures on this machine during the test"

in_cgroup "$A" full full
P=$WL_PID B=$WL_BASE FD=$WL_FD
start=$(date +%s%N)
for ((i = 0; i < 100; i++)); do
	[ "$(anon_huge_kb "$P" "$B" 2)" = 4096 ] && break
	sleep 0.1
done
took=$((($(date +%s%N) - start) / 1000000))
echo "the normal workload: $(anon_huge_kb "$P" "$B" 2) kB huge after $took ms"
[ "$(anon_huge_kb "$P" "$B" 2)" = 4096 ] ||
	check_fail "the normal workload was not collapsed within 10 s beside the churner"
grep -q "collapse.*alloc_sleep\|allocation failure" "$TMP/run.log" && grep "allocation failure" "$TMP/run.log" | head -3
memory_ok "$P" "$FD"

daemon_stop
finish
