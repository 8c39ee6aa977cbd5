#!/bin/bash
# Issue 25, numbers that add up: what the state file (so `mthpd status`) and
# the metrics call anonymous and huge is what the kernel maps.
# - A sparse 16 MiB collapsed with max_ptes_none=511: the collapse fills
#   the empty pages in, and the state file written right after that first
#   visit has anon_bytes >= huge_bytes (it showed the RssAnon read before
#   the collapse: huge 16 MiB of anon 2 MiB, until the next visit).
# - A process collapsed, which then turns THP off for itself (as MariaDB
#   does once started): its huge pages stay, and the state file and the
#   metrics still show them (they said 0 B: it is no longer scanned).
# - min_age=3: a process is left alone for its first 3 s (status: reason
#   min_age, not_visited), then collapsed without waiting for more.
# - A process killed while it is being collapsed: what was collapsed in it
#   before is in its unit's counter as in its policy's, and its exit is no
#   collapse_failed.
# - The metrics file adds up (prom-check), with a series for each unit.
. "$(dirname "$0")/lib.sh"
require_all

child_cgroups num-a num-b num-c num-d
A=${CGROUPS[0]} B=${CGROUPS[1]} C=${CGROUPS[2]} D=${CGROUPS[3]}
UA=${A#"$CG"} UB=${B#"$CG"} UC=${C#"$CG"} UD=${D#"$CG"}
in_cgroup "$A" sparse sparse sparse sparse sparse sparse sparse sparse
P=$WL_PID PB=$WL_BASE PFD=$WL_FD
in_cgroup "$B" full full
Q=$WL_PID QB=$WL_BASE QFD=$WL_FD

CONF=$TMP/conf
mkdir -p "$CONF/policy.d"
printf '[Daemon]\nscan_sleep_millisecs=100\nstate_file=%s\nmetrics_file=%s\n' "$TMP/status" "$TMP/metrics" >"$CONF/mthpd.conf"
printf '[Match]\ncgroup=/mthpd-num-*\n[Policy]\nmin_age=0\nsizes=2M\nmax_ptes_none=511\n' >"$CONF/policy.d/50-a.conf"
printf '[Match]\ncgroup=/mthpd-num-d-*\n[Policy]\nmin_age=0\nsizes=2M\nmax_ptes_none=0\n' >"$CONF/policy.d/30-d.conf"
printf '[Match]\ncgroup=/mthpd-num-c-*\n[Policy]\nmin_age=3\nsizes=2M\nmax_ptes_none=0\n' >"$CONF/policy.d/40-c.conf"

# field LINE KEY: the value of KEY= in LINE.
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }
proc_line() { grep "^process $1 " "$TMP/status" 2>/dev/null; }
rollup_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/smaps_rollup"; }

"$MTHPD" run --config-dir "$CONF" 2>"$TMP/run.log" &
DAEMON=$!

echo "== 1. the first state file after a collapse that filled pages in"
l=""
for ((i = 0; i < 200; i++)); do
	l=$(proc_line "$P")
	[ "$(field "$l" huge_bytes)" -gt 0 ] 2>/dev/null && break
	sleep 0.05
done
echo "   state: $l"
h=$(field "$l" huge_bytes) a=$(field "$l" anon_bytes)
# 16 MiB of the workload's own; an ASan build has more memory the daemon may collapse
k=$(($(rollup_kb "$P" AnonHugePages) * 1024))
[ "${h:-0}" -ge $((8 * RANGE_SIZE)) ] && [ "${h:-0}" -le "$k" ] ||
	check_fail "$P: huge_bytes ${h:-?} after its first collapse, expected 16 MiB to the kernel's $k"
[ "${a:-0}" -ge "${h:-1}" ] || check_fail "$P: anon_bytes ${a:-?} < huge_bytes ${h:-?} right after the collapse (stale anon)"
[ "$(anon_huge_kb "$P" "$PB" 8)" = 16384 ] || check_fail "$P: AnonHugePages $(anon_huge_kb "$P" "$PB" 8) kB, expected 16384"

echo "== 2. a process collapsed, then THP off for itself"
huge_within "$Q" "$QB" 2 4096 || check_fail "$Q: its two ranges were not collapsed"
kill -WINCH "$Q"
read -t "$TIMEOUT" -r ans <&"$QFD"
[ "$ans" = thp_disabled ] || die "workload $Q: PR_SET_THP_DISABLE: $ans"
grep -q '^THP_enabled:[[:space:]]*0' "/proc/$Q/status" || die "workload $Q: THP_enabled is not 0"
for ((i = 0; i < 100; i++)); do
	l=$(proc_line "$Q")
	[ "$(field "$l" last_result)" = thp_disabled ] && break
	sleep 0.1
done
sleep 0.3 # a state file written after that visit
l=$(proc_line "$Q")
echo "   state: $l"
huge=$(($(rollup_kb "$Q" AnonHugePages) * 1024))
echo "   kernel: pid $Q AnonHugePages $huge"
[ "$huge" -ge $((2 * RANGE_SIZE)) ] || check_fail "$Q: the kernel says AnonHugePages $huge, expected 4 MiB or more"
[ "$(field "$l" last_result)" = thp_disabled ] || check_fail "$Q: not seen with THP disabled: $l"
[ "$(field "$l" huge_bytes)" = "$huge" ] ||
	check_fail "$Q (THP disabled): huge_bytes $(field "$l" huge_bytes), the kernel maps $huge huge"
