#!/bin/bash
# A process that turned THP off for itself (prctl PR_SET_THP_DISABLE, as
# MariaDB 10.11 and Redis with disable-thp do) cannot be collapsed: the
# kernel refuses MADV_COLLAPSE for all of its memory.  mthpd must say so,
# not stay silent:
# - `plan --json` and `collapse --json` print one object for it
#   ("action":"skip","reason":"thp_disabled"), the text output a hint;
# - `collapse` exits 1 (a target could not be worked on), and touches nothing;
# - the daemon says it once per process (result thp_disabled), and once
#   which VMAs of a matched process it leaves alone for MADV_NOHUGEPAGE
#   (result vma_refused), and the state file counts both per policy,
#   while the other process of the same policy is collapsed.
. "$(dirname "$0")/lib.sh"
require_all

wl_start --thp-disabled full full
D=$WL_PID DB=$WL_BASE DFD=$WL_FD
grep -q '^THP_enabled:[[:space:]]*0' "/proc/$D/status" || die "workload --thp-disabled: THP_enabled is not 0"

# The CLI: plan and collapse, JSON and text.
for mode in plan collapse; do
	"$MTHPD" "$mode" --pid "$D" --json >"$TMP/$mode.json" 2>"$TMP/$mode.err"
	rc=$?
	echo "== mthpd $mode --pid $D --json: exit $rc"
	sed 's/^/   /' "$TMP/$mode.json" "$TMP/$mode.err"
	want=0
	[ "$mode" = collapse ] && want=1
	[ "$rc" = "$want" ] || check_fail "$mode --json: exit $rc, expected $want"
	json_check "$TMP/$mode.json" "$mode" || check_fail "$mode --json: JSON contract"
	n=$(jq -c "select(.pid == $D and .reason == \"thp_disabled\" and .action == \"skip\")" "$TMP/$mode.json" | wc -l)
	[ "$n" = 1 ] || check_fail "$mode --json: $n thp_disabled objects for pid $D, expected 1"
	[ "$(wc -l <"$TMP/$mode.json")" = 1 ] || check_fail "$mode --json: more than the one object"
done
grep -q "THP is disabled for it" "$TMP/collapse.err" || check_fail "collapse: no sentence on stderr"
"$MTHPD" collapse --pid "$D" >"$TMP/collapse.txt" 2>&1
rc=$?
[ "$rc" = 1 ] || check_fail "collapse (text): exit $rc, expected 1"
grep -q "THP disabled for this process" "$TMP/collapse.txt" && grep -q "hint: " "$TMP/collapse.txt" ||
	check_fail "collapse (text): no 'THP disabled' line with a hint: $(cat "$TMP/collapse.txt")"
[ "$(anon_huge_kb "$D" "$DB" 2)" = 0 ] || check_fail "the THP-disabled process has huge pages"

# The daemon: both processes in one policy's cgroup.
child_cgroups thpoff
A=${CGROUPS[0]}
echo "$D" >"$A/cgroup.procs" || die "cannot move $D into $A"
in_cgroup "$A" full nohuge
P=$WL_PID B=$WL_BASE FD=$WL_FD

CONF=$TMP/conf
mkdir -p "$CONF/policy.d"
printf '[Daemon]\nscan_sleep_millisecs=200\nstate_file=%s\nmetrics_file=%s\n' "$TMP/status" "$TMP/metrics" >"$CONF/mthpd.conf"
printf '[Match]\ncgroup=/mthpd-thpoff-*\n[Policy]\nmin_age=0\nsizes=2M\nmax_ptes_none=0\n' >"$CONF/policy.d/50-a.conf"
"$MTHPD" run --config-dir "$CONF" 2>"$TMP/run.log" &
DAEMON=$!
huge_within "$P" "$B" 1 2048 || check_fail "the other process was not collapsed"
sleep 2 # ten passes more: each may only repeat what was said
sed 's/^/   log: /' "$TMP/run.log"
n=$(grep -c "pid $D .*THP disabled for this process.*hint: " "$TMP/run.log")
[ "$n" = 1 ] || check_fail "the daemon said $n times that pid $D has THP disabled, expected once"
# the nohuge range's VMA among them (an ASan build has its shadow refused too)
NH=$(printf '0x%x-0x%x' $((B + RANGE_SIZE)) $((B + 2 * RANGE_SIZE)))
n=$(grep -c "pid $P .*left alone: .* that the kernel refuses to collapse (MADV_NOHUGEPAGE): .*$NH" "$TMP/run.log")
[ "$n" = 1 ] || check_fail "the daemon said $n times which VMA of pid $P it leaves alone, expected once"
grep "^policy 50-a.conf " "$TMP/status" | sed 's/^/   status: /'
grep -q "^policy 50-a.conf processes=2 thp_disabled=1 vmas_refused=[1-9][0-9]* " "$TMP/status" ||
	check_fail "the state file does not count 2 processes, 1 thp_disabled, VMAs refused"
grep -q '^mthpd_processes_thp_disabled{policy="50-a.conf"} 1$' "$TMP/metrics" ||
	check_fail "metrics: no mthpd_processes_thp_disabled 1"
[ "$(anon_huge_kb "$D" "$DB" 2)" = 0 ] || check_fail "the daemon made huge pages in the THP-disabled process"
for pair in "$D:$DFD" "$P:$FD"; do
	v=$(wl_verify "${pair%%:*}" "${pair#*:}")
	[ "$v" = ok ] || check_fail "workload ${pair%%:*} memory: $v"
done

daemon_stop
finish
