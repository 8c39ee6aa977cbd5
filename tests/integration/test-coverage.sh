#!/bin/bash
# Issue 18.2: what the services are like now, per process and per unit, in
# the state file, in `mthpd status` and in the metrics, checked against what
# the kernel says of the same processes:
# - a collapsed process: anon_bytes is its RssAnon, huge_bytes its
#   AnonHugePages, collapsed_bytes_total what mthpd made huge in it,
#   last_result succeeded; nothing collapsed in the last pass once settled;
# - a process with THP disabled in the same unit: reason thp_disabled;
# - a process under a dry-run policy: nothing collapsed, reason dry_run;
# - the unit's line and metrics sum its processes; the per-unit counter of
#   collapsed bytes stays after its process exits.
. "$(dirname "$0")/lib.sh"
require_all

child_cgroups cov-a cov-b
A=${CGROUPS[0]} B=${CGROUPS[1]}
UA=${A#"$CG"} UB=${B#"$CG"}
in_cgroup "$A" full full half
P=$WL_PID PB=$WL_BASE PFD=$WL_FD
wl_start --thp-disabled full
D=$WL_PID DFD=$WL_FD
echo "$D" >"$A/cgroup.procs" || die "cannot move $D into $A"
in_cgroup "$B" full
Q=$WL_PID QB=$WL_BASE QFD=$WL_FD

CONF=$TMP/conf
mkdir -p "$CONF/policy.d"
printf '[Daemon]\nscan_sleep_millisecs=100\nstate_file=%s\nmetrics_file=%s\n' "$TMP/status" "$TMP/metrics" >"$CONF/mthpd.conf"
printf '[Match]\ncgroup=/mthpd-cov-a-*\n[Policy]\nmin_age=0\nsizes=2M\nmax_ptes_none=0\n' >"$CONF/policy.d/50-a.conf"
printf '[Match]\ncgroup=/mthpd-cov-b-*\n[Policy]\nmin_age=0\nsizes=2M\ndry_run=yes\n' >"$CONF/policy.d/60-b.conf"
"$MTHPD" run --config-dir "$CONF" 2>"$TMP/run.log" &
DAEMON=$!
huge_within "$P" "$PB" 3 4096 || check_fail "the two full ranges of $P were not collapsed"
sleep 1.5 # a few passes more, and a state file written after them

# proc_line PID: the state file's "process PID ..." line.
proc_line() { grep "^process $1 " "$TMP/status"; }
# field LINE KEY: the value of KEY= in LINE.
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }
# why LINE: its reason, without the VMAs the kernel refuses (an ASan
# build's shadow memory is MADV_NOHUGEPAGE); "-" when nothing else is left
why() { field "$1" reason | sed -E 's/(^|,)vmas_refused=[0-9]+//; s/^,//; s/^$/-/'; }
kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/${3:-status}"; }

grep -E '^(policy|unit|process) ' "$TMP/status" | sed 's/^/   state: /'
l=$(proc_line "$P")
[ -n "$l" ] || check_fail "no process line for $P"
# what the kernel says now; the workload does not change its memory
rss=$(($(kb "$P" RssAnon) * 1024))
huge=$(($(kb "$P" AnonHugePages smaps_rollup) * 1024))
echo "kernel: pid $P RssAnon $rss, AnonHugePages $huge"
a=$(field "$l" anon_bytes)
[ "${a:-0}" -ge $((rss - 262144)) ] && [ "${a:-0}" -le $((rss + 262144)) ] ||
	check_fail "$P: anon_bytes ${a:-?}, the kernel says RssAnon $rss"
[ "$(field "$l" huge_bytes)" = "$huge" ] || check_fail "$P: huge_bytes $(field "$l" huge_bytes), the kernel says AnonHugePages $huge"
[ "$(field "$l" collapsed_bytes_total)" = $((2 * RANGE_SIZE)) ] ||
	check_fail "$P: collapsed_bytes_total $(field "$l" collapsed_bytes_total), expected two ranges"
[ "$(field "$l" collapsed_last_pass_bytes)" = 0 ] || check_fail "$P: settled, yet collapsed_last_pass_bytes $(field "$l" collapsed_last_pass_bytes)"
[ "$(field "$l" last_result)" = succeeded ] || check_fail "$P: last_result $(field "$l" last_result), expected succeeded"
[ "$(why "$l")" = - ] || check_fail "$P: reason $(field "$l" reason), expected -"

l=$(proc_line "$D")
[ "$(why "$l")" = thp_disabled ] && [ "$(field "$l" last_result)" = thp_disabled ] ||
	check_fail "$D: reason '$(field "$l" reason)', last_result '$(field "$l" last_result)', expected thp_disabled"
