#!/bin/bash
# A 2M folio mapped in part is split, so that the kernel frees what nothing
# maps.  The workload's "half" range is collapsed (256 pages written, 256
# filled); then the workload gives the 256 filled pages back
# (MADV_DONTNEED, as jemalloc's purge does).  The kernel splits the PMD
# mapping, not the folio: its 256 unmapped pages stay allocated and in no
# RssAnon until its deferred split runs under memory pressure.
#  1. split_partial=yes (the default): the daemon splits it at its next
#     visit; bench/thp-partial (an independent reader of pagemap and
#     kpageflags) sees no memory held that nothing maps, thp-inspect sees
#     the range in small pages, the range is not refilled, the state file
#     and the metrics count one split and 256 pages, the log says so, and
#     the memory is unchanged.
#  2. split_partial=no: the folio stays whole, and the state file shows the
#     1 MiB it holds (partial_bytes) for the process.
#  3. a dry-run policy: nothing is split; the log says what would be.
#     `mthpd plan` reports the folio too, for a pid and for the
#     configuration (--config-dir, text and JSON).
# Whether MADV_COLD splits such a folio depends on the kernel (6.18 and
# Debian's 6.1.0-57 do): the workload tries it on its own memory first
# (--probe-split).  Where it does not, case 1 expects
# the folio left whole and reported, and the daemon's one notice.
. "$(dirname "$0")/lib.sh"
require_all

PARTIAL=$O/bench/thp-partial
[ -x "$PARTIAL" ] || die "$PARTIAL not built (run make)"
probe=$("$WORKLOAD" --probe-split)
case $? in
0) SPLITS=1 ;;
1) SPLITS=0 ;;
*) skip "cannot tell whether this kernel splits a THP mapped in part: $probe" ;;
esac
echo "this kernel, MADV_COLD on a THP mapped in part: $probe"
child_cgroups split
A=${CGROUPS[0]}
CONF=$TMP/conf
mkdir -p "$CONF/policy.d"
printf '[Daemon]\nscan_sleep_millisecs=200\nstate_file=%s\nmetrics_file=%s\n' \
	"$TMP/status" "$TMP/metrics" >"$CONF/mthpd.conf"

# hidden_kb PID: kB of 2M THPs the process maps only in part that it does not map
hidden_kb() {
	"$PARTIAL" "$1" | sed -n 's/.*hidden_kb=\([0-9]*\).*/\1/p'
}

# folios PID BASE: thp-inspect's folios of the first range
folios() {
	"$INSPECT" "$1" "$2" 1 | sed -n 's/.*folios=\([^ ]*\).*/\1/p'
}

# wait_for SECONDS COMMAND...: until COMMAND succeeds, at most SECONDS
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -ge "$end" ] && return 1
		sleep 0.2
	done
}

# released WORKLOAD_PID BASE FD: collapse both ranges, give the filled half back
released() {
	local line
	huge_within "$1" "$2" 2 4096 || die "the two ranges were not collapsed: $(anon_huge_kb "$1" "$2" 2) kB"
	kill -HUP "$1"
	read -t "$TIMEOUT" -r line <&"$3" || die "no answer from the workload to SIGHUP"
	[ "$line" = "released 1" ] || die "workload: '$line', expected 'released 1'"
}

# the policy file for the cgroup, with extra [Policy] lines $1
policy() {
	printf '[Match]\ncgroup=/mthpd-split-*\n[Policy]\nmin_age=0\nsizes=2M\nmax_ptes_none=511\n%b' "$1" \
		>"$CONF/policy.d/50-a.conf"
}

# start_case POLICY_LINES: a workload, the daemon with that policy, and
# the workload's filled half given back; sets P, B, FD and DAEMON
start_case() {
	policy "$1"
	rm -f "$TMP/status"
	in_cgroup "$A" half full
	P=$WL_PID B=$WL_BASE FD=$WL_FD
	MTHPD_DEBUG=1 "$MTHPD" run --config-dir "$CONF" 2>"$TMP/run.log" &
	DAEMON=$!
	released "$P" "$B" "$FD"
}

echo "== 1: split_partial=yes (the default)"
start_case ""
h=$(hidden_kb "$P")
echo "after the release: held unmapped ${h} kB, range 0: $(folios "$P" "$B")"
[ "$h" = 1024 ] || die "the released half should be held by the folio: hidden_kb=$h, expected 1024"
grep 'kernel:' "$TMP/run.log" | sed 's/^/   log: /'
if [ "$SPLITS" = 0 ]; then
	# the kernel cannot: reported, not split, and said once
	grep -q 'kernel: .* split_partial=no' "$TMP/run.log" || check_fail "the daemon's probe does not say split_partial=no"
	grep -q 'MADV_COLD does not split a 2M folio mapped in part here' "$TMP/run.log" ||
		check_fail "no notice that split_partial= does nothing here"
	kill -HUP "$DAEMON"
	wait_for 10 grep -q "^process $P .* partial_bytes=1048576 " "$TMP/status" ||
		check_fail "status: no partial_bytes=1048576 for $P"
	[ "$(hidden_kb "$P")" = 1024 ] || check_fail "held $(hidden_kb "$P") kB, expected 1024 still"
	grep -q "split_folios=0 released_pages=0" <<<"$(state total)" || check_fail "a split was counted"
	memory_ok "$P" "$FD"
	daemon_stop
	wl_kill "$P"
	finish
