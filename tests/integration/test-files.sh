#!/bin/bash
# The files root's daemon writes and reads, against another local user
# (uid 65534) and an operator's mistakes:
# 1. Links planted by another user are never written through: in a
#    directory anyone can write without the sticky bit, check-config and
#    run refuse state_file and metrics_file naming mthpd.conf's line; in a
#    sticky one (/tmp style) the daemon runs and the file the planted
#    links point to (status.tmp, metrics.prom.tmp, with
#    fs.protected_symlinks=0) stays as it was; a planted state file
#    itself (a link of another user) is refused at start.
# 2. A reload to another daemon's state_file is refused (its lock), and so
#    is one to a state_file that cannot be written or in a directory others
#    can write: the old file is kept, both daemons go on writing theirs.
# 3. `mthpd status` on a FIFO answers at once (exit 3), not never.
# 4. A killed daemon not yet reaped (a zombie with its comm and start time)
#    is not running: exit 3.
# 5. An immutable state file (chattr +i) stops `mthpd run` with exit 2.
# 6. `mthpd run` by hand makes the default /run/mthpd (root, 0755) when it
#    is missing, refuses a symbolic link there, and makes one other users
#    can write (an emptyDir) 0755 (private mount namespace, its own /run).
. "$(dirname "$0")/lib.sh"
require_all
command -v setpriv >/dev/null || skip "setpriv not installed (util-linux)"

EXTRA=()  # daemons besides $DAEMON, and a zombie's parent, killed on exit
IMMUTABLE=() # files made immutable, made mutable again on exit (else rm fails)
SYMLINKS_WAS=$(cat /proc/sys/fs/protected_symlinks 2>/dev/null)
files_cleanup() {
	local p
	for p in "${EXTRA[@]}"; do kill -KILL "$p" 2>/dev/null; done
	for p in "${IMMUTABLE[@]}"; do chattr -i "$p" 2>/dev/null; done
	[ -n "$SYMLINKS_WAS" ] && echo "$SYMLINKS_WAS" >/proc/sys/fs/protected_symlinks
	cleanup
}
trap files_cleanup EXIT

# Other users must reach the directories below $TMP (mktemp makes it 0700).
chmod 0755 "$TMP" || die "chmod $TMP"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# conf NAME KEY=VALUE...: a configuration directory $TMP/NAME, no policy;
# [Daemon] has the lines given after "scan_sleep_millisecs=200" (line 3).
conf() {
	local dir=$TMP/$1
	shift
	mkdir -p "$dir/policy.d"
	{
		printf '[Daemon]\nscan_sleep_millisecs=200\n'
		printf '%s\n' "$@"
	} >"$dir/mthpd.conf"
}

# field FILE KEY: a value of a state file ("" without one).
field() { awk -v k="$2" '$1 == k { print $2; exit }' "$1" 2>/dev/null; }

# wait_written FILE PID: true once FILE is a state file of PID written in
# the last second or so; false after 10 s.
wait_written() {
	local i w now
	for ((i = 0; i < 100; i++)); do
		if [ "$(field "$1" pid)" = "$2" ]; then
			w=$(field "$1" written_boottime_usec)
			now=$(awk '{ printf "%.0f", $1 * 1000000 }' /proc/uptime)
			[ -n "$w" ] && [ $((now - w)) -lt 1500000 ] && return 0
		fi
		sleep 0.1
	done
	return 1
}

# expect_refused NAME CONF RC PATTERN [CMD]: `mthpd CMD` (check-config) exits
# RC within 10 s and stderr matches PATTERN.
expect_refused() {
	local cmd=${5:-check-config} rc
	timeout 10 "$MTHPD" "$cmd" --config-dir "$TMP/$2" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	echo "== $1: mthpd $cmd: exit $rc: $(grep -v '^<[67]>' "$TMP/err" | tail -n 3)"
	[ "$rc" = "$3" ] || check_fail "$1: mthpd $cmd exited $rc, expected $3"
	grep -q -- "$4" "$TMP/err" || check_fail "$1: mthpd $cmd: stderr does not match '$4'"
}

