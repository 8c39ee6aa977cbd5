#!/bin/bash
# Issue 25.4: signals that mean nothing to the daemon do not end it.  On a
# synthetic tree (no root needed, nothing collapsed), `mthpd run` is sent
# SIGUSR2, SIGPIPE, SIGALRM and the other signals whose default action
# would end a process; it must still be running and answering afterwards,
# say each ignored signal once, and log the last pass's status line on
# SIGUSR1.  SIGTERM still stops it with exit 0.
. "$(dirname "$0")/fixture-lib.sh" signals

fixture_tree <<'EOT'
khugepaged max_ptes_none=511 max_ptes_swap=64 max_ptes_shared=256
process 100 comm=redis-server
vma 0x7f0000000000-0x7f0000200000 rw-p
range 0x7f0000000000: 512 written
EOT

C=$T/conf
mkdir -p "$C/policy.d"
printf '[Daemon]\nscan_sleep_millisecs=100\nmetrics_file=\nstate_file=%s/status\n' "$T" >"$C/mthpd.conf"
printf '[Match]\nunit=redis-server.service\n[Policy]\nsizes=2M\n' >"$C/policy.d/50-redis.conf"

"$MTHPD" run --config-dir "$C" --proc-root "$P" --sys-root "$T/tree/sys" 2>"$T/log" &
DAEMON=$!
# until the first pass has been written (5 s at most)
for ((i = 0; i < 50; i++)); do
	grep -q "^passes_total [1-9]" "$T/status" 2>/dev/null && break
	sleep 0.1
done
grep -q "^passes_total [1-9]" "$T/status" 2>/dev/null || fail "no pass written: $(cat "$T/log")"

for sig in USR2 PIPE ALRM VTALRM PROF IO PWR STKFLT XFSZ USR2 ALRM; do
	kill -s "$sig" "$DAEMON" 2>/dev/null || fail "could not send SIG$sig"
	sleep 0.1
	kill -0 "$DAEMON" 2>/dev/null || {
		wait "$DAEMON"
		fail "SIG$sig ended mthpd run (exit $?)"
		DAEMON=""
		break
	}
done
if [ -n "$DAEMON" ]; then
	for sig in USR2 PIPE ALRM XFSZ; do
		n=$(grep -c "ignoring SIG$sig from pid $$ (said once)" "$T/log")
		[ "$n" = 1 ] || fail "SIG$sig is logged $n times, expected once"
	done
	kill -s USR1 "$DAEMON"
	for ((i = 0; i < 30; i++)); do
		grep -q "SIGUSR1 from pid $$: pass [0-9]*: 1 of 1 processes matched" "$T/log" && break
		sleep 0.1
	done
	grep -q "SIGUSR1 from pid $$: pass [0-9]*: 1 of 1 processes matched.* ([0-9.]* s ago)$" "$T/log" ||
		fail "SIGUSR1 logged no status line: $(grep SIGUSR1 "$T/log")"
	# still at work: the state file is rewritten after the signals
	before=$(grep "^written_boottime_usec" "$T/status")
	sleep 1.5
	[ "$(grep "^written_boottime_usec" "$T/status")" != "$before" ] ||
		fail "the state file is not rewritten any more after the signals"
	kill -TERM "$DAEMON"
	wait "$DAEMON"
	rc=$?
	DAEMON=""
	[ "$rc" = 0 ] || fail "mthpd run exited $rc after SIGTERM"
fi
grep -E "SIG" "$T/log" | sed 's/^/   log: /'
[ "$FAILS" = 0 ] || exit 1
echo PASS
