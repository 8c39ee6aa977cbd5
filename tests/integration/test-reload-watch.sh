#!/bin/bash
# Issue 20.2: the policies reload when their files change, without SIGHUP,
# as configuration management and Kubernetes change them (a synthetic
# /proc, /sys and cgroup2 tree: no root needed, nothing is collapsed):
# - a new policy file is used within a few seconds;
# - an invalid one is refused with its file and line, the old policies stay;
# - ten files written at once are one reload, not ten;
# - a ConfigMap-style update (the "..data" symlink swapped to a new
#   directory) is seen, and so is a policy.d replaced by another directory,
#   and changes inside the new one after that;
# - the state file written into the configuration directory causes no reload.
. "$(dirname "$0")/fixture-lib.sh" watch

fixture_tree <<'EOT'
khugepaged max_ptes_none=511 max_ptes_swap=64 max_ptes_shared=256
process 100 comm=redis-server
vma 0x7f0000000000-0x7f0000200000 rw-p
range 0x7f0000000000: 512 written
process 200 comm=other
vma 0x7f1000000000-0x7f1000200000 rw-p
range 0x7f1000000000: 512 written
EOT

C=$T/conf
mkdir -p "$C/policy.d"
# the state file in the configuration directory: its rewrites must not reload
printf '[Daemon]\nscan_sleep_millisecs=100\nmetrics_file=\nstate_file=%s/status\n' "$C" >"$C/mthpd.conf"
policy() { printf '[Match]\nunit=%s\n[Policy]\nmin_age=0\nsizes=2M\n' "$1"; }
policy redis-server.service >"$C/policy.d/50-redis.conf"

"$MTHPD" run --config-dir "$C" --proc-root "$P" --sys-root "$T/tree/sys" 2>"$T/log" &
DAEMON=$!
reloads() { grep -c "reloaded '$C'" "$T/log"; }
# wait_reloads N: until N reloads are logged (5 s at most)
wait_reloads() {
	for ((i = 0; i < 50; i++)); do
		[ "$(reloads)" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
# planned PID: the state file lists the process (its policy matched it)
listed() { grep -q "^process $1 " "$C/status" 2>/dev/null; }
wait_listed() { # PID [not]
	for ((i = 0; i < 50; i++)); do
		if listed "$1"; then [ -z "${2:-}" ] && return 0; else [ -n "${2:-}" ] && return 0; fi
		sleep 0.1
	done
	return 1
}
wait_listed 100 || fail "the redis policy never matched pid 100: $(cat "$T/log")"
sleep 2
[ "$(reloads)" = 0 ] || fail "$(reloads) reloads while only the state file changed"

echo "== a new policy file"
policy other.service >"$C/policy.d/60-other.conf"
wait_reloads 1 || fail "no reload after a new policy file"
grep -q "'$C' changed (policy.d/60-other.conf): reloading" "$T/log" || fail "the reload does not say what changed: $(grep changed "$T/log")"
wait_listed 200 || fail "the new policy does not match pid 200"

echo "== an invalid policy file"
printf '[Match]\nunit=x.service\n[Policy]\nsizes=3M\n' >"$C/policy.d/70-bad.conf"
sleep 2
grep -q "70-bad.conf:4" "$T/log" || fail "the invalid file is not named with its line: $(tail -3 "$T/log")"
grep -q "reload of '$C' failed: keeping the configuration in use" "$T/log" || fail "no 'keeping the configuration' line"
sleep 0.5
listed 200 || fail "the old policies were not kept after an invalid reload"
rm "$C/policy.d/70-bad.conf"
wait_reloads 2 || fail "no reload after the invalid file was removed"

echo "== ten files at once: one reload"
n0=$(reloads)
for i in 0 1 2 3 4 5 6 7 8 9; do policy "u$i.service" >"$C/policy.d/8$i-many.conf"; done
sleep 2.5
echo "reloads: $n0 -> $(reloads)"
[ "$(reloads)" = $((n0 + 1)) ] || fail "ten files written at once: $(($(reloads) - n0)) reloads, expected 1"
rm -f "$C"/policy.d/8?-many.conf
wait_reloads $((n0 + 2)) || fail "no reload after ten files were removed"

echo "== a ConfigMap update: the ..data symlink swapped"
n0=$(reloads)
rm -rf "$C/policy.d"
mkdir -p "$C/policy.d/..v1"
policy redis-server.service >"$C/policy.d/..v1/50-redis.conf"
ln -s ..v1 "$C/policy.d/..data"
ln -s ..data/50-redis.conf "$C/policy.d/50-redis.conf"
wait_reloads $((n0 + 1)) || fail "no reload after policy.d was replaced"
wait_listed 200 not || fail "pid 200 still matched after 60-other.conf went with the old policy.d"
mkdir "$C/policy.d/..v2"
policy other.service >"$C/policy.d/..v2/50-redis.conf" # the same name, another unit
ln -s ..v2 "$C/policy.d/..data_tmp"
mv -T "$C/policy.d/..data_tmp" "$C/policy.d/..data"
rm -rf "$C/policy.d/..v1"
wait_reloads $((n0 + 2)) || fail "no reload after the ..data swap"
wait_listed 200 || fail "after the ..data swap, pid 200 is not matched"
wait_listed 100 not || fail "after the ..data swap, pid 100 is still matched"

echo "== a change inside the new policy.d"
policy redis-server.service >"$C/policy.d/40-redis.conf"
wait_reloads $((n0 + 3)) || fail "a change inside the replaced policy.d is not seen"
wait_listed 100 || fail "the policy added to the new policy.d does not match pid 100"

echo "== the configuration directory itself moved away, and back"
mv "$C" "$C.moved"
sleep 2
mv "$C.moved" "$C"
grep -q "'$C' changed (the directory was moved or removed): reloading" "$T/log" ||
	fail "the move of the directory is not named: $(grep changed "$T/log" | tail -1)"

kill -TERM "$DAEMON"
wait "$DAEMON"
rc=$?
DAEMON=""
[ "$rc" = 0 ] || fail "mthpd run exited $rc"
grep -E "changed|reload" "$T/log" | sed 's/^/   log: /'

echo "== one pass: 'stopping after 1 pass'"
printf '[Daemon]\nscan_sleep_millisecs=600000\nmetrics_file=\nstate_file=%s/status1\n' "$T" >"$T/one.conf"
mkdir -p "$T/one/policy.d"
mv "$T/one.conf" "$T/one/mthpd.conf"
"$MTHPD" run --config-dir "$T/one" --proc-root "$P" --sys-root "$T/tree/sys" 2>"$T/log1" &
DAEMON=$!
for ((i = 0; i < 50; i++)); do
	grep -q "pass 1:" "$T/log1" && break
	sleep 0.1
done
kill -TERM "$DAEMON"
wait "$DAEMON"
DAEMON=""
tail -1 "$T/log1" | sed 's/^/   log: /'
grep -q "stopping after 1 pass$" "$T/log1" || fail "after one pass: $(tail -1 "$T/log1")"
[ "$FAILS" = 0 ] || exit 1
echo PASS
