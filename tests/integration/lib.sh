# shellcheck shell=bash disable=SC2034  # globals are used by the tests
# Helpers sourced by tests/integration/test-*.sh (bash).  Not a test itself:
# the Makefile runs only test-*.sh.
#
# Modelled on the kernel's tools/testing/selftests/mm/khugepaged.c: a target
# process with known page patterns, THP sysfs knobs saved and restored on
# every exit path, results checked from smaps, from kpageflags (through
# contrib/thp-inspect) and from the target's own view of its memory.
#
# A test calls require_all first; it exits 77 with a last line saying why
# where it cannot run.  Checks accumulate with check_fail and `finish` turns
# them into the exit status, so one run reports every mismatch.

set -u

O=${O:-build}
MTHPD=$O/mthpd
WORKLOAD=$O/tests/integration/workload
INSPECT=$O/contrib/thp-inspect
THP=/sys/kernel/mm/transparent_hugepage
RANGE_SIZE=2097152
TIMEOUT=30

TMP=$(mktemp -d "${TMPDIR:-/tmp}/mthpd-integ.XXXXXX")
WL_PIDS=()
RESTORE=() # pairs: sysfs path, original value
DAEMON=""  # a `mthpd run` the test started, killed on exit
CGROUPS=() # child cgroups the test made (child_cgroups), removed on exit
FAILS=0

