#!/bin/bash
# The daemon's sandbox (daemon/sandbox.c) on the live kernel: the capability
# drop, no_new_privs and the seccomp allow-list, with EPERM for anything
# else.  [chrony test/system/099-scfilter]
# 1. `mthpd sandbox-test`: calls outside the list (socket(AF_INET), execve,
#    fork, PROT_EXEC mappings, other ioctls, other madvise advice) fail with
#    EPERM; the ones the daemon makes work.
# 2. plan and collapse with MTHPD_SANDBOX=1, which enters the sandbox right
#    before the pass: the same blocks and results as without it, on the
#    pattern workload, also through the fallbacks of older kernels (maps,
#    plain pagemap reads); the memory is collapsed (thp-inspect, smaps,
#    thp_collapse_alloc) and unchanged (the workload's own check); and the
#    capabilities kept are enough for a process of another user.
# 3. `mthpd run`: /proc/PID/status shows only the kept capabilities,
#    NoNewPrivs 1 and Seccomp 2 once READY=1 is sent; passes collapse a
#    matched workload, write the metrics and state files, send sd_notify
#    messages and (with a journald socket in a private mount namespace)
#    journal records; SIGHUP reloads, also to another state file (its
#    lock and probe under the filter); SIGTERM ends it with status 0; and
#    nothing it logs says "Operation not permitted".
. "$(dirname "$0")/lib.sh"
require_all

PEER=$O/tests/integration/notify-peer
[ -x "$PEER" ] || die "$PEER not built (run make)"

