#!/bin/bash
# Errors are reported per target and by exit status, never by a crash:
# - bad usage and unknown pids exit 2 with a message and collapse nothing;
# - so do a kernel thread, a thread's id (naming its process), a zombie, a
#   pid given twice, mthpd's own pid, a missing configuration directory, a
#   policy whose key hides after its header and a FIFO among the policies
#   (which must not hang);
# - a target killed while `mthpd collapse` works on it makes mthpd finish
#   the other targets and exit 1, with one line on stderr naming the pid.
. "$(dirname "$0")/lib.sh"
require_all

wl_start full full
LIVE=$WL_PID LIVE_B=$WL_BASE LIVE_N=$WL_NR LIVE_FD=$WL_FD

# A pid that exists no more: a workload killed and reaped.
wl_start empty
DEAD=$WL_PID
wl_kill "$DEAD"
[ -e "/proc/$DEAD" ] && die "pid $DEAD still exists after being reaped"
# One that does not exist (pid_max is at most 4194304).
NOPID=999999
[ -e "/proc/$NOPID" ] && NOPID=4999999

# usage NAME [one-line] -- MTHPD-ARGS...: expects exit 2, a message on stderr
# (exactly one line if asked), nothing on stdout.
usage() {
	local name=$1 one=0 rc
	shift
	if [ "$1" = one-line ]; then
		one=1
		shift
	fi
	shift # --
	"$MTHPD" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	echo "== $name: mthpd $* (exit $rc)"
	sed 's/^/   stderr: /' "$TMP/err"
	[ "$rc" = 2 ] || check_fail "$name: exit status $rc, expected 2"
	[ -s "$TMP/err" ] || check_fail "$name: nothing on stderr"
	if [ "$one" = 1 ] && [ "$(wc -l <"$TMP/err")" != 1 ]; then
		check_fail "$name: $(wc -l <"$TMP/err") lines on stderr, expected 1"
	fi
	[ -s "$TMP/out" ] && check_fail "$name: stdout not empty: $(head -c 300 "$TMP/out")"
	return 0
}

usage no-such-pid-plan one-line -- plan --pid "$NOPID"
grep -q "$NOPID" "$TMP/err" || check_fail "no-such-pid-plan: stderr does not name pid $NOPID"
usage no-such-pid-collapse one-line -- collapse --pid "$NOPID" --json
grep -q "$NOPID" "$TMP/err" || check_fail "no-such-pid-collapse: stderr does not name pid $NOPID"
usage size-3K -- collapse --pid "$LIVE" --sizes 3K
usage size-4M -- collapse --pid "$LIVE" --sizes 4M
usage size-8K -- collapse --pid "$LIVE" --sizes 8K
usage size-empty-item -- collapse --pid "$LIVE" --sizes 64K,
usage none-600 -- collapse --pid "$LIVE" --max-ptes-none 600
usage none-512 -- collapse --pid "$LIVE" --max-ptes-none 512
usage swap-negative -- collapse --pid "$LIVE" --max-ptes-swap -1
usage shared-not-a-number -- collapse --pid "$LIVE" --max-ptes-shared abc
usage none-trailing-junk -- collapse --pid "$LIVE" --max-ptes-none 5x
usage unknown-option -- collapse --pid "$LIVE" --frobnicate
usage unknown-command -- frobnicate --pid "$LIVE"
usage no-command --
usage no-pid -- collapse --json
usage pid-not-a-number -- collapse --pid abc
# issue 10: each with a one-line error naming the real problem
usage kernel-thread one-line -- plan --pid 2
grep -q "process 2 is a kernel thread" "$TMP/err" || check_fail "kernel-thread: $(cat "$TMP/err")"
usage pid-twice one-line -- collapse --pid "$LIVE" --pid "$LIVE"
grep -q -- "--pid $LIVE is given twice" "$TMP/err" || check_fail "pid-twice: $(cat "$TMP/err")"
usage size-that-would-wrap -- collapse --pid "$LIVE" --sizes 17592186044418M
# issue 25.8: a thread's id is refused, naming its process; a zombie is named as one
if perl -Mthreads -e 1 2>/dev/null; then
	perl -Mthreads -e 'threads->create(sub { sleep 600 })->detach; sleep 600' &
	THREADED=$!
	WL_PIDS+=("$THREADED")
	for ((i = 0; i < 50; i++)); do
		TID=$(ls "/proc/$THREADED/task" 2>/dev/null | grep -vx "$THREADED" | head -1)
		[ -n "$TID" ] && break
		sleep 0.1
	done
	[ -n "$TID" ] || die "perl started no thread in pid $THREADED"
	usage thread one-line -- plan --pid "$TID"
	grep -q -- "--pid $TID is a thread of process $THREADED: give --pid $THREADED" "$TMP/err" ||
		check_fail "thread: $(cat "$TMP/err")"
	usage thread-and-process one-line -- plan --pid "$TID" --pid "$THREADED"
	grep -q -- "--pid $TID is a thread of process $THREADED" "$TMP/err" ||
		check_fail "thread-and-process: $(cat "$TMP/err")"
