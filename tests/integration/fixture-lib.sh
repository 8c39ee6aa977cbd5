# shellcheck shell=bash
# Sourced by the tests of `mthpd run` on a synthetic /proc, /sys and cgroup2
# tree (no root needed, nothing is collapsed): `. fixture-lib.sh NAME`.
# Sets O, MTHPD, T (a directory removed on exit, with any $DAEMON killed),
# FAILS and fail().
set -u
O=${O:-build}
MTHPD=$O/mthpd
MKFIXTURE=$O/contrib/mkfixture
T=$(mktemp -d "${TMPDIR:-/tmp}/mthpd-$1.XXXXXX")
DAEMON=""
trap '[ -n "$DAEMON" ] && kill -KILL $DAEMON 2>/dev/null; rm -rf "$T"' EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

# fixture_tree < SPEC: the processes of SPEC (contrib/mkfixture's format) in
# $T/tree, P=$T/tree/proc, and a cgroup2 hierarchy at $T/cg (named in
# $P/self/mountinfo) with pid 100 in system.slice/redis-server.service and
# pid 200 in system.slice/other.service.
fixture_tree() {
	cat >"$T/spec"
	"$MKFIXTURE" "$T/spec" "$T/tree" >"$T/mkfixture.log" 2>&1 || {
		cat "$T/mkfixture.log"
		echo "FAIL: mkfixture"
		exit 1
	}
	P=$T/tree/proc
	mkdir -p "$P/self" "$T/cg/system.slice/redis-server.service" "$T/cg/system.slice/other.service"
	echo "35 25 0:30 / $T/cg rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw" >"$P/self/mountinfo"
	echo 100 >"$T/cg/system.slice/redis-server.service/cgroup.procs"
	echo 200 >"$T/cg/system.slice/other.service/cgroup.procs"
}
