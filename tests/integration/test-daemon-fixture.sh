#!/bin/bash
# `mthpd run` against a synthetic /proc, /sys and cgroup2 tree (no root
# needed): units matched by policy, unmatched processes never looked at,
# memory pressure (PSI) turning collapsing off and on with one log line
# each, and per-decision records.  With --proc-root the daemon only plans.
# The metrics add up: no family with a total beside its own breakdown, a
# zero counter for a matched unit (issue 25).  Then (issue 18): the version in the log, the metrics and `status`; one
# daemon per configuration and state file (a second exits 2); the state
# file kept fresh between passes a minute apart, and `status` calling a
# stopped daemon's file stale; a process planned while memory pressure held
# collapsing back is logged `held: memory pressure` and visited again as
# soon as the pressure ends, not a minute later.
. "$(dirname "$0")/fixture-lib.sh" dfix

fixture_tree <<'EOT'
khugepaged max_ptes_none=511 max_ptes_swap=64 max_ptes_shared=256
process 100 comm=redis-server
vma 0x7f0000000000-0x7f0000400000 rw-p
range 0x7f0000000000: 512 written
range 0x7f0000200000: 256 written, 256 none
process 200 comm=other
vma 0x7f1000000000-0x7f1000200000 rw-p
range 0x7f1000000000: 512 written
EOT
mkdir -p "$P/pressure"
psi() { echo "some avg10=$1 avg60=0.00 avg300=0.00 total=1" >"$P/pressure/memory"; }
psi 0.00

mkdir -p "$T/conf/policy.d"
cat >"$T/conf/mthpd.conf" <<EOT
[Daemon]
scan_sleep_millisecs=100
psi_threshold=5
metrics_file=$T/metrics.prom
state_file=$T/status
EOT
cat >"$T/conf/policy.d/50-redis.conf" <<'EOT'
[Match]
unit=redis-server.service
[Policy]
sizes=2M
max_ptes_none=0
EOT

"$MTHPD" run --config-dir "$T/conf" --proc-root "$P" --sys-root "$T/tree/sys" 2>"$T/log" &
DAEMON=$!
wait_log() { # PATTERN: up to 5 s
	for ((i = 0; i < 50; i++)); do
		grep -q "$1" "$T/log" && return 0
		sleep 0.1
	done
	return 1
}
wait_log "pass 2:" || fail "no second pass: $(cat "$T/log")"
grep -q "cgroup2 hierarchy at '$T/cg'" "$T/log" || fail "cgroup2 mount not found from mountinfo"
# One record for the process's pass: one 2M block; the half range
# (exceed_none_pte) is no collapse decision and is not counted.
grep -q "pid 100 'redis-server' redis-server.service: dry_run: 2M x1 (policy 50-redis.conf)" "$T/log" ||
	fail "no dry_run record of one 2M block for the matched process"
[ "$(grep -c "pid 100 .*: dry_run" "$T/log")" = 1 ] ||
	fail "a dry run's unchanged plan is logged every pass (want once a minute)"
grep -q "pid 200" "$T/log" && fail "the unmatched process appears in the log"
grep -q 'mthpd_planned_total{policy="50-redis.conf",size="2M"} [1-9]' "$T/metrics.prom" ||
	fail "metrics: nothing planned for 50-redis.conf"
# Numbers that add up (issue 25): no total beside its own breakdown in a
# family, and the matched unit's counter there at 0 before any collapse.
"$(dirname "$0")/prom-check" "$T/metrics.prom" redis-server.service >"$T/prom-check" ||
	fail "metrics: $(cat "$T/prom-check")"

psi 50.00
wait_log "is above psi_threshold" || fail "no log line when pressure rose above psi_threshold"
grep -q "memory pressure some avg10=50.00% is above psi_threshold 5.00%" "$T/log" || fail "backoff line: $(grep pressure "$T/log")"
wait_log "backing_off yes" || true
grep -q "^backing_off yes" "$T/status" || fail "state file does not say backing_off yes"
# the allocation pause is its own line and gauge, not memory pressure (issue 31)
grep -q "^alloc_hold no$" "$T/status" || fail "state file: no 'alloc_hold no' beside backing_off yes"
grep -q "^mthpd_alloc_hold 0$" "$T/metrics.prom" || fail "metrics: no mthpd_alloc_hold 0 gauge"
psi 0.00
wait_log "collapsing resumes" || fail "no log line when pressure fell again"
[ "$(grep -c 'is above psi_threshold' "$T/log")" = 1 ] || fail "the backoff was logged more than once"

