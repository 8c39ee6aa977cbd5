#!/bin/bash
# mthpd does not refill, pass after pass, what an allocator gave back.  A
# half-written range collapsed with max_ptes_none 511 gets 256 zero-filled
# pages; the workload then releases them (MADV_DONTNEED, as jemalloc's
# purge does), which splits the THP.  Planned again (after a reload, which
# makes the daemon look at every process at once), the range must not be
# collapsed and filled a second time: it was mthpd's, and it is only
# collapsed again where that adds no memory (refill_backoff).  The full
# range stays huge, the filled pages are counted once (the process's other
# memory, an ASan build's heap, may add its own), the memory is unchanged.
# Then the same with MTHPD_DISABLE=refill_backoff (bench/redis's comparison
# arm): the released range is filled again, and no backoff is counted.
. "$(dirname "$0")/lib.sh"
require_all

child_cgroups refill
A=${CGROUPS[0]}
CONF=$TMP/conf
mkdir -p "$CONF/policy.d"
printf '[Daemon]\nscan_sleep_millisecs=200\nstate_file=%s\nmetrics_file=\n' "$TMP/status" >"$CONF/mthpd.conf"
printf '[Match]\ncgroup=/mthpd-refill-*\n[Policy]\nmin_age=0\nsizes=2M\nmax_ptes_none=511\n' >"$CONF/policy.d/50-a.conf"

# one_case DISABLE: the sequence with MTHPD_DISABLE=DISABLE (empty: the backoff works)
one_case() {
	local P B FD filled filled0 R0 line huge refill n
	rm -f "$TMP/status"
	in_cgroup "$A" half full
	P=$WL_PID B=$WL_BASE FD=$WL_FD
	MTHPD_DISABLE=$1 MTHPD_DEBUG=1 "$MTHPD" run --config-dir "$CONF" 2>"$TMP/run.log" &
	DAEMON=$!
	huge_within "$P" "$B" 2 4096 || die "the two ranges were not collapsed: $(anon_huge_kb "$P" "$B" 2) kB"
	sleep 0.5
	filled=$(sed -n 's/^total .* filled_pages=\([0-9]*\) .*/\1/p' "$TMP/status")
	echo "collapsed: 4096 kB huge, filled_pages=$filled"
	[ "${filled:-0}" -ge 256 ] || check_fail "filled_pages $filled after the first collapse, expected at least 256 (half a range)"
	filled0=$filled
	R0=$(printf '0x%x' $((B)))

	kill -HUP "$P"
	read -t "$TIMEOUT" -r line <&"$FD" || die "no answer from the workload to SIGHUP"
	echo "workload: $line; huge now $(anon_huge_kb "$P" "$B" 2) kB"
	[ "$line" = "released 1" ] || die "workload: '$line', expected 'released 1'"
	[ "$(anon_huge_kb "$P" "$B" 2)" = 2048 ] || die "the released range is still a THP"

	kill -HUP "$DAEMON"
	sleep 3
	grep "$R0\|reloaded" "$TMP/run.log" | sed 's/^/   log: /' | tail -n 6
	huge=$(anon_huge_kb "$P" "$B" 2)
	filled=$(sed -n 's/^total .* filled_pages=\([0-9]*\) .*/\1/p' "$TMP/status")
	refill=$(sed -n 's/^total .* refill_backoff=\([0-9]*\) .*/\1/p' "$TMP/status")
	echo "after the release and 15 passes: $huge kB huge, filled_pages=$filled, refill_backoff=$refill"
	n=$(grep -c "pid $P .*: 2M at $R0: succeeded" "$TMP/run.log")
	if [ -z "$1" ]; then
		[ "$huge" = 2048 ] || check_fail "the released range was collapsed (filled) again: $huge kB huge"
		[ "$filled" = "$filled0" ] || check_fail "filled_pages $filled, expected still $filled0"
		[ "${refill:-0}" -ge 1 ] || check_fail "no refill_backoff counted"
		[ "$n" = 1 ] || check_fail "the half range $R0 was collapsed $n times, expected once"
		grep -q "pid $P .*: 2M at $R0: refill_backoff" "$TMP/run.log" || check_fail "no refill_backoff decision for $R0 in the log"
	else
		[ "$huge" = 4096 ] || check_fail "MTHPD_DISABLE=$1: the released range was not filled again: $huge kB huge"
		[ "$filled" -ge $((filled0 + 256)) ] || check_fail "MTHPD_DISABLE=$1: filled_pages $filled, expected at least $filled0 + 256"
		[ "${refill:-0}" = 0 ] || check_fail "MTHPD_DISABLE=$1: refill_backoff $refill counted"
		[ "$n" = 2 ] || check_fail "MTHPD_DISABLE=$1: the half range $R0 was collapsed $n times, expected twice"
	fi
	memory_ok "$P" "$FD"
	daemon_stop
	wl_kill "$P"
}

one_case ""
one_case refill_backoff
finish