[ "$(field "$l" huge_bytes)" = 0 ] && [ "$(field "$l" collapsed_bytes_total)" = 0 ] || check_fail "$D: huge or collapsed: $l"

l=$(proc_line "$Q")
[ "$(why "$l")" = dry_run ] && [ "$(field "$l" last_result)" = dry_run ] ||
	check_fail "$Q (dry run): reason '$(field "$l" reason)', last_result '$(field "$l" last_result)'"
[ "$(field "$l" collapsed_bytes_total)" = 0 ] || check_fail "$Q (dry run): collapsed $(field "$l" collapsed_bytes_total)"
[ "$(anon_huge_kb "$Q" "$QB" 1)" = 0 ] || check_fail "$Q (dry run) was collapsed"

# The unit: its two processes summed.
u=$(grep "^unit 50-a.conf $UA " "$TMP/status")
pa=$(field "$(proc_line "$P")" anon_bytes) da=$(field "$(proc_line "$D")" anon_bytes)
[ "$(field "$u" processes)" = 2 ] && [ "$(field "$u" thp_disabled)" = 1 ] ||
	check_fail "unit $UA: not 2 processes, 1 with THP disabled: $u"
[ "$(field "$u" anon_bytes)" = $((pa + da)) ] || check_fail "unit $UA: anon_bytes $(field "$u" anon_bytes), its processes $pa + $da"
[ "$(field "$u" huge_bytes)" = "$huge" ] || check_fail "unit $UA: huge_bytes $(field "$u" huge_bytes), expected $huge"
grep -q "^policy 50-a.conf processes=2 thp_disabled=1 vmas_refused=[0-9]* anon_bytes=$((pa + da)) huge_bytes=$huge " "$TMP/status" ||
	check_fail "the policy line does not sum its processes"

# The metrics: per unit, with labels policy and unit.
grep '^mthpd_unit_' "$TMP/metrics" | sed 's/^/   metrics: /'
m() { sed -n "s|^mthpd_$1{policy=\"$2\",unit=\"$3\"} ||p" "$TMP/metrics"; }
[ "$(m unit_processes 50-a.conf "$UA")" = 2 ] || check_fail "metrics: mthpd_unit_processes of $UA is not 2"
[ "$(m unit_huge_bytes 50-a.conf "$UA")" = "$huge" ] || check_fail "metrics: mthpd_unit_huge_bytes of $UA is not $huge"
[ "$(m unit_collapsed_bytes_total 50-a.conf "$UA")" = $((2 * RANGE_SIZE)) ] || check_fail "metrics: mthpd_unit_collapsed_bytes_total of $UA"
[ "$(m unit_processes_thp_disabled 50-a.conf "$UA")" = 1 ] || check_fail "metrics: mthpd_unit_processes_thp_disabled of $UA"
[ "$(m unit_processes 60-b.conf "$UB")" = 1 ] || check_fail "metrics: mthpd_unit_processes of $UB is not 1"

# `mthpd status`: the policy's sentence, the unit's row, the process's row.
"$MTHPD" status --config-dir "$CONF" >"$TMP/status.out" || check_fail "status: exit $?"
sed -n '/^policy 50-a.conf:/,$p' "$TMP/status.out" | sed 's/^/   status: /'
grep -q "^policy 50-a.conf: 2 processes (1 with THP disabled, [0-9]* VMAs refused); anon .*, huge 4.00 MiB " "$TMP/status.out" ||
	check_fail "status: no sentence for policy 50-a.conf"
grep -Eq "^  $UA  *2 .* succeeded  *(thp_disabled|vmas_refused=[0-9]+)" "$TMP/status.out" || check_fail "status: no row for unit $UA"
grep -Eq "^    $P  *workload .* 4.00 MiB  *succeeded  *(-|vmas_refused=[0-9]+)$" "$TMP/status.out" || check_fail "status: no row for pid $P"

# The counter outlives the process.
wl_kill "$P"
sleep 1.5
grep -q "^process $P " "$TMP/status" && check_fail "pid $P exited, still listed"
[ "$(m unit_collapsed_bytes_total 50-a.conf "$UA")" = $((2 * RANGE_SIZE)) ] || check_fail "metrics: the unit's counter did not outlive its process"
[ "$(m unit_processes 50-a.conf "$UA")" = 1 ] || check_fail "metrics: mthpd_unit_processes of $UA is not 1 after $P exited"

memory_ok "$D" "$DFD"
memory_ok "$Q" "$QFD"
daemon_stop
finish