else
	echo "== thread: perl has no threads here, not checked"
fi
# a child that exits and is never reaped: its parent execs sleep, which does not wait
( sleep 0.1 & exec sleep 600 ) &
REAPER=$!
WL_PIDS+=("$REAPER")
ZOMBIE=""
for ((i = 0; i < 50; i++)); do
	ZOMBIE=$(ps -o pid= -o stat= --ppid "$REAPER" | awk '$2 ~ /^Z/ { print $1 }')
	[ -n "$ZOMBIE" ] && break
	sleep 0.1
done
[ -n "$ZOMBIE" ] || die "no zombie child of pid $REAPER"
usage zombie one-line -- collapse --pid "$ZOMBIE"
grep -q "process $ZOMBIE is a zombie: it exited and its parent $REAPER has not reaped it yet" "$TMP/err" ||
	check_fail "zombie: $(cat "$TMP/err")"
"$MTHPD" check-config --config-dir /nonexistent/mthpd >"$TMP/out" 2>"$TMP/err"
rc=$?
echo "== missing config dir: exit $rc: $(cat "$TMP/err")"
[ "$rc" = 2 ] && grep -q "no such configuration directory" "$TMP/err" ||
	check_fail "check-config of a missing directory: exit $rc, $(cat "$TMP/err" "$TMP/out")"
sh -c 'exec "$0" collapse --pid $$' "$MTHPD" >"$TMP/out" 2>"$TMP/err"
rc=$?
echo "== own pid: exit $rc: $(cat "$TMP/err")"
[ "$rc" = 2 ] && grep -q "is mthpd itself" "$TMP/err" || check_fail "collapse of mthpd's own pid: exit $rc"

# A policy meant as an opt-out, written on one line, must not become an
# opt-in: check-config and run refuse it, and nothing is collapsed.
BADCONF=$TMP/badconf
mkdir -p "$BADCONF/policy.d"
printf '[Match]
comm=workload
[Policy] enabled=no
' >"$BADCONF/policy.d/10-off.conf"
"$MTHPD" check-config --config-dir "$BADCONF" >"$TMP/out" 2>"$TMP/err"
rc=$?
echo "== '[Policy] enabled=no' on one line: exit $rc: $(cat "$TMP/err")"
[ "$rc" = 2 ] && grep -q "10-off.conf:3: text after \[Policy\]: 'enabled=no'" "$TMP/err" ||
	check_fail "check-config accepted '[Policy] enabled=no' (exit $rc)"
timeout 10 "$MTHPD" run --config-dir "$BADCONF" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$rc" = 2 ] || check_fail "run started with '[Policy] enabled=no' (exit $rc): $(tail -2 "$TMP/err")"
# A FIFO among the policies: refused at once, not waited on.
rm "$BADCONF/policy.d/10-off.conf"
mkfifo "$BADCONF/policy.d/20-fifo.conf"
timeout 10 "$MTHPD" check-config --config-dir "$BADCONF" >"$TMP/out" 2>"$TMP/err"
rc=$?
echo "== a FIFO in policy.d: exit $rc: $(cat "$TMP/err")"
[ "$rc" = 2 ] && grep -q "20-fifo.conf: not a regular file (a FIFO)" "$TMP/err" ||
	check_fail "check-config with a FIFO in policy.d: exit $rc (124: it hung)"