m=$(sed -n "s|^mthpd_unit_huge_bytes{policy=\"50-a.conf\",unit=\"$UB\"} ||p" "$TMP/metrics")
[ "$m" = "$huge" ] || check_fail "metrics: mthpd_unit_huge_bytes of $UB ${m:-none}, the kernel maps $huge huge"
"$MTHPD" status --config-dir "$CONF" >"$TMP/status.out" 2>&1 || check_fail "status: $(cat "$TMP/status.out")"
grep "$Q" "$TMP/status.out" | sed 's/^/   status: /'

echo "== 3. min_age=3: left alone for 3 s, then collapsed"
# age PID: seconds since it started (/proc/PID/stat field 22, in USER_HZ
# ticks, against /proc/uptime): a slow guest (tests/vm, TCG) takes a
# second or more to start the workload, so the test's own clock would lie
age() {
	awk -v s="$(awk '{ print $22 }' "/proc/$1/stat")" -v hz="$(getconf CLK_TCK 2>/dev/null || echo 100)" \
		'{ printf "%.2f", $1 - s / hz }' /proc/uptime
}
in_cgroup "$C" full full
R=$WL_PID RB=$WL_BASE RFD=$WL_FD
# from 1.5 s of age until the state file lists it (the daemon finds a new
# process within a second, and writes the file at most once a second)
l=""
for ((i = 0; i < 100; i++)); do
	a=$(age "$R")
	awk -v a="$a" 'BEGIN { exit !(a >= 2.8) }' && break
	l=$(proc_line "$R")
	[ -n "$l" ] && awk -v a="$a" 'BEGIN { exit !(a >= 1.5) }' && break
	sleep 0.05
done
echo "   state at $a s: $l"
if [ -n "$l" ] && awk -v a="$a" 'BEGIN { exit !(a < 2.8) }'; then
	[ "$(field "$l" reason)" = min_age ] && [ "$(field "$l" last_result)" = not_visited ] ||
		check_fail "$R at $a s: reason '$(field "$l" reason)', last_result '$(field "$l" last_result)', expected min_age, not_visited"
	[ "$(anon_huge_kb "$R" "$RB" 2)" = 0 ] || check_fail "$R was collapsed before its min_age"
else
	echo "   (too slow a machine to look at it before its min_age)"
fi
huge_within "$R" "$RB" 2 4096 || check_fail "$R: not collapsed within 10 s of $a s"
t=$(age "$R")
echo "   huge at the age of $t s (min_age=3)"
awk -v t="$t" 'BEGIN { exit !(t >= 2.9 && t < 5) }' || check_fail "$R: huge at the age of $t s, expected 3 s and a little"

echo "== 4. a process killed while it is collapsed"
# 256 MiB: the visit that collapses it takes long enough to be cut short
n=128
in_cgroup "$D" $(for ((i = 0; i < n; i++)); do echo full; done)
K=$WL_PID KB=$WL_BASE
for ((i = 0; i < 2000; i++)); do
	[ "$(anon_huge_kb "$K" "$KB" $n)" -gt 65536 ] && break # past the first call of 32 ranges
	sleep 0.005
done
at=$(anon_huge_kb "$K" "$KB" $n)
kill -KILL "$K"
wait "$K" 2>/dev/null
echo "   killed $K at AnonHugePages $at kB or a little more"
sleep 1 # a state file written after its last visit
pol=$(grep "^policy_total 30-d.conf " "$TMP/status")
echo "   state: $pol"
alloc=$(sed -n 's/.* 2M:planned=[0-9]*,collapse_alloc=\([0-9]*\),.*/\1/p' <<<"$pol")
failed=$(sed -n 's/.* 2M:.*,failed=\([0-9]*\).*/\1/p' <<<"$pol")
unit=$(sed -n "s|^mthpd_unit_collapsed_bytes_total{policy=\"30-d.conf\",unit=\"$UD\"} ||p" "$TMP/metrics")
echo "   collapse_alloc 2M: ${alloc:-?}, failed: ${failed:-?}; the unit's counter: ${unit:-none} bytes"
[ "${alloc:-0}" -gt 0 ] || check_fail "$K: nothing collapsed before it was killed"
[ "${unit:-0}" = $((${alloc:-0} * RANGE_SIZE)) ] ||
	check_fail "the unit's counter says ${unit:-none} bytes, the policy's $((${alloc:-0} * RANGE_SIZE)) (a killed process's last visit lost)"
[ "${failed:-0}" = 0 ] || check_fail "a killed process counted as $failed collapse_failed"

echo "== 5. the metrics add up"
"$(dirname "$0")/prom-check" "$TMP/metrics" "$UA" "$UB" "$UC" "$UD" >"$TMP/prom-check" ||
	check_fail "metrics: $(cat "$TMP/prom-check")"

memory_ok "$P" "$PFD"
memory_ok "$Q" "$QFD"
memory_ok "$R" "$RFD"
daemon_stop
finish
