#!/bin/bash
# `mthpd status` believes a state file only when the process that wrote it
# is still that process (pid, comm, start time, boot id) and wrote it in
# the last few seconds; state files written here by hand, for a reused pid
# (pid 1), a pid that is gone, another boot, a stale and a fresh file of
# this very shell.  And check-config and run on a state_file or
# metrics_file that cannot be written: the state file is refused (exit 2,
# one line naming key and path), the metrics warned about.  `status --json`
# on the same files (valid JSON, checked with jq; the same exit statuses,
# rows and filters as the text).  No root needed.
set -u
O=${O:-build}
MTHPD=$O/mthpd
T=$(mktemp -d "${TMPDIR:-/tmp}/mthpd-status.XXXXXX")
trap 'rm -rf "$T"' EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
[ -x "$MTHPD" ] || { echo "FAIL: $MTHPD not built"; exit 1; }
[ -r /proc/sys/kernel/random/boot_id ] || { echo "SKIP: no /proc/sys/kernel/random/boot_id"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: no jq (apt-get install jq)"; exit 77; }

mkdir -p "$T/conf/policy.d"
printf '[Daemon]\nstate_file=%s/status\nmetrics_file=\n' "$T" >"$T/conf/mthpd.conf"
BOOT=$(cat /proc/sys/kernel/random/boot_id)

# ident PID: sets COMM and START from /proc/PID/stat (field 22).
ident() {
	local s rest
	s=$(cat "/proc/$1/stat")
	COMM=${s#*(}
	COMM=${COMM%)*}
	rest=${s##*) }
	# shellcheck disable=SC2086  # fields, split on purpose
	set -- $rest
	START=${20}
}
# state PID COMM START BOOT AGE-SECONDS: a state file as the daemon writes it.
state() {
	local now
	now=$(awk '{ printf "%.0f", $1 * 1000000 }' /proc/uptime)
	printf 'pid %s\nversion test\ncomm %s\nstart_time %s\nboot_id %s\nwritten_boottime_usec %s\npasses_total 7\n' \
		"$1" "$2" "$3" "$4" "$((now - $5 * 1000000))" >"$T/status"
}
# expect NAME RC PATTERN [STATUS]: mthpd status exits RC and its first line
# matches PATTERN; with --json the same exit status, one valid JSON object
# whose daemon.message is that line and daemon.status STATUS (default
# not_running for an RC of 3, running for 0).
expect() {
	local want=${4:-}
	"$MTHPD" status --config-dir "$T/conf" >"$T/out" 2>&1
	rc=$?
	echo "== $1: exit $rc: $(head -1 "$T/out")"
	[ "$rc" = "$2" ] || fail "$1: exit $rc, expected $2"
	head -1 "$T/out" | grep -q "$3" || fail "$1: first line does not match '$3'"
	[ -n "$want" ] || { [ "$2" = 0 ] && want=running; } || want=not_running
	"$MTHPD" status --json --config-dir "$T/conf" >"$T/json" 2>"$T/json.err"
	rc=$?
	[ "$rc" = "$2" ] || fail "$1: --json: exit $rc, expected $2"
	[ -s "$T/json.err" ] && fail "$1: --json wrote on stderr: $(cat "$T/json.err")"
	[ "$(wc -l <"$T/json")" = 1 ] || fail "$1: --json: not one line"
	jq -e --arg s "$want" --arg f "$T/status" \
		'.schema_version == 1 and .state_file == $f and .daemon.status == $s' "$T/json" >/dev/null ||
		fail "$1: --json: not valid, or not schema 1 with daemon.status $want: $(cat "$T/json")"
	# the message as the text's first line; the text escapes control bytes
	# (and the file's age has moved on)
	[ "$(jq -r .daemon.message "$T/json" | sed 's/\x1b/\\x1b/g; s/[0-9.]* s ago/N s ago/')" = \
		"$(head -1 "$T/out" | sed 's/[0-9.]* s ago/N s ago/')" ] ||
		fail "$1: --json: daemon.message is not the text's first line: $(jq .daemon.message "$T/json")"
}

ident $$
state $$ "$COMM" "$START" "$BOOT" 0
expect fresh 0 "^mthpd is running as pid $$ (version test; '$T/status' written [0-9.]* s ago)$"
grep -qx "passes_total 7" "$T/out" || fail "fresh: the state file's lines are not shown"
# the coverage lines: words as the daemon writes them (blanks, controls and
# '\' as \xHH); a unit shown as systemctl shows it, a comm's ESC escaped
# and its blank a blank, a policy file with a blank in its name
# shellcheck disable=SC2016 # the backslashes are the file's
cat >>"$T/status" <<'EOT'
policy 50\x20a.conf processes=1 thp_disabled=0 vmas_refused=0 anon_bytes=4194304 huge_bytes=2097152 huge_percent=50.0 partial_bytes=0 collapsed_last_pass_bytes=0 collapsed_bytes_total=2097152
unit 50\x20a.conf foo\x5cx20bar.service processes=1 anon_bytes=4194304 huge_bytes=2097152 huge_percent=50.0 collapsed_last_pass_bytes=0 collapsed_bytes_total=2097152 last_result=succeeded reason=-
process 4242 \x1b[31mred\x20x 50\x20a.conf foo\x5cx20bar.service anon_bytes=4194304 huge_bytes=2097152 huge_percent=50.0 collapsed_last_pass_bytes=0 collapsed_bytes_total=2097152 last_result=succeeded reason=-
EOT
expect "fresh, with services" 0 "^mthpd is running as pid $$"
sed -n '/^policy/,$p' "$T/out" | sed 's/^/   /'
grep -q "^policy 50 a.conf: 1 process " "$T/out" || fail "status: the policy's name is not decoded"
grep -qF '  foo\x20bar.service ' "$T/out" || fail 'status: the unit is not shown as systemctl shows it (foo\x20bar.service)'
grep -qF '    4242     \x1b[31mred x   ' "$T/out" || fail "status: the comm is not shown escaped, with its blank"
! grep -qF 'x5c' "$T/out" || fail 'status: a \x5c is shown'
! LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$T/out" || fail "status: a raw control byte"
# the same as JSON: the names decoded, exactly their bytes, as JSON strings
"$MTHPD" status --json --config-dir "$T/conf" >"$T/json" || fail "status --json: exit $?"
jq -c '.policies' "$T/json" | sed 's/^/   json: /'
jq -e '.policies[0] | .name == "50 a.conf" and .process_count == 1 and .anon_bytes == 4194304 and .huge_percent == 50.0' "$T/json" >/dev/null ||
	fail "status --json: the policy"
jq -e '.policies[0].units[0] | .name == "foo\\x20bar.service" and .last_result == "succeeded" and .why_not == []' "$T/json" >/dev/null ||
	fail "status --json: the unit"
jq -e '.policies[0].units[0].processes[0] | .pid == 4242 and .comm == "\u001b[31mred x" and .huge_bytes == 2097152' "$T/json" >/dev/null ||
	fail "status --json: the process (its comm with ESC and a blank)"
jq -e '.passes_total == 7 and .daemon.version == "test" and .daemon.pid == '$$' and (.daemon.state_age_seconds | . >= 0 and . < 5)' "$T/json" >/dev/null ||
	fail "status --json: the daemon's lines"
! LC_ALL=C grep -q $'[\x01-\x1f\x7f]' "$T/json" || fail "status --json: a raw control byte"
# a state file a hostile writer could not make, yet damaged: still valid JSON
cp "$T/status" "$T/status.good"
printf 'policy x\x22\x5c processes=zz huge_percent=nan anon_bytes=-1 reason=a,b\nunit x\x22\x5c u"\\ last_result=\x01 reason=c"d,\nprocess 9 \x00 x\x22\x5c u"\\ anon_bytes=1\ntotal ranges=x 2M:planned=1,=2,q=3\n' >>"$T/status"
"$MTHPD" status --json --limit 0 --config-dir "$T/conf" >"$T/json"
jq -e '.policies[1].name == "x\"\\" and .policies[1].huge_percent == null' "$T/json" >/dev/null ||
	fail "status --json on damaged lines: $(cat "$T/json")"
cp "$T/status.good" "$T/status"
# a node with many units (issue 28, part 4): the largest first, --limit,
# --unit, --policy; the rest of a list said in one line
ident $$
state $$ "$COMM" "$START" "$BOOT" 0
{
	echo "policy big.conf processes=5 thp_disabled=0 vmas_refused=0 anon_bytes=14680064 huge_bytes=4194304 huge_percent=28.6 partial_bytes=0 collapsed_last_pass_bytes=0 collapsed_bytes_total=0"
	echo "policy small.conf processes=1 thp_disabled=0 vmas_refused=0 anon_bytes=2097152 huge_bytes=0 huge_percent=0.0 partial_bytes=0 collapsed_last_pass_bytes=0 collapsed_bytes_total=0"
	for u in a.service:2097152:0 b.service:8388608:4194304 c.service:4194304:0; do
		IFS=: read -r name anon huge <<<"$u"
		echo "unit big.conf $name processes=1 anon_bytes=$anon huge_bytes=$huge huge_percent=0.0 collapsed_last_pass_bytes=0 collapsed_bytes_total=0 last_result=none reason=-"
	done
	echo "unit small.conf d.service processes=1 anon_bytes=2097152 huge_bytes=0 huge_percent=0.0 collapsed_last_pass_bytes=0 collapsed_bytes_total=0 last_result=none reason=-"
	for p in 11:4194304 12:2097152 13:2097152; do
		echo "process ${p%:*} w${p%:*} big.conf b.service anon_bytes=${p#*:} huge_bytes=0 huge_percent=0.0 collapsed_last_pass_bytes=0 collapsed_bytes_total=0 last_result=none reason=-"
	done
} >>"$T/status"
# status_rows ARGS...: the unit and process rows of `mthpd status ARGS`, first word each
status_rows() {
	"$MTHPD" status --config-dir "$T/conf" "$@" | awk '/^  [^ (]/ && $1 != "UNIT" { print $1 } /^    [0-9]/ { print $1 } /^  \(|^    \(/ { print }' | paste -sd' '
}
got=$(status_rows)
[ "$got" = "b.service 11 12 13 c.service a.service d.service" ] || fail "status: not the largest unit first: '$got'"
got=$(status_rows --limit 1)
[ "$got" = "b.service 11     (2 more processes of this unit: --limit 0 shows every one)   (2 more units, anon 6.00 MiB, huge 0 B: --limit 0 shows every one, --unit GLOB some) d.service" ] ||
	fail "status --limit 1: '$got'"
got=$(status_rows --unit '[ad].service')
[ "$got" = "a.service d.service" ] || fail "status --unit: '$got'"
got=$(status_rows --policy small.conf)
[ "$got" = "d.service" ] || fail "status --policy: '$got'"
# json_rows ARGS...: the same rows of `mthpd status --json ARGS`, and what was left out
json_rows() {
	"$MTHPD" status --json --config-dir "$T/conf" "$@" |
		jq -r '.policies[] | (.units[] | .name, (.processes[] | .pid), (select(.processes_omitted > 0) | "+\(.processes_omitted)p")),
			(select(.units_omitted > 0) | "+\(.units_omitted)u \(.units_omitted_anon_bytes)")' | paste -sd' '
}
got=$(json_rows)
[ "$got" = "b.service 11 12 13 c.service a.service d.service" ] || fail "status --json: not the rows of the text: '$got'"
got=$(json_rows --limit 1)
[ "$got" = "b.service 11 +2p +2u 6291456 d.service" ] || fail "status --json --limit 1: '$got'"
got=$(json_rows --unit '[ad].service')
[ "$got" = "a.service d.service" ] || fail "status --json --unit: '$got'"
got=$(json_rows --policy small.conf)
[ "$got" = "d.service" ] || fail "status --json --policy: '$got'"
got=$("$MTHPD" status --json --config-dir "$T/conf" --unit 'x*' | jq -c .policies)
[ "$got" = "[]" ] || fail "status --json --unit that matches nothing: '$got'"
got=$("$MTHPD" status --json --config-dir "$T/conf" | jq -c '[.policies[] | {name, process_count, unit_count, anon_bytes, huge_bytes}]')
[ "$got" = '[{"name":"big.conf","process_count":5,"unit_count":3,"anon_bytes":14680064,"huge_bytes":4194304},{"name":"small.conf","process_count":1,"unit_count":1,"anon_bytes":2097152,"huge_bytes":0}]' ] ||
	fail "status --json: the policies: '$got'"
out=$("$MTHPD" check-config --config-dir "$T/conf" --json 2>&1)
[ $? = 2 ] && [ "$out" = "mthpd: --json is an option of status, not of check-config" ] || fail "check-config --json: '$out'"
"$MTHPD" status --config-dir "$T/conf" --unit 'x*' | grep -q '^policy' && fail "status --unit that matches nothing shows a policy"
out=$("$MTHPD" status --config-dir "$T/conf" --limit x 2>&1)
[ $? = 2 ] && [ "$out" = "mthpd: --limit 'x' is not a number from 0 to 1000000" ] || fail "status --limit x: '$out'"
out=$("$MTHPD" check-config --config-dir "$T/conf" --unit a 2>&1)
[ $? = 2 ] && [ "$out" = "mthpd: --unit is an option of status and top, not of check-config" ] || fail "check-config --unit: '$out'"
out=$("$MTHPD" status --config-dir "$T/conf" --interval 1 2>&1)
[ $? = 2 ] && [ "$out" = "mthpd: --interval is an option of top, not of status" ] || fail "status --interval: '$out'"
out=$("$MTHPD" top --config-dir "$T/conf" --json 2>&1)
[ $? = 2 ] && [ "$out" = "mthpd: --json is an option of status, not of top" ] || fail "top --json: '$out'"
out=$("$MTHPD" top --config-dir "$T/conf" --interval 0 2>&1)
[ $? = 2 ] && [ "$out" = "mthpd: --interval '0' is not a number of seconds from 0.1 to 3600" ] || fail "top --interval 0: '$out'"

state $$ "$COMM" "$START" "$BOOT" 10
expect stale 3 "^mthpd is stale: pid $$ (version test) last wrote '$T/status' 1[0-9]\.[0-9] s ago" stale
jq -e '.passes_total == 7 and (.daemon.state_age_seconds | . >= 10)' "$T/json" >/dev/null || fail "stale: --json without the file's lines: $(cat "$T/json")"

ident 1
state 1 mthpd "$((START + 12345))" "$BOOT" 0
expect "reused pid (start time)" 3 "^mthpd is not running (pid 1 is now '$COMM', not the mthpd that wrote '$T/status')$"
if [ "$COMM" != mthpd ]; then
	state 1 mthpd "$START" "$BOOT" 0
	expect "reused pid (comm)" 3 "^mthpd is not running (pid 1 is now '$COMM', not the mthpd that wrote"
fi

# a reused pid whose process named itself with ESC: the name escaped
WORKLOAD=$O/tests/integration/workload
if [ -x "$WORKLOAD" ]; then
	"$WORKLOAD" --comm $'\e[31mevil' empty >/dev/null &
	W=$!
	sleep 0.3
	ident "$W"
	state "$W" mthpd "$((START + 1))" "$BOOT" 0
	expect "reused pid, a comm with ESC" 3 "^mthpd is not running (pid $W is now '\\\\x1b\\[31mevil', not the mthpd"
	kill "$W"
	wait "$W" 2>/dev/null
fi

ident $$
state $$ "$COMM" "$START" 00000000-0000-0000-0000-000000000000 0
expect "another boot" 3 "^mthpd is not running ('$T/status' was written before the last boot)$"

sleep 0 &
GONE=$!
wait "$GONE"
state "$GONE" mthpd 1 "$BOOT" 0
expect "pid gone" 3 "^mthpd is not running (pid $GONE in '$T/status' is gone)$"

printf 'pid %s\npasses_total 3\n' $$ >"$T/status"
expect "no identity (older mthpd)" 3 "^mthpd is not running, or cannot be told apart"
printf 'passes_total 3\n' >"$T/status"
expect "not a state file" 3 "^mthpd: '$T/status' is not an mthpd state file$" invalid
rm "$T/status"
expect "no state file" 3 "^mthpd is not running (no state file"

# state_file= empty: nothing to read, said as such (exit 2), not "no state file ''"
mkdir -p "$T/nostate/policy.d"
printf '[Daemon]\nstate_file=\nmetrics_file=\n' >"$T/nostate/mthpd.conf"
"$MTHPD" status --config-dir "$T/nostate" >"$T/out" 2>&1
rc=$?
echo "== state_file= empty: exit $rc: $(cat "$T/out")"
[ "$rc" = 2 ] || fail "state_file= empty: exit $rc, expected 2"
"$MTHPD" status --json --config-dir "$T/nostate" >"$T/json" 2>"$T/json.err"
rc=$?
[ "$rc" = 2 ] && [ ! -s "$T/json" ] && cmp -s "$T/out" "$T/json.err" ||
	fail "state_file= empty, --json: exit $rc, not the same one line on stderr"
grep -qx "mthpd: status has nothing to read: the state file is disabled in the configuration (state_file= is empty in $T/nostate/mthpd.conf)" "$T/out" ||
	fail "state_file= empty: not said as such"

# Files that cannot be written: a directory that is a regular file, one that does not exist.
: >"$T/afile"
# conf DIR STATE METRICS
conf() {
	mkdir -p "$T/$1/policy.d"
	printf '[Daemon]\nstate_file=%s\nmetrics_file=%s\n' "$2" "$3" >"$T/$1/mthpd.conf"
}
# run_check NAME DIR RC PATTERN [run]: check-config (or run) exits RC, stderr matches.
run_check() {
	local cmd=${5:-check-config}
	timeout 10 "$MTHPD" "$cmd" --config-dir "$T/$2" >"$T/out" 2>"$T/err"
	rc=$?
	echo "== $1: mthpd $cmd: exit $rc: $(cat "$T/err")"
	[ "$rc" = "$3" ] || fail "$1: exit $rc, expected $3"
	grep -q "$4" "$T/err" || fail "$1: stderr does not match '$4'"
	if [ "$3" = 2 ] && [ "$(wc -l <"$T/err")" != 1 ]; then fail "$1: stderr is not one line"; fi
}
conf c1 "$T/afile/status" ""
run_check "state_file below a file" c1 2 "^mthpd: state_file=$T/afile/status: cannot write files in '$T/afile': Not a directory$"
run_check "state_file below a file" c1 2 "state_file=$T/afile/status: " run
conf c2 "$T/status" "$T/afile/metrics.prom"
run_check "metrics_file below a file" c2 0 "^mthpd: warning: metrics_file=$T/afile/metrics.prom: cannot write files in '$T/afile': Not a directory$"
conf c3 "$T/nodir/status" ""
run_check "state_file in a missing directory" c3 0 "note: state_file=$T/nodir/status: directory '$T/nodir' does not exist"
run_check "state_file in a missing directory" c3 2 "state_file=$T/nodir/status: " run
ls "$T"/*.probe-* "$T"/status.probe* 2>/dev/null && fail "probe files left behind"

[ "$FAILS" = 0 ] || { echo "$FAILS check(s) failed"; exit 1; }
echo PASS