# --- 1. planted links
echo 0 >/proc/sys/fs/protected_symlinks || die "cannot set fs.protected_symlinks"
TARGET=$TMP/precious
echo "root's file, not mthpd's" >"$TARGET"
chmod 0644 "$TARGET"
SUM=$(sha256sum <"$TARGET")

W=$TMP/world
mkdir "$W" && chmod 0777 "$W"
as_nobody ln -s "$TARGET" "$W/status.tmp" || die "nobody cannot plant a link in $W"
as_nobody ln -s "$TARGET" "$W/metrics.prom.tmp"
conf world "state_file=$W/status" "metrics_file=$TMP/metrics.prom"
expect_refused "world-writable state directory" world 2 \
	"^mthpd: $TMP/world/mthpd.conf:3: state_file=$W/status: directory '$W' can be written by other users (mode 0777) and has no sticky bit$"
expect_refused "world-writable state directory" world 2 \
	"$TMP/world/mthpd.conf:3: state_file=$W/status: directory '$W' can be written" run
conf world2 "state_file=$TMP/status" "metrics_file=$W/metrics.prom"
expect_refused "world-writable metrics directory" world2 2 \
	"^mthpd: $TMP/world2/mthpd.conf:4: metrics_file=$W/metrics.prom: directory '$W' can be written by other users"
expect_refused "world-writable metrics directory" world2 2 "mthpd.conf:4: metrics_file=$W/metrics.prom: " run
# A directory of another user: the owner can chmod it and swap the files.
NOB=$TMP/nobodys
mkdir "$NOB" && chown 65534:65534 "$NOB" && chmod 0755 "$NOB"
conf nob "state_file=$NOB/status" "metrics_file="
expect_refused "another user's directory" nob 2 "mthpd.conf:3: state_file=$NOB/status: directory '$NOB' belongs to uid 65534"

S=$TMP/sticky
mkdir "$S" && chmod 1777 "$S"
as_nobody ln -s "$TARGET" "$S/status.tmp" || die "nobody cannot plant a link in $S"
as_nobody ln -s "$TARGET" "$S/metrics.prom.tmp"
conf sticky "state_file=$S/status" "metrics_file=$S/metrics.prom"
"$MTHPD" check-config --config-dir "$TMP/sticky" >"$TMP/out" 2>"$TMP/err" ||
	check_fail "sticky directory: check-config refused it: $(cat "$TMP/err")"
"$MTHPD" run --config-dir "$TMP/sticky" 2>"$TMP/sticky.log" &
DAEMON=$!
wait_written "$S/status" "$DAEMON" || check_fail "sticky directory: no state file written by pid $DAEMON"
sleep 1 # a few more writes of both files
[ "$(sha256sum <"$TARGET")" = "$SUM" ] ||
	check_fail "sticky directory: the daemon wrote through a planted link: $TARGET is now: $(head -c 200 "$TARGET")"
[ "$(stat -c '%F %u' "$S/status")" = "regular file 0" ] ||
	check_fail "sticky directory: $S/status is $(stat -c '%F of uid %u' "$S/status")"
grep -q '^# TYPE ' "$S/metrics.prom" || check_fail "sticky directory: no metrics in $S/metrics.prom"
daemon_stop
left=$(find "$S" -name '*.tmp-*')
[ -z "$left" ] || check_fail "temporary files left in $S: $left"
echo "sticky directory: $(sha256sum <"$TARGET" | cut -c1-12) (was ${SUM:0:12}); $(find "$S" -mindepth 1 -printf '%f ')"