V=$("$MTHPD" --version)
case $V in "mthpd "?*) ;; *) fail "--version printed '$V'" ;; esac
V=${V#mthpd }
[ "$("$MTHPD" version)" = "mthpd $V" ] || fail "'mthpd version' differs from --version"
grep -q "started: mthpd $V, 1 policy from" "$T/log" || fail "the start line has no version $V: $(grep started "$T/log")"
grep -qxF "mthpd_build_info{version=\"$V\"} 1" "$T/metrics.prom" || fail "no mthpd_build_info for $V in the metrics"
"$MTHPD" status --config-dir "$T/conf" >"$T/status.out" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "status of a running daemon: exit $rc: $(cat "$T/status.out")"
grep -q "^mthpd is running as pid $DAEMON (version $V; '$T/status' written [0-9.]* s ago)$" "$T/status.out" ||
	fail "status: $(head -1 "$T/status.out")"

# One daemon per configuration and per state file: a second exits 2 with one line.
second() { # NAME CONFIG-DIR EXPECTED-STDERR-PATTERN
	timeout 10 "$MTHPD" run --config-dir "$2" --proc-root "$P" --sys-root "$T/tree/sys" >"$T/$1.out" 2>"$T/$1.err"
	rc=$?
	[ "$rc" = 2 ] || fail "$1: a second mthpd run: exit $rc, expected 2"
	[ "$(wc -l <"$T/$1.err")" = 1 ] || fail "$1: stderr is not one line: $(cat "$T/$1.err")"
	grep -q "$3" "$T/$1.err" || fail "$1: stderr: $(cat "$T/$1.err")"
}
second same-config "$T/conf" "another mthpd with pid $DAEMON already runs with state_file=$T/status"
mkdir -p "$T/conf2/policy.d"
cp "$T/conf/mthpd.conf" "$T/conf2/"
second same-state "$T/conf2" "another mthpd with pid $DAEMON already runs with state_file=$T/status"
grep -q "pass 1:" "$T/same-config.err" "$T/same-state.err" && fail "a refused second daemon made a pass"

kill -TERM "$DAEMON"
wait "$DAEMON"
rc=$?
DAEMON=""
[ "$rc" = 0 ] || fail "exit status $rc after SIGTERM"
grep -q "stopping after" "$T/log" || fail "no stopping line"
sed 's/^/   log: /' "$T/log" | head -20

# Without a state file, the configuration directory's lock still holds.
mkdir -p "$T/conf3/policy.d"
printf '[Daemon]\nscan_sleep_millisecs=100\nstate_file=\nmetrics_file=\n' >"$T/conf3/mthpd.conf"
"$MTHPD" run --config-dir "$T/conf3" --proc-root "$P" --sys-root "$T/tree/sys" 2>"$T/log3" &
DAEMON=$!
for ((i = 0; i < 50; i++)); do grep -q "pass 1:" "$T/log3" && break; sleep 0.1; done
second same-dir "$T/conf3" "another mthpd already runs on the configuration in '$T/conf3'"
kill -TERM "$DAEMON"; wait "$DAEMON"; DAEMON=""

# Passes a minute apart: the state file is still rewritten every second.
sed -i 's/^scan_sleep_millisecs=.*/scan_sleep_millisecs=60000/' "$T/conf/mthpd.conf"
: >"$T/log"
"$MTHPD" run --config-dir "$T/conf" --proc-root "$P" --sys-root "$T/tree/sys" 2>"$T/log" &
DAEMON=$!
wait_log "pass 1:" || fail "no first pass: $(cat "$T/log")"
sleep 3
age() { # of the state file, in ms, by its own written_boottime_usec
	awk -v now="$(awk '{ printf "%.0f", $1 * 1000000 }' /proc/uptime)" \
		'$1 == "written_boottime_usec" { printf "%d", (now - $2) / 1000 }' "$T/status"
}
a=$(age)
echo "state file age 3 s after the first pass of a minute: ${a} ms"
[ -n "$a" ] && [ "$a" -le 1500 ] || fail "state file not rewritten between passes a minute apart: ${a:-?} ms old"
"$MTHPD" status --config-dir "$T/conf" >"$T/status.out" || fail "status between passes: $(cat "$T/status.out")"
# A stopped (or hung) daemon: its file goes stale, status says so and exits 3.
kill -STOP "$DAEMON"
sleep 6
"$MTHPD" status --config-dir "$T/conf" >"$T/status.out" 2>&1
rc=$?
kill -CONT "$DAEMON"
echo "status of a stopped daemon (exit $rc): $(head -1 "$T/status.out")"
[ "$rc" = 3 ] || fail "status of a stopped daemon: exit $rc, expected 3"
grep -q "^mthpd is stale: pid $DAEMON (version $V) last wrote '$T/status' [5-9]\.[0-9] s ago" "$T/status.out" ||
	fail "status of a stopped daemon: $(head -1 "$T/status.out")"
kill -TERM "$DAEMON"; wait "$DAEMON"; DAEMON=""

# Planned under memory pressure: "held: memory pressure", and again at once when it ends.
sed -i 's/^scan_sleep_millisecs=.*/scan_sleep_millisecs=100/' "$T/conf/mthpd.conf"
# A fault count that stays the same: a visit that leaves nothing to do
# makes the process quiet for a minute (mkfixture writes no stat file).
echo "100 (redis-server) S 1 100 100 0 -1 4194560 1500 0 3 0 12 5 0 0 20 0 1 0 4242 1 1" >"$P/100/stat"
psi 50.00
: >"$T/log"
"$MTHPD" run --config-dir "$T/conf" --proc-root "$P" --sys-root "$T/tree/sys" 2>"$T/log" &
DAEMON=$!
wait_log "pid 100 'redis-server' redis-server.service: held: memory pressure: 2M x1 (policy 50-redis.conf)" ||
	fail "no 'held: memory pressure' record: $(grep 'pid 100' "$T/log")"
grep -q "pid 100 .*: dry_run" "$T/log" && fail "a pass held back by pressure is logged as dry_run"
planned() { sed -n 's/^mthpd_planned_total{policy="50-redis.conf",size="2M"} //p' "$T/metrics.prom"; }
sleep 1.2
p1=$(planned)
[ "$p1" = 1 ] || fail "under pressure the process was planned $p1 times, expected once (then quiet)"
psi 0.00
wait_log "collapsing resumes" || fail "no 'collapsing resumes'"
sleep 1.2
p2=$(planned)
echo "planned under pressure: $p1; 1.2 s after it ended: $p2"
[ "$p2" = 2 ] || fail "after the pressure ended the process was planned $p2 times in total, expected 2 (visited again at once)"
kill -TERM "$DAEMON"
wait "$DAEMON"
DAEMON=""
[ "$FAILS" = 0 ] || { echo "$FAILS check(s) failed"; exit 1; }
echo PASS