# A live pid with a dead one: refused as a whole, the live one untouched.
"$MTHPD" collapse --pid "$LIVE" --pid "$DEAD" --json --max-ptes-none 0 >"$TMP/out" 2>"$TMP/err"
rc=$?
echo "== live+dead: mthpd collapse --pid $LIVE --pid $DEAD (exit $rc)"
sed 's/^/   stderr: /' "$TMP/err"
[ "$rc" = 2 ] || check_fail "live+dead: exit status $rc, expected 2"
grep -qw "$DEAD" "$TMP/err" || check_fail "live+dead: stderr does not name pid $DEAD"
grep -q '"result":"succeeded"' "$TMP/out" && check_fail "live+dead: something was collapsed: $(cat "$TMP/out")"

"$INSPECT" "$LIVE" "$LIVE_B" "$LIVE_N" >"$TMP/inspect" || die "thp-inspect failed"
grep -q 'pmd=1' "$TMP/inspect" && check_fail "usage errors collapsed memory of pid $LIVE: $(cat "$TMP/inspect")"
[ "$(anon_huge_kb "$LIVE" "$LIVE_B" "$LIVE_N")" = 0 ] || check_fail "AnonHugePages of pid $LIVE grew after usage errors"

# A target killed mid-run.  400 full ranges take mthpd about a second to
# collapse; the target is killed as soon as its first THP appears.
pats=()
for ((i = 0; i < 400; i++)); do pats+=(full); done
wl_start "${pats[@]}"
DYING=$WL_PID
echo "dying workload $DYING: $WL_NR ranges at $WL_BASE"

"$MTHPD" collapse --pid "$DYING" --pid "$LIVE" --json --sizes 2M --max-ptes-none 0 \
	>"$TMP/out" 2>"$TMP/err" &
M=$!
killed=0
for ((i = 0; i < 3000; i++)); do
	kill -0 "$M" 2>/dev/null || break
	kb=0
	while read -r k v _; do
		[ "$k" = AnonHugePages: ] && kb=$v
	done <"/proc/$DYING/smaps_rollup"
	if [ "$kb" -gt 0 ]; then
		kill -0 "$M" 2>/dev/null && killed=1
		wl_kill "$DYING"
		break
	fi
	sleep 0.01
done
wait "$M"
rc=$?
echo "== dying: mthpd collapse --pid $DYING --pid $LIVE (exit $rc; target killed mid-run: $killed)"
sed 's/^/   stderr: /' "$TMP/err"
jq -r '"pid \(.pid) result \(.result)"' "$TMP/out" 2>/dev/null | sort | uniq -c
if [ "$killed" = 1 ]; then
	[ "$rc" = 1 ] || check_fail "dying: exit status $rc, expected 1 (a status above 128 is a signal)"
	n=$(grep -cw "$DYING" "$TMP/err")
	[ "$n" = 1 ] || check_fail "dying: $n lines on stderr name pid $DYING, expected 1"
else
	wl_kill "$DYING"
fi
grep -Eq 'AddressSanitizer|runtime error|LeakSanitizer' "$TMP/err" && check_fail "dying: sanitizer report"
json_check "$TMP/out" collapse || check_fail "dying: JSON contract"

# The other target was processed all the same.
"$INSPECT" "$LIVE" "$LIVE_B" "$LIVE_N" >"$TMP/inspect" || die "thp-inspect failed"
cat "$TMP/inspect"
[ "$(grep -c 'pmd=1 folios=order9x1$' "$TMP/inspect")" = 2 ] ||
	check_fail "pid $LIVE was not collapsed after pid $DYING died"
v=$(wl_verify "$LIVE" "$LIVE_FD")
[ "$v" = ok ] || check_fail "workload $LIVE memory: $v"
echo "workload $LIVE memory: $v"

[ "$killed" = 1 ] || [ "$FAILS" -gt 0 ] ||
	skip "mthpd finished before the target could be killed mid-run; the other checks passed"
finish