# The state file itself planted as a link: renaming over another user's
# entry in a sticky directory fails once capabilities are dropped; refused
# at start, the target untouched.
S2=$TMP/sticky2
mkdir "$S2" && chmod 1777 "$S2"
as_nobody ln -s "$TARGET" "$S2/status"
conf sticky2 "state_file=$S2/status" "metrics_file="
expect_refused "planted state file" sticky2 2 "state_file=$S2/status: '$S2/status' belongs to uid 65534 in a sticky directory" run
[ "$(sha256sum <"$TARGET")" = "$SUM" ] || check_fail "planted state file: $TARGET was written"

# --- 2. a reload to another daemon's state file, or to one that cannot be written
mkdir "$TMP/s1" "$TMP/s2"
conf one "state_file=$TMP/s1/status" "metrics_file="
conf two "state_file=$TMP/s2/status" "metrics_file="
# appended (O_APPEND): the log is emptied between the steps
"$MTHPD" run --config-dir "$TMP/one" 2>>"$TMP/one.log" &
D1=$!
EXTRA+=("$D1")
"$MTHPD" run --config-dir "$TMP/two" 2>"$TMP/two.log" &
D2=$!
EXTRA+=("$D2")
wait_written "$TMP/s1/status" "$D1" || check_fail "reload: daemon one (pid $D1) writes no $TMP/s1/status"
wait_written "$TMP/s2/status" "$D2" || check_fail "reload: daemon two (pid $D2) writes no $TMP/s2/status"
# reload_to NAME STATE_FILE PATTERN: daemon one reloaded with that state_file
# logs a refusal matching PATTERN and keeps writing its own.
reload_to() {
	conf one "state_file=$2" "metrics_file="
	kill -HUP "$D1"
	for ((i = 0; i < 50; i++)); do
		grep -qa -- "$3" "$TMP/one.log" && break
		sleep 0.1
	done
	echo "== reload to $1: $(grep -a 'reload of' "$TMP/one.log" | tail -n 1)"
	grep -qa -- "$3" "$TMP/one.log" || check_fail "reload to $1: no log line matching '$3'"
	sleep 1.2
	kill -0 "$D1" 2>/dev/null || check_fail "reload to $1: daemon one died"
	wait_written "$TMP/s1/status" "$D1" || check_fail "reload to $1: daemon one no longer writes $TMP/s1/status"
	[ "$(field "$TMP/s2/status" pid)" = "$D2" ] ||
		check_fail "reload to $1: $TMP/s2/status names pid $(field "$TMP/s2/status" pid), not daemon two ($D2)"
	: >"$TMP/one.log"
}
reload_to "the other daemon's state file" "$TMP/s2/status" \
	"<3>reload of '$TMP/one' refused: state_file=$TMP/s2/status: another mthpd with pid $D2 already runs with state_file=$TMP/s2/status (it holds '$TMP/s2/status.lock'); keeping state_file=$TMP/s1/status and the configuration in use"
reload_to "a missing directory" "$TMP/nodir/status" \
	"<3>reload of '$TMP/one' refused: state_file=$TMP/nodir/status: cannot write files in '$TMP/nodir': No such file or directory; keeping state_file=$TMP/s1/status"
reload_to "a directory others can write" "$W/status" \
	"<3>reload of '$TMP/one' refused: $TMP/one/mthpd.conf:3: state_file=$W/status: directory '$W' can be written by other users (mode 0777) and has no sticky bit; keeping the configuration in use"
wait_written "$TMP/s2/status" "$D2" || check_fail "reload: daemon two no longer writes its state file"
"$MTHPD" status --config-dir "$TMP/two" >"$TMP/out" 2>&1 || check_fail "reload: mthpd status of daemon two: $(head -n 1 "$TMP/out")"
# and a reload to a free one is taken, its lock with it
conf one "state_file=$TMP/s1/new" "metrics_file="
kill -HUP "$D1"
wait_written "$TMP/s1/new" "$D1" || check_fail "reload to a free state file: $TMP/s1/new not written by daemon one"
flock -n "$TMP/s1/new.lock" true && check_fail "reload to a free state file: its lock is not held"
flock -n "$TMP/s1/status.lock" true || check_fail "reload to a free state file: the old lock is still held"
for p in "$D1" "$D2"; do
	kill -TERM "$p"
	wait "$p"
	rc=$?
	[ "$rc" = 0 ] || check_fail "reload: daemon $p exited $rc after SIGTERM"