# CAP_DAC_READ_SEARCH (2), CAP_SYS_PTRACE (19), CAP_SYS_ADMIN (21),
# CAP_SYS_NICE (23): daemon/sandbox.c keep_caps[], of what this shell has.
KEEP=$(((1 << 2) | (1 << 19) | (1 << 21) | (1 << 23)))
cap() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$2/status"; }
WANT_EFF=$(printf '%016x' $((16#$(cap CapEff self) & KEEP)))
WANT_BND=$(printf '%016x' $((16#$(cap CapBnd self) & KEEP)))

# --- 0. Is the sandbox wired into mthpd?  If not, skip: never pass without it.
"$MTHPD" sandbox-test >"$TMP/st.out" 2>&1
rc=$?
if [ "$rc" = 2 ] && grep -q "unknown command" "$TMP/st.out"; then
	skip "mthpd has no sandbox-test command yet (daemon/main.c)"
fi

# --- 1. sandbox-test
echo "== mthpd sandbox-test (exit $rc)"
sed 's/^/   /' "$TMP/st.out"
[ "$rc" = 0 ] || check_fail "sandbox-test: exit status $rc, expected 0"
grep -q '<-- unexpected' "$TMP/st.out" && check_fail "sandbox-test: unexpected answers (above)"
for call in 'socket(AF_INET, SOCK_STREAM)' 'execve(/bin/true)' 'fork()' 'mmap(PROT_EXEC)'; do
	grep -qxF "refused: $call: EPERM" "$TMP/st.out" || check_fail "sandbox-test: $call not refused with EPERM"
done
grep -qxF "allowed: getpid(): ok" "$TMP/st.out" || check_fail "sandbox-test: getpid() not allowed"
line=$(grep '^sandbox: ' "$TMP/st.out")
for want in "CapEff=$WANT_EFF" "CapPrm=$WANT_EFF" "CapBnd=$WANT_BND" "CapAmb=0000000000000000" \
	"NoNewPrivs=1" "Seccomp=2"; do
	[[ " $line " == *" $want "* ]] || check_fail "sandbox-test: no $want in '$line'"
done

# --- 2. plan and collapse under the sandbox
# sandboxed NAME MTHPD-ARGS...: `mthpd ARGS --json` with MTHPD_SANDBOX=1 into
# $TMP/NAME.json; exit status 0 and proof on stderr that the sandbox was entered.
sandboxed() {
	local name=$1 rc
	shift
	MTHPD_SANDBOX=1 "$MTHPD" "$@" --json >"$TMP/$name.json" 2>"$TMP/$name.err"
	rc=$?
	echo "== $name: MTHPD_SANDBOX=1 mthpd $* --json (exit $rc)"
	sed 's/^/   stderr: /' "$TMP/$name.err"
	if ! grep -q '^mthpd: sandbox: .*Seccomp=2' "$TMP/$name.err"; then
		[ "$rc" = 0 ] && skip "MTHPD_SANDBOX=1 mthpd $1 prints no 'mthpd: sandbox: ... Seccomp=2' line on stderr: daemon/oneshot.c does not enter (or report) the sandbox yet"
	fi
	[ "$rc" = 0 ] || check_fail "$name: exit status $rc, expected 0"
	grep -q 'Operation not permitted' "$TMP/$name.err" && check_fail "$name: EPERM on stderr"
	return 0
}

# same NAME A.json B.json PID-A BASE-A PID-B BASE-B NR: the blocks of two
# runs on two identical workloads are the same, range by range.
same() {
	json_norm "$2" "$4" "$5" "$8" >"$TMP/$1.a"
	json_norm "$3" "$6" "$7" "$8" >"$TMP/$1.b"
	[ -s "$TMP/$1.a" ] || check_fail "$1: no blocks at all"
	expect_diff "$1 (- without the sandbox, + with it)" "$TMP/$1.a" "$TMP/$1.b"
}

PATTERNS=(full half zero empty sparse cow cowhalf mixed16 full nohuge)
wl_start "${PATTERNS[@]}"
P1=$WL_PID B1=$WL_BASE N=$WL_NR
wl_start "${PATTERNS[@]}"
P2=$WL_PID B2=$WL_BASE FD2=$WL_FD
zero_range "$P2" "$B2" 2
NTHP=$((3 + ZERO_FULL))

# plan: the same with and without, also through maps and plain pagemap reads.
for dis in "" "pagemap_scan,procmap_query"; do
	name=plan${dis:+-fallback}
	MTHPD_DISABLE=$dis "$MTHPD" plan --pid "$P1" --json --sizes 2M,64K >"$TMP/$name.ref.json" 2>/dev/null ||
		die "plan without the sandbox failed"
	MTHPD_DISABLE=$dis sandboxed "$name" plan --pid "$P1" --sizes 2M,64K
	json_check "$TMP/$name.json" plan || check_fail "$name: JSON contract"
	same "$name" "$TMP/$name.ref.json" "$TMP/$name.json" "$P1" "$B1" "$P1" "$B1" "$N"
done

# collapse: workload 1 without the sandbox, workload 2 with it.
KNOBS=(--sizes "2M,64K" --max-ptes-none 0 --max-ptes-swap 64 --max-ptes-shared 256)
"$MTHPD" collapse --pid "$P1" --json "${KNOBS[@]}" >"$TMP/collapse.ref.json" 2>/dev/null ||
	die "collapse without the sandbox failed"
alloc0=$(vmstat thp_collapse_alloc)
sandboxed collapse collapse --pid "$P2" "${KNOBS[@]}"
alloc1=$(vmstat thp_collapse_alloc)
json_check "$TMP/collapse.json" collapse || check_fail "collapse: JSON contract"
same collapse "$TMP/collapse.ref.json" "$TMP/collapse.json" "$P1" "$B1" "$P2" "$B2" "$N"
ok=$(jq -r 'select(.order == 9 and .result == "succeeded") | .addr' "$TMP/collapse.json" | wc -l)
# full, cowhalf, full (and zero where it is not the zero page): as
# test-collapse.sh's first case
[ "$ok" = "$NTHP" ] || check_fail "collapse: $ok 2M blocks succeeded, expected $NTHP"
[ $((alloc1 - alloc0)) -ge "$NTHP" ] || check_fail "thp_collapse_alloc grew by $((alloc1 - alloc0)), expected $NTHP or more"
"$INSPECT" "$P1" "$B1" "$N" >"$TMP/inspect.1" || die "thp-inspect failed"
"$INSPECT" "$P2" "$B2" "$N" >"$TMP/inspect.2" || die "thp-inspect failed"
sed 's/^/   sandboxed: /' "$TMP/inspect.2"
diff <(cut -d' ' -f2- "$TMP/inspect.1") <(cut -d' ' -f2- "$TMP/inspect.2") >/dev/null ||
	check_fail "thp-inspect: the folios differ with and without the sandbox"
[ "$(grep -c 'pmd=1 folios=order9x1$' "$TMP/inspect.2")" = "$NTHP" ] || check_fail "thp-inspect: not $NTHP PMD THPs"
kb=$(anon_huge_kb "$P2" "$B2" "$N")
[ "$kb" = $((NTHP * 2048)) ] || check_fail "AnonHugePages of the sandboxed target is $kb kB, expected $((NTHP * 2048))"
v=$(wl_verify "$P2" "$FD2")
[ "$v" = ok ] || check_fail "workload memory after the sandboxed collapse: $v"
echo "workload memory: $v"

# Another user's process: pagemap is 0400 of its owner, and both the
# ptrace-read check and process_madvise apply.
if command -v setpriv >/dev/null; then
	NB=$TMP/nobody
	if ! mkdir "$NB" || ! chmod 0755 "$TMP" "$NB" || ! cp "$WORKLOAD" "$NB/workload"; then
		die "cannot copy the workload to $NB"
	fi
	printf '#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups %s "$@"\n' "$NB/workload" \
		>"$NB/as-nobody" && chmod 0755 "$NB/as-nobody"
	SAVED=$WORKLOAD
	WORKLOAD=$NB/as-nobody
	wl_start full half full
	WORKLOAD=$SAVED
	P3=$WL_PID B3=$WL_BASE N3=$WL_NR FD3=$WL_FD
	echo "pid $P3: uid $(awk '/^Uid:/ { print $2 }' "/proc/$P3/status"), pagemap $(stat -c '%U %a' "/proc/$P3/pagemap")"
	sandboxed nobody collapse --pid "$P3" --sizes 2M --max-ptes-none 0
	n=$(jq -r 'select(.result == "succeeded") | .addr' "$TMP/nobody.json" | wc -l)
	[ "$n" = 2 ] || check_fail "another user's process: $n blocks collapsed, expected 2 ($(jq -r .result "$TMP/nobody.json" | sort | uniq -c | tr '\n' ' '))"
	kb=$(anon_huge_kb "$P3" "$B3" "$N3")
	[ "$kb" = 4096 ] || check_fail "another user's process: AnonHugePages $kb kB, expected 4096"
	v=$(wl_verify "$P3" "$FD3")
	[ "$v" = ok ] || check_fail "another user's process: memory: $v"
else
	echo "no setpriv: the check with another user's process is left out"
fi

# --- 3. mthpd run
SKIP_NOTE=" (parts 1 and 2 passed)" child_cgroups seccomp
A=${CGROUPS[0]}

CONF=$TMP/conf
mkdir -p "$CONF/policy.d"
printf '[Daemon]\nscan_sleep_millisecs=200\nmetrics_file=%s\nstate_file=%s\n' \
	"$TMP/metrics.prom" "$TMP/status" >"$CONF/mthpd.conf"
printf '[Match]\ncgroup=/mthpd-seccomp-*\n[Policy]\nmin_age=0\nsizes=2M\nmax_ptes_none=0\n' >"$CONF/policy.d/50-a.conf"

wl_start full half full
PA=$WL_PID BA=$WL_BASE NA=$WL_NR FDA=$WL_FD
echo "$PA" >"$A/cgroup.procs" || die "cannot move $PA into $A"

# journald: a socket of our own at /run/systemd/journal/socket in a private
# mount namespace, and stderr announced as a journal stream, so that
# log_decision() sends its records with sd_journal_send() as under systemd.
JOURNAL=""
if unshare -m --propagation private true 2>/dev/null; then
	"$PEER" "$TMP/journal" 0 -- sleep 3600 >"$TMP/journal.pid" &
	JPEER=$!
	for ((i = 0; i < 50; i++)); do [ -S "/tmp/mthpd-notify-$JPEER" ] && break; sleep 0.1; done
	[ -S "/tmp/mthpd-notify-$JPEER" ] || die "the journal peer did not start"
	WL_PIDS+=("$(cat "$TMP/journal.pid")")
	JOURNAL=/tmp/mthpd-notify-$JPEER
else
	echo "no private mount namespace (unshare -m): journal records are not checked"
fi

: >"$TMP/run.log"
# shellcheck disable=SC2016 # $0 and $@ belong to the inner shell
WITH_JOURNAL=(unshare -m --propagation private -- sh -c 'mount -t tmpfs mthpd-test /run &&
	mkdir -p /run/systemd/journal && ln -s "$0" /run/systemd/journal/socket && exec "$@"' "$JOURNAL")
# shellcheck disable=SC2094 # run.log is only stat'ed, for its device and inode
exec {PEER_FD}< <(
	if [ -n "$JOURNAL" ]; then
		JOURNAL_STREAM=$(stat -c '%d:%i' "$TMP/run.log") \
			"$PEER" "$TMP/notify" 2000000 -- "${WITH_JOURNAL[@]}" "$MTHPD" run --config-dir "$CONF"
	else
		"$PEER" "$TMP/notify" 2000000 -- "$MTHPD" run --config-dir "$CONF"
	fi 2>>"$TMP/run.log"
	echo "exit $?"
)
read -t "$TIMEOUT" -r DAEMON <&"$PEER_FD" || die "notify-peer did not start"
for ((i = 0; i < 100; i++)); do
	grep -q '^[0-9.]* READY=1$' "$TMP/notify" 2>/dev/null && break
	sleep 0.1
done
grep -q '^[0-9.]* READY=1$' "$TMP/notify" || { cat "$TMP/run.log"; die "no READY=1 from mthpd run"; }
echo "== mthpd run, pid $DAEMON: $(grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' "/proc/$DAEMON/status" | tr -s '\t\n' '  ')"
for k in CapEff CapPrm; do
	[ "$(cap $k "$DAEMON")" = "$WANT_EFF" ] || check_fail "run: $k $(cap $k "$DAEMON"), expected $WANT_EFF"
done
[ "$(cap CapBnd "$DAEMON")" = "$WANT_BND" ] || check_fail "run: CapBnd $(cap CapBnd "$DAEMON"), expected $WANT_BND"
for k in CapInh CapAmb; do
	[ "$(cap $k "$DAEMON")" = 0000000000000000 ] || check_fail "run: $k $(cap $k "$DAEMON"), expected none"
done
[ "$(cap NoNewPrivs "$DAEMON")" = 1 ] || check_fail "run: NoNewPrivs $(cap NoNewPrivs "$DAEMON"), expected 1"
[ "$(cap Seccomp "$DAEMON")" = 2 ] || check_fail "run: Seccomp $(cap Seccomp "$DAEMON"), expected 2 (filter): run.c does not call sandbox_enter()?"

for ((i = 0; i < 100; i++)); do
	[ "$(anon_huge_kb "$PA" "$BA" "$NA")" = 4096 ] && break
	sleep 0.1
done
[ "$(anon_huge_kb "$PA" "$BA" "$NA")" = 4096 ] || check_fail "run: the two full ranges were not collapsed within 10 s"
# The reload moves the state file to one that exists: the probe of what a
# rename over it meets (FS_IOC_GETFLAGS), its lock taken (flock, ftruncate,
# pwrite), the files written (getrandom, renameat) under the filter.
echo old >"$TMP/status2"
printf '[Daemon]\nscan_sleep_millisecs=200\nmetrics_file=%s\nstate_file=%s\n' \
	"$TMP/metrics.prom" "$TMP/status2" >"$CONF/mthpd.conf"
kill -HUP "$DAEMON"
sleep 0.6
grep -q "reloaded" "$TMP/run.log" || check_fail "run: no 'reloaded' after SIGHUP"
grep -q "state_file is now '$TMP/status2'" "$TMP/run.log" || check_fail "run: the reload did not move the state file"
kill -0 "$DAEMON" 2>/dev/null || check_fail "run: the daemon died after SIGHUP"
for ((i = 0; i < 30; i++)); do
	grep -q "^pid $DAEMON\$" "$TMP/status2" && break
	sleep 0.1 # written at least once a second
done
grep -q "^pid $DAEMON\$" "$TMP/status2" || check_fail "run: $TMP/status2 not written after the reload"
grep -q 'mthpd_collapse_alloc_total{policy="50-a.conf",size="2M"} 2$' "$TMP/metrics.prom" ||
	check_fail "run: the metrics file has no collapse_alloc of 2 for 50-a.conf"
"$MTHPD" status --config-dir "$CONF" >"$TMP/status.out" 2>&1 ||
	check_fail "run: mthpd status: $(cat "$TMP/status.out")"
t0=$(date +%s%N)
kill -TERM "$DAEMON"
read -t 5 -r line <&"$PEER_FD"
echo "daemon: $line after SIGTERM, in $((($(date +%s%N) - t0) / 1000000)) ms"
[ "$line" = "exit 0" ] || check_fail "run: ended with '$line', expected exit 0"
DAEMON=""
sed 's/^/   log: /' "$TMP/run.log" | grep -v ': <[56]>pass ' | head -n 20
grep -q 'Operation not permitted' "$TMP/run.log" && check_fail "run: EPERM in the log"
order=$(awk '{ print $2 }' "$TMP/notify" | sed 's/=.*//' | uniq | tr '\n' ' ')
[[ $order =~ ^READY\ STATUS\ .*RELOADING\ .*READY.*STOPPING ]] || check_fail "run: sd_notify messages: $order"
if [ -n "$JOURNAL" ]; then
	n=$(grep -c "MTHPD_PID=$PA\$" "$TMP/journal")
	echo "journal: $(grep -c ' MESSAGE=' "$TMP/journal") records, $n for pid $PA"
	grep -q ' MTHPD_RESULT=succeeded$' "$TMP/journal" || check_fail "run: no journal record MTHPD_RESULT=succeeded"
	[ "$n" -gt 0 ] || check_fail "run: no journal record for pid $PA"
fi
v=$(wl_verify "$PA" "$FDA")
[ "$v" = ok ] || check_fail "run: the workload's memory: $v"
finish
