#!/bin/bash
# Fragmented memory (issue 31): gigabytes free, no free 2 MiB block.
#
# tests/integration/fragment pins one page in every free 2 MiB physical
# block (io_uring fixed buffers, which compaction cannot move) and frees the
# rest.  Then a process of NR written ranges is matched by a policy:
#
# 1. the daemon stops at the first huge page it cannot allocate: the
#    kernel's thp_collapse_alloc_failed grows by a few in 8 s (the first
#    failure, then the probe 7.5 s later), not by one per range and pass,
#    as a daemon that tries every range would;
# 2. it says so: one notice naming the cause (no free 2 MiB block, the
#    kernel's compaction stalls and failures), "alloc_hold yes (no free
#    2 MiB block ...)" at the top of the state file, mthpd_alloc_hold 1;
# 3. the fragmenter exits and its pages are free: the pause ends within
#    2 s (buddyinfo, read once a second), the notice says so, and every
#    range is huge soon after; memory contents are intact.
#
# The workload starts after the fragmenter, so that its pages fill the
# holes: compaction can still make a block now and then from others'
# movable memory, a probe then succeeds and the pause ends until the next
# failure; each start and end is said once.  It skips where the machine
# cannot be fragmented (the fragmenter says why), and where the kernel
# still finds 2 MiB blocks for every range.
. "$(dirname "$0")/lib.sh"
require_all

FRAGMENT=$O/tests/integration/fragment
[ -x "$FRAGMENT" ] || die "$FRAGMENT not built (run make)"
NR=128
child_cgroups frag
A=${CGROUPS[0]}

# the fragmenter, stopped by cleanup() with the workloads
"$FRAGMENT" >"$TMP/fragment.out" 2>"$TMP/fragment.err" &
FRAG=$!
WL_PIDS+=("$FRAG")
for ((i = 0; i < 1800; i++)); do
	[ -s "$TMP/fragment.out" ] && break
	kill -0 "$FRAG" 2>/dev/null || break
	sleep 0.1
done
if [ ! -s "$TMP/fragment.out" ]; then
	wait "$FRAG"
	rc=$?
	[ "$rc" = 77 ] && skip "cannot fragment memory: $(cat "$TMP/fragment.err")"
	die "fragment exited $rc: $(cat "$TMP/fragment.err")"
fi
echo "fragment: $(cat "$TMP/fragment.out")"
[ "$(jq .free_pmd_blocks "$TMP/fragment.out")" = 0 ] ||
	skip "a free 2 MiB block is left after fragmenting: $(cat "$TMP/fragment.out")"
# the workload after: its pages fill holes, no 2 MiB block is all its own
# shellcheck disable=SC2046  # one word per range
in_cgroup "$A" $(for ((i = 0; i < NR; i++)); do echo full; done)
P=$WL_PID B=$WL_BASE FD=$WL_FD

CONF=$TMP/conf
mkdir -p "$CONF/policy.d"
printf '[Daemon]\nscan_sleep_millisecs=200\nalloc_sleep_millisecs=60000\nstate_file=%s\nmetrics_file=%s\n' \
	"$TMP/status" "$TMP/metrics" >"$CONF/mthpd.conf"
printf '[Match]\ncgroup=/mthpd-frag-*\n[Policy]\nmin_age=0\nsizes=2M\nmax_ptes_none=0\npace=no\n' \
	>"$CONF/policy.d/50-frag.conf"

failed0=$(vmstat thp_collapse_alloc_failed) stall0=$(vmstat compact_stall)
"$MTHPD" run --config-dir "$CONF" 2>"$TMP/run.log" &
DAEMON=$!
for ((i = 0; i < 100; i++)); do
	grep -q 'could not be allocated for pid' "$TMP/run.log" && break
	sleep 0.1
done
if ! grep -q 'could not be allocated for pid' "$TMP/run.log"; then
	huge=$(anon_huge_kb "$P" "$B" "$NR")
	[ "$huge" -gt 0 ] && skip "the kernel found 2 MiB blocks anyway ($((huge / 2048)) of $NR ranges huge, compaction of others' memory)"
	die "no allocation failure and nothing huge in 10 s: $(tail -3 "$TMP/run.log")"
fi
# the first probe: 7.5 s after the failure
sleep 8
failed=$(($(vmstat thp_collapse_alloc_failed) - failed0)) stalls=$(($(vmstat compact_stall) - stall0))
huge=$(anon_huge_kb "$P" "$B" "$NR")
echo "held 8 s: $failed failed allocations, $stalls compaction stalls, $((huge / 2048)) of $NR ranges huge"
[ "$failed" -le 6 ] ||
	check_fail "$failed failed huge page allocations in 8 s (at most 6: the first of each pause and its probe)"
# a probe that compaction served ends a pause, the next failure starts one:
# one notice for each start, one for each end
grep 'could not be allocated for pid' "$TMP/run.log"
starts=$(grep -c 'could not be allocated for pid' "$TMP/run.log")
ends=$(grep -c 'allocated again' "$TMP/run.log")
[ "$starts" = $((ends + 1)) ] || check_fail "$starts notices of a pause and $ends of its end, in a pause"
grep -Eq 'could not be allocated for pid.*\(no free 2 MiB block; compaction stalled [0-9]+ times? and failed [0-9]+ since mthpd started\)' "$TMP/run.log" ||
	check_fail "the notice does not name the cause: $(grep 'could not be allocated for pid' "$TMP/run.log")"
grep -q '^alloc_hold yes (no free 2 MiB block), next probe in' "$TMP/status" ||
	check_fail "the state file does not show the pause: $(grep alloc_hold "$TMP/status")"
grep -qx 'mthpd_alloc_hold 1' "$TMP/metrics" || check_fail "mthpd_alloc_hold is not 1: $(grep '^mthpd_alloc_hold' "$TMP/metrics")"

# memory frees: the pause ends at once
kill -TERM "$FRAG"
wait "$FRAG"
t0=$(date +%s%N)
for ((i = 0; i < 100; i++)); do
	[ "$(grep -c 'allocated again' "$TMP/run.log")" -gt "$ends" ] && break
	sleep 0.05
done
t1=$(date +%s%N)
grep 'allocated again' "$TMP/run.log" | tail -n +$((ends + 1)) | grep . ||
	check_fail "the pause did not end within 5 s of memory freeing"
echo "the pause ended $(((t1 - t0) / 1000000)) ms after the fragmenter exited"
[ $(((t1 - t0) / 1000000)) -le 2500 ] || check_fail "the pause ended $(((t1 - t0) / 1000000)) ms after memory freed (2 s at most)"
huge_within "$P" "$B" "$NR" $((NR * 2048)) ||
	check_fail "$(($(anon_huge_kb "$P" "$B" "$NR") / 2048)) of $NR ranges huge 10 s after the pause ended"
sleep 1.5
grep -qx 'mthpd_alloc_hold 0' "$TMP/metrics" || check_fail "mthpd_alloc_hold is not 0 after the pause: $(grep '^mthpd_alloc_hold' "$TMP/metrics")"
grep -q '^alloc_hold no' "$TMP/status" || check_fail "the state file still shows the pause"
memory_ok "$P" "$FD"
daemon_stop
finish