done
EXTRA=()

# --- 3. a FIFO for a state file
mkfifo "$TMP/state.fifo"
conf fifo "state_file=$TMP/state.fifo"
timeout 5 "$MTHPD" status --config-dir "$TMP/fifo" >"$TMP/out" 2>&1
rc=$?
echo "== FIFO: mthpd status: exit $rc: $(cat "$TMP/out")"
[ "$rc" = 3 ] || check_fail "FIFO: mthpd status exited $rc, expected 3 (124: it hung)"
grep -qx "mthpd: '$TMP/state.fifo' is not a regular file (a FIFO), not a state file mthpd wrote" "$TMP/out" ||
	check_fail "FIFO: not the message expected"

# --- 4. a zombie: a daemon killed that its parent (sleep, which never waits) has not reaped
mkdir "$TMP/z"
conf zombie "state_file=$TMP/z/status" "metrics_file="
# shellcheck disable=SC2016 # $0, $1 and $! belong to the inner shell
sh -c '"$0" run --config-dir "$1" 2>/dev/null & echo $! >"$2"; exec sleep 60' \
	"$MTHPD" "$TMP/zombie" "$TMP/z/pid" &
PARENT=$!
EXTRA+=("$PARENT")
for ((i = 0; i < 50; i++)); do [ -s "$TMP/z/pid" ] && break; sleep 0.1; done
ZP=$(cat "$TMP/z/pid")
wait_written "$TMP/z/status" "$ZP" || check_fail "zombie: daemon $ZP wrote no state file"
kill -KILL "$ZP"
for ((i = 0; i < 50; i++)); do
	[ "$(awk '{ print $3 }' "/proc/$ZP/stat" 2>/dev/null)" = Z ] && break
	sleep 0.1
done
[ "$(awk '{ print $3 }' "/proc/$ZP/stat")" = Z ] || die "pid $ZP did not become a zombie"
"$MTHPD" status --config-dir "$TMP/zombie" >"$TMP/out" 2>&1
rc=$?
echo "== zombie pid $ZP ($(awk '{ print $2, $3 }' "/proc/$ZP/stat")): mthpd status: exit $rc: $(head -n 1 "$TMP/out")"
[ "$rc" = 3 ] || check_fail "zombie: mthpd status exited $rc, expected 3"
grep -q "^mthpd is not running (pid $ZP has exited: a zombie" "$TMP/out" || check_fail "zombie: not said"
kill -KILL "$PARENT"
wait "$PARENT" 2>/dev/null
EXTRA=()

# --- 5. an immutable state file
mkdir "$TMP/imm"
echo old >"$TMP/imm/status"
if chattr +i "$TMP/imm/status" 2>"$TMP/err"; then
	IMMUTABLE+=("$TMP/imm/status")
	conf imm "state_file=$TMP/imm/status" "metrics_file="
	expect_refused "immutable state file" imm 2 "state_file=$TMP/imm/status: '$TMP/imm/status' is immutable (chattr +i): mthpd cannot replace it"
	expect_refused "immutable state file" imm 2 "state_file=$TMP/imm/status: '$TMP/imm/status' is immutable (chattr +i)" run
	chattr -i "$TMP/imm/status"
	IMMUTABLE=()
else
	echo "immutable state file: left out: chattr +i on $(df -T "$TMP" | awk 'NR == 2 { print $2 }') fails: $(cat "$TMP/err")"
fi