fi
grep -q 'kernel: .* split_partial=yes' "$TMP/run.log" || check_fail "the daemon's probe does not say split_partial=yes"
kill -HUP "$DAEMON" # a reload visits every process at once
# nothing_held PID: no memory of 2M THPs that PID maps in part is left
nothing_held() {
	[ "$(hidden_kb "$1")" = 0 ]
}
wait_for 10 nothing_held "$P" || check_fail "still held after 10 s: $(hidden_kb "$P") kB"
sleep 1.5 # a few more passes: the range must not be collapsed and filled again
f=$(folios "$P" "$B")
echo "after the split: held $(hidden_kb "$P") kB, range 0: $f, huge $(anon_huge_kb "$P" "$B" 2) kB"
[ "$f" = order0x256 ] || check_fail "range 0 is '$f', expected 256 small pages (order0x256)"
[ "$(anon_huge_kb "$P" "$B" 2)" = 2048 ] || check_fail "range 0 was collapsed again"
total=$(state total)
echo "state: total $total"
grep -q ' split_folios=1 released_pages=256' <<<"$total" ||
	check_fail "state file: expected split_folios=1 released_pages=256"
grep -q '^mthpd_released_pages_total{policy="50-a.conf"} 256$' "$TMP/metrics" ||
	check_fail "metrics: no mthpd_released_pages_total of 256"
grep -q "pid $P .*: split 1 2M folio mapped in part: 1024 KiB given back" "$TMP/run.log" ||
	check_fail "no split in the log"
grep "split 1" "$TMP/run.log" | sed 's/^/   log: /'
grep -q "^process $P .* partial_bytes=0 " "$TMP/status" || check_fail "status: partial_bytes not 0 for $P"
memory_ok "$P" "$FD"
daemon_stop
wl_kill "$P"

echo "== 2: split_partial=no"
start_case 'split_partial=no\n'
kill -HUP "$DAEMON"
wait_for 10 grep -q "^process $P .* partial_bytes=1048576 " "$TMP/status" ||
	check_fail "status: no partial_bytes=1048576 for $P: $(grep "^process $P " "$TMP/status")"
grep "^process $P " "$TMP/status" | sed 's/^/   status: /'
"$MTHPD" status --config-dir "$CONF" >"$TMP/status.out" 2>&1
grep -q "and 1.00 MiB more in 2M folios its processes map in part" "$TMP/status.out" ||
	check_fail "mthpd status does not show the memory held: $(cat "$TMP/status.out")"
grep "map in part" "$TMP/status.out" | sed 's/^/   mthpd status: /'
h=$(hidden_kb "$P")
echo "held unmapped: ${h} kB, range 0: $(folios "$P" "$B")"
[ "$h" = 1024 ] || check_fail "split_partial=no: the folio was split (hidden_kb=$h)"
grep -q "split_folios=0 released_pages=0" <<<"$(state total)" || check_fail "a split was counted"
grep -q 'mthpd_unit_partial_bytes{policy="50-a.conf",.*} 1048576$' "$TMP/metrics" ||
	check_fail "metrics: no mthpd_unit_partial_bytes of 1048576"
memory_ok "$P" "$FD"
daemon_stop

echo "== 3: dry_run=yes, and mthpd plan"
"$MTHPD" plan --pid "$P" --sizes 2M >"$TMP/plan.out" || check_fail "mthpd plan failed"
grep "mapped in part" "$TMP/plan.out" | sed 's/^/   plan: /'
grep -q "1 2M folio mapped in part: 1.00 MiB that nothing maps" "$TMP/plan.out" ||
	check_fail "mthpd plan does not report the folio mapped in part"
policy 'dry_run=yes\n'
"$MTHPD" plan --config-dir "$CONF" --json >"$TMP/preview.json" || check_fail "mthpd plan --config-dir failed"
pb=$(jq -r --argjson pid "$P" 'select(.type == "process" and .pid == $pid) | .partial_bytes' "$TMP/preview.json")
echo "   preview: partial_bytes=$pb for $P"
[ "$pb" = 1048576 ] || check_fail "mthpd plan --config-dir --json: partial_bytes '$pb' for $P, expected 1048576"
"$MTHPD" plan --config-dir "$CONF" | grep -q "pid $P .*: .*1.00 MiB in 2M folios mapped in part" ||
	check_fail "mthpd plan --config-dir does not show the folio mapped in part for $P"
rm -f "$TMP/status"
MTHPD_DEBUG=1 "$MTHPD" run --config-dir "$CONF" 2>"$TMP/run.log" &
DAEMON=$!
wait_for 10 grep -q "pid $P .*dry_run: 1 2M folio mapped in part to split, 1024 KiB" "$TMP/run.log" ||
	check_fail "the dry run does not say what it would split"
grep "mapped in part" "$TMP/run.log" | sed 's/^/   log: /'
sleep 1
h=$(hidden_kb "$P")
[ "$h" = 1024 ] || check_fail "dry run: the folio was split (hidden_kb=$h)"
memory_ok "$P" "$FD"
daemon_stop
wl_kill "$P"
finish