# The daemon first, so that it touches nothing more; then sysfs: it is
# global state that outlives this test; then the workloads, and the
# cgroups they were in once they are gone.
cleanup() {
	local i pid
	[ -n "$DAEMON" ] && kill -KILL "$DAEMON" 2>/dev/null
	for ((i = ${#RESTORE[@]} - 2; i >= 0; i -= 2)); do
		if ! echo "${RESTORE[i + 1]}" >"${RESTORE[i]}" 2>/dev/null; then
			echo "WARNING: could not restore ${RESTORE[i]} to ${RESTORE[i + 1]}" >&2
		fi
	done
	RESTORE=()
	for pid in "${WL_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${WL_PIDS[@]}"; do
		wait "$pid" 2>/dev/null
	done
	WL_PIDS=()
	[ ${#CGROUPS[@]} -gt 0 ] && sleep 0.2 # the kernel frees a cgroup of exited tasks lazily
	for ((i = 0; i < ${#CGROUPS[@]}; i++)); do
		rmdir "${CGROUPS[i]}" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

skip() {
	echo "SKIP: $*"
	exit 77
}

# Not a check that failed: the test cannot go on.
die() {
	echo "FAIL: $*"
	exit 1
}

check_fail() {
	echo "FAIL: $*"
	FAILS=$((FAILS + 1))
}

finish() {
	if [ "$FAILS" -gt 0 ]; then
		echo "$FAILS check(s) failed"
		exit 1
	fi
	echo "PASS"
	exit 0
}

require_all() {
	local out rc
	[ "$(id -u)" = 0 ] || skip "needs root (pagemap PFNs, kpageflags, process_madvise)"
	[ -d "$THP" ] || skip "no $THP: kernel without transparent huge pages"
	[ -r /proc/kpageflags ] || skip "/proc/kpageflags not readable"
	command -v jq >/dev/null || skip "jq not installed"
	for b in "$MTHPD" "$WORKLOAD" "$INSPECT"; do
		[ -x "$b" ] || die "$b not built (run make)"
	done
	out=$("$WORKLOAD" --probe)
	rc=$?
	[ "$rc" = 77 ] && skip "$out"
	[ "$rc" = 0 ] || die "workload --probe failed ($rc): $out"
	# The workload's VMAs must keep 4K pages until mthpd collapses them:
	# with "always", page faults would allocate huge pages and khugepaged
	# would collapse behind the tests' back.  As the khugepaged selftest
	# does, switch to "madvise" for the test (restored on exit).
	if grep -q '\[always\]' "$THP/enabled"; then
		thp_set enabled madvise
	fi
	for f in "$THP"/hugepages-*kB/enabled; do
		[ -e "$f" ] || continue
		if grep -q '\[always\]' "$f"; then
			thp_set "${f#"$THP"/}" madvise
		fi
	done
}

# wl_start PATTERN...: starts a workload; sets WL_PID, WL_BASE (hex), WL_NR and
# WL_FD (its stdout, for wl_verify).
WL_SEQ=0
wl_start() {
	local fifo line fd pid
	WL_SEQ=$((WL_SEQ + 1))
	fifo=$TMP/workload.$WL_SEQ
	mkfifo "$fifo" || die "mkfifo"
	# WL_AS: a command that runs the workload as it should be (setpriv ...)
	# shellcheck disable=SC2086 # $WL_AS is empty or words on purpose
	${WL_AS:-} "$WORKLOAD" "$@" >"$fifo" &
	pid=$!
	WL_PIDS+=("$pid")
	exec {fd}<"$fifo"
	if ! read -t "$TIMEOUT" -r line <&"$fd"; then
		die "workload $* did not start"
	fi
	WL_PID=$(jq -r .pid <<<"$line")
	WL_BASE=$(jq -r .base <<<"$line")
	WL_NR=$(jq -r .ranges <<<"$line")
	WL_FD=$fd
	[ "$WL_PID" = "$pid" ] || die "workload says pid $WL_PID, started $pid"
	if [ $# -le 16 ]; then
		echo "workload $WL_PID: base $WL_BASE, $WL_NR ranges: $*"
	else
		echo "workload $WL_PID: base $WL_BASE, $WL_NR ranges: $1 ..."
	fi
}

# child_cgroups NAME...: the cgroup2 hierarchy in CG, and one child cgroup
# mthpd-NAME-$$ below it per NAME, removed on exit; skips the test where
# there is no cgroup2 or it cannot make them.  The paths are in CGROUPS.
child_cgroups() {
	local n
	CG=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
	[ -n "$CG" ] || skip "no cgroup2 hierarchy mounted${SKIP_NOTE:-}"
	for n in "$@"; do
		mkdir "$CG/mthpd-$n-$$" || skip "cannot create a child cgroup below $CG${SKIP_NOTE:-}"
		CGROUPS+=("$CG/mthpd-$n-$$")
	done
}

# state KEY: a value of the daemon's state file $TMP/status (0 before it exists).
state() {
	local k v
	if [ -e "$TMP/status" ]; then
		while read -r k v; do
			[ "$k" = "$1" ] && { echo "$v"; return; }
		done <"$TMP/status"
	fi
	echo 0
}

# in_cgroup DIR PATTERN...: a workload moved into DIR; sets WL_PID etc.
in_cgroup() {
	local dir=$1
	shift
	wl_start "$@"
	echo "$WL_PID" >"$dir/cgroup.procs" || die "cannot move $WL_PID into $dir"
}

# wl_verify PID FD: the workload checks every page; prints its answer.
wl_verify() {
	local line
	kill -USR1 "$1" || {
		echo "workload $1 gone"
		return
	}
	if read -t "$TIMEOUT" -r line <&"$2"; then
		echo "$line"
	else
		echo "no answer from workload $1"
	fi
}

# memory_ok PID FD: the workload checks every page; a check fails unless all is as written.
memory_ok() {
	local v
	v=$(wl_verify "$1" "$2")
	[ "$v" = ok ] || check_fail "workload $1 memory: $v"
	echo "workload $1 memory: $v"
}

# daemon_stop: SIGTERM to the `mthpd run` in $DAEMON; a check fails unless it exits 0.
daemon_stop() {
	local rc
	kill -TERM "$DAEMON"
	wait "$DAEMON"
	rc=$?
	DAEMON=""
	[ "$rc" = 0 ] || check_fail "mthpd run exited $rc after SIGTERM"
}

# wl_kill PID: SIGKILL and reap.
wl_kill() {
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

vmstat() {
	local k v
	while read -r k v; do
		if [ "$k" = "$1" ]; then
			echo "$v"
			return
		fi
	done </proc/vmstat
	echo 0
}

# anon_huge_kb PID BASE NR: AnonHugePages summed over the VMAs that overlap
# [BASE, BASE + NR ranges), from /proc/PID/smaps.  In awk: under ASan a
# process has thousands of VMAs, and a shell loop over them took seconds.
anon_huge_kb() {
	awk -v lo="$(($2))" -v hi="$(($2 + $3 * RANGE_SIZE))" '
		function hex(s,   i, v, c) {
			v = 0
			for (i = 1; i <= length(s); i++) {
				c = index("0123456789abcdef", substr(s, i, 1)) - 1
				v = v * 16 + c
			}
			return v
		}
		/^[0-9a-f]+-[0-9a-f]+ / {
			split($1, a, "-")
			inside = hex(a[1]) < hi + 0 && hex(a[2]) > lo + 0
			next
		}
		/^AnonHugePages:/ && inside { total += $2 }
		END { print total + 0 }' "/proc/$1/smaps"
}

# huge_within PID BASE NR KB: true once AnonHugePages of [BASE, BASE + NR
# ranges) is KB, false after 10 s.
huge_within() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(anon_huge_kb "$1" "$2" "$3")" = "$4" ] && return 0
		sleep 0.1
	done
	return 1
}

# thp_set FILE VALUE: writes a file below $THP, saving the original for
# cleanup() (once per file).
thp_set() {
	local path=$THP/$1 i saved=0 orig
	for ((i = 0; i < ${#RESTORE[@]}; i += 2)); do
		[ "${RESTORE[i]}" = "$path" ] && saved=1
	done
	if [ "$saved" = 0 ]; then
		orig=$(cat "$path") || die "cannot read $path"
		# "always [madvise] never": the bracketed word is the setting
		case $orig in
		*\[*\]*)
			orig=${orig#*\[}
			orig=${orig%%\]*}
			;;
		esac
		RESTORE+=("$path" "$orig")
	fi
	echo "$2" >"$path" || die "cannot write $2 to $path"
}

# The JSON contract of README.md ("JSON output"), line by line: the field
# types, size names per order, alignment, and the reason and result names
# exactly as README.md lists them (update both together).
# shellcheck disable=SC2016  # jq code, not shell
JQ_DEFS='
def hex: ltrimstr("0x") | explode
	| reduce .[] as $c (0; . * 16 + (if $c >= 97 then $c - 87 else $c - 48 end));
def size_name: {"2":"16K","3":"32K","4":"64K","5":"128K","6":"256K","7":"512K","8":"1M","9":"2M"}[tostring];
def reasons: ["succeeded","exceed_none_pte","exceed_swap_pte","exceed_shared_pte",
	"page_pmd_mapped","pte_mapped_hugepage","failed","refill_backoff"];
def results: ["succeeded","alloc_huge_page_failed","unmapped","ccgroup_charge_failed","try_again",
	"vma_check_failed","noop","unsupported","process_exited","permission_denied","error",
	"not_attempted"];
def isnum: type == "number" and . >= 0 and . == floor;
def valid_process($mode):
	(.pid | isnum) and (.comm | type == "string") and .action == "skip"
	and .reason == "thp_disabled" and (.hint | type == "string")
	and (if $mode == "plan" then has("result") | not else .result == "not_attempted" end)
	and (keys - ["pid","comm","action","reason","hint","result"] | length == 0);
def valid($mode):
	if type == "object" and (has("order") | not) then valid_process($mode)
	elif type != "object" or (.order | isnum | not) then false else
	pow(2; .order) as $n
	| (.pid | isnum)
	and (.addr | type == "string" and test("^0x[0-9a-f]+$"))
	and (.order | isnum and . >= 2 and . <= 9)
	and .size == (.order | size_name)
	and (.addr | hex) % 4096 == 0
	and ((.addr | hex) / (4096 * $n) | . == floor)
	and (.occupied | isnum and . <= $n)
	and (.swap | isnum) and (.shared | isnum)
	and (.action == "collapse" or .action == "skip")
	and (.reason as $r | reasons | index([$r]) != null)
	and ((.action == "collapse") == (.reason == "succeeded"))
	and (.supported | type == "boolean")
	and (if $mode == "plan" then has("result") | not
	     else (.result as $r | results | index([$r]) != null)
		and ((.action == "skip") == (.result == "not_attempted")) end)
	end;
'

# json_check FILE plan|collapse: every line is valid JSON and matches the
# contract.  Returns 1 (after printing why) if not.
# json_run MODE NAME MTHPD-ARGS...: runs `mthpd MODE --pid $P --json ARGS`
# into $TMP/NAME.json, saves the expectation on stdin as $TMP/NAME.expected,
# shows stderr, and checks exit status 0 and the README's JSON contract.
json_run() {
	local mode=$1 name=$2 rc
	shift 2
	cat >"$TMP/$name.expected"
	"$MTHPD" "$mode" --pid "$P" --json "$@" >"$TMP/$name.json" 2>"$TMP/$name.err"
	rc=$?
	echo "== $name: mthpd $mode --pid $P --json $* (exit $rc)"
	if [ -s "$TMP/$name.err" ]; then
		sed 's/^/   stderr: /' "$TMP/$name.err"
	fi
	[ "$rc" = 0 ] || check_fail "$name: exit status $rc, expected 0"
	json_check "$TMP/$name.json" "$mode" || check_fail "$name: JSON contract"
}

json_check() {
	local bad
	if ! bad=$(jq -c --arg mode "$2" "$JQ_DEFS"' select(valid($mode) | not)' "$1" 2>&1); then
		echo "not JSON lines: $(echo "$bad" | head -n 5)"
		return 1
	fi
	if [ -n "$bad" ]; then
		echo "lines breaking the README contract ($(echo "$bad" | wc -l)):"
		echo "$bad" | head -n 5
		return 1
	fi
}

# json_norm FILE PID BASE NR: the blocks of PID inside the workload's ranges,
# one per line: "RANGE PAGE_OFFSET ORDER ACTION REASON OCCUPIED SHARED [RESULT]",
# sorted in walk order (range, offset, larger order first).
json_norm() {
	jq -r --argjson pid "$2" --argjson base "$(($3))" --argjson nr "$4" "$JQ_DEFS"'
		select(.pid == $pid)
		| ((.addr | hex) - $base) as $off
		| select($off >= 0 and $off < $nr * 2097152)
		| ($off / 2097152 | floor) as $r
		| (($off - $r * 2097152) / 4096) as $pg
		| "\($r) \($pg) \(.order) \(.action) \(.reason) \(.occupied) \(.shared)"
		  + (if has("result") then " \(.result)" else "" end)' "$1" |
		sort -k1,1n -k2,2n -k3,3nr
}

# json_supported FILE: the distinct "supported" values of sub-PMD collapse
# blocks ("true", "false", both, or nothing).
json_subpmd_supported() {
	jq -r 'select(.order < 9 and .action == "collapse") | .supported' "$1" | sort -u
}

# expect_diff NAME EXPECTED ACTUAL: compares two normalised listings.
expect_diff() {
	if ! diff -u "$2" "$3" >"$TMP/diff"; then
		check_fail "$1: blocks differ from the expected (- expected, + mthpd):"
		cat "$TMP/diff"
		return 1
	fi
	echo "ok: $1"
}

# zero_range P B R: how the kernel mapped the read faults of the workload's
# "zero" range R, from what thp-inspect reads in pagemap and kpageflags.
# Most kernels map the shared zero page (none to khugepaged and to mthpd);
# some, VM guests booted with pvm_no_zero_page=1 for one, give every read
# fault a zero-filled page of its own, which is occupied like a written
# page.  Sets ZERO_OCC (0 or 512: the range's occupied pages) and ZERO_FULL
# (1 where the range counts as fully written, else 0); dies on anything else.
zero_range() {
	local line present zero
	line=$("$INSPECT" "$1" "$2" "$(($3 + 1))" | sed -n "$(($3 + 1))p")
	present=$(sed -n 's/.* present=\([0-9]*\) .*/\1/p' <<<"$line")
	zero=$(sed -n 's/.* zero=\([0-9]*\) .*/\1/p' <<<"$line")
	if [ "$present" = 512 ] && [ "$zero" = 512 ]; then
		ZERO_OCC=0 ZERO_FULL=0
		echo "this kernel maps read faults to the shared zero page"
	elif [ "$present" = 512 ] && [ "$zero" = 0 ]; then
		ZERO_OCC=512 ZERO_FULL=1
		echo "this kernel maps read faults to zero-filled pages of their own (no shared zero page)"
	else
		die "the read-only range $3 is neither 512 zero pages nor 512 private pages: $line"
	fi
}