# --- 6. /run/mthpd made by `mthpd run` by hand, in a private /run
if unshare -m --propagation private true 2>/dev/null; then
	conf rundir "metrics_file="
	# shellcheck disable=SC2016 # $0, $1, $2 belong to the inner shell
	unshare -m --propagation private -- sh -c '
		fresh_run() { umount /run 2>/dev/null; mount -t tmpfs mthpd-test /run || exit 9; }
		fresh_run
		umask 077
		"$0" run --config-dir "$1" 2>"$2/rundir.log" &
		d=$!
		i=0
		while [ ! -s /run/mthpd/status ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		echo "made: $(stat -c "%F %U %a" /run/mthpd)"
		echo "status: $("$0" status --config-dir "$1" | head -n 1)"
		kill -TERM $d
		wait $d
		echo "stopped: exit $?"
		# a symbolic link there is not followed
		fresh_run
		mkdir /run/elsewhere && ln -s /run/elsewhere /run/mthpd
		timeout 10 "$0" run --config-dir "$1" >/dev/null 2>"$2/rundir2.log"
		echo "link: exit $?"
		for f in /run/elsewhere/*; do [ -e "$f" ] && echo "written there: $f"; done
		# mode 0777 (a Kubernetes emptyDir): made 0755
		fresh_run
		mkdir -m 0777 /run/mthpd
		"$0" check-config --config-dir "$1" >/dev/null 2>"$2/rundir3.err"
		echo "loose check-config: exit $?"
		timeout 3 "$0" run --config-dir "$1" 2>"$2/rundir3.log"
		echo "loose: exit $? mode $(stat -c %a /run/mthpd)"
	' "$MTHPD" "$TMP/rundir" "$TMP" >"$TMP/rundir.out" 2>&1
	sed 's/^/   /' "$TMP/rundir.out"
	grep -qx "made: directory root 755" "$TMP/rundir.out" ||
		check_fail "/run/mthpd: not made a directory of root's, mode 0755 ($(cat "$TMP/rundir.log"))"
	grep -q "^status: mthpd is running as pid" "$TMP/rundir.out" || check_fail "/run/mthpd: mthpd status does not say running"
	grep -qx "stopped: exit 0" "$TMP/rundir.out" || check_fail "/run/mthpd: the daemon did not stop with exit 0"
	echo "   /run/mthpd a symbolic link: $(grep -v '^<[67]>' "$TMP/rundir2.log")"
	grep -qx "link: exit 2" "$TMP/rundir.out" || check_fail "/run/mthpd as a symbolic link: run did not exit 2"
	grep -qx "<3>'/run/mthpd' is not a directory of root's (a symbolic link)" "$TMP/rundir2.log" ||
		check_fail "/run/mthpd as a symbolic link: not refused with a clear message"
	grep -q "^written there" "$TMP/rundir.out" && check_fail "/run/mthpd as a symbolic link: files written where it points"
	echo "   /run/mthpd mode 0777: $(cat "$TMP/rundir3.err"); $(grep -v '^<[67]>' "$TMP/rundir3.log" | head -n 1)"
	grep -qx "loose check-config: exit 0" "$TMP/rundir.out" || check_fail "/run/mthpd mode 0777: check-config refused it"
	grep -q "note: state_file=/run/mthpd/status: directory '/run/mthpd' can be written by other users (mode 0777) and has no sticky bit: \`mthpd run\` makes '/run/mthpd' mode 0755" "$TMP/rundir3.err" ||
		check_fail "/run/mthpd mode 0777: check-config does not say what run will do"
	grep -qx "loose: exit 124 mode 755" "$TMP/rundir.out" || check_fail "/run/mthpd mode 0777: not made 0755 by a daemon that runs"
	grep -qx "<5>'/run/mthpd' could be written by other users (mode 0777): made it mode 0755" "$TMP/rundir3.log" ||
		check_fail "/run/mthpd mode 0777: the change is not logged"
else
	echo "no private mount namespace (unshare -m): /run/mthpd is not checked"
fi
finish
