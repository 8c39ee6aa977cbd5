#!/bin/bash
# Issue 29.7: the bash completion (completion/mthpd.bash) sourced in a bash
# of its own, without bash-completion, and asked for partial command lines
# as bash asks it (COMP_WORDS, COMP_CWORD set by hand): the commands, each
# command's options, directories, the policies of the --config-dir on the
# line, sizes after a comma.  And no drift: every option `mthpd --help`
# names is completed for some command, and nothing else.  No root needed.
set -u
O=${O:-build}
MTHPD=$O/mthpd
COMPLETION=$(dirname "$0")/../../completion/mthpd.bash
T=$(mktemp -d "${TMPDIR:-/tmp}/mthpd-completion.XXXXXX")
trap 'rm -rf "$T"' EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
[ -x "$MTHPD" ] || { echo "FAIL: $MTHPD not built"; exit 1; }
if [ ! -r "$COMPLETION" ]; then
	# the tests without the source tree (tests/vm copies tests/ alone): nothing
	# kernel-specific is lost, the host runs this test
	[ -e "$(dirname "$0")/../../Makefile" ] || { echo "SKIP: no $COMPLETION (tests without the source tree)"; exit 77; }
	echo "FAIL: no $COMPLETION"
	exit 1
fi

mkdir -p "$T/conf/policy.d" "$T/conf2/policy.d" "$T/dir-a" "$T/dir-b"
: >"$T/conf/policy.d/50-redis.conf"
: >"$T/conf/policy.d/60-java.conf"
: >"$T/conf/policy.d/README" # not a policy
: >"$T/conf2/policy.d/70-other.conf"
: >"$T/file-c"

# complete LINE: what the completion offers for LINE (the cursor at its end),
# sorted, one line; a LINE ending in a blank completes a new word.  The words
# are split as bash splits them with its default COMP_WORDBREAKS ('=' apart).
complete_line() {
	bash --norc --noprofile -c '
		. "$1" || exit 1
		line=$2
		words=()
		read -ra words <<<"${line//=/ = }"
		[ "${line: -1}" = " " ] && words+=("")
		COMP_WORDS=("${words[@]}")
		COMP_CWORD=$((${#words[@]} - 1))
		COMP_LINE=$line
		COMP_POINT=${#line}
		_mthpd
		printf "%s\n" "${COMPREPLY[@]}" | sort | paste -sd" "' _ "$COMPLETION" "$1" 2>&1
}
# expect LINE WANT: the completion of LINE is WANT (sorted, blank-separated)
expect() {
	local got
	got=$(complete_line "$1")
	echo "== '$1' -> '$got'"
	[ "$got" = "$2" ] || fail "'$1': '$got', expected '$2'"
}

expect "mthpd " "check-config collapse plan run status top version"
expect "mthpd st" "status"
expect "mthpd c" "check-config collapse"
expect "mthpd --" "--help --version"
expect "mthpd status --" "--config-dir --help --json --limit --policy --unit"
expect "mthpd status --j" "--json"
expect "mthpd status --json --l" "--limit"
expect "mthpd run --" "--config-dir --help --no-sandbox --proc-root --sys-root"
expect "mthpd check-config --" "--config-dir --help --sys-root"
expect "mthpd collapse --max" "--max-ptes-none --max-ptes-shared --max-ptes-swap"
expect "mthpd status --config-dir $T/di" "$T/dir-a $T/dir-b"
expect "mthpd status --config-dir=$T/di" "$T/dir-a $T/dir-b"
# --policy: the names in the --config-dir given on the line, with and without .conf
expect "mthpd status --config-dir $T/conf --policy " "50-redis 50-redis.conf 60-java 60-java.conf"
expect "mthpd status --config-dir $T/conf --policy 6" "60-java 60-java.conf"
expect "mthpd status -c $T/conf2 --json --policy " "70-other 70-other.conf"
expect "mthpd status --config-dir=$T/conf2 --policy=" "70-other 70-other.conf"
expect "mthpd status --config-dir $T/nowhere --policy " ""
# plan --policy also takes a FILE
expect "mthpd plan --config-dir $T/conf --policy $T/fi" "$T/file-c"
expect "mthpd plan --sizes " "128K 16K 1M 256K 2M 32K 512K 64K"
expect "mthpd plan --sizes 2M,6" "2M,64K"
expect "mthpd plan --sizes 2M,64K," "2M,64K,128K 2M,64K,16K 2M,64K,1M 2M,64K,256K 2M,64K,32K 2M,64K,512K"
expect "mthpd status --limit " ""
expect "mthpd top --" "--config-dir --help --interval --iterations --policy --unit"
expect "mthpd top --config-dir $T/conf --policy 5" "50-redis 50-redis.conf"
got=$(complete_line "mthpd collapse --pid $$")
[[ " $got " == *" $$ "* ]] || fail "'mthpd collapse --pid $$': its own pid is not offered: '$got'"

# every option of --help is completed for some command, and no other
help_opts=$("$MTHPD" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u | paste -sd' ')
comp_opts=$(for c in plan collapse run check-config status top; do complete_line "mthpd $c --"; done |
	tr ' ' '\n' | grep -v -- '--no-sandbox' | sort -u | paste -sd' ')
comp_opts="$comp_opts --version"
comp_opts=$(tr ' ' '\n' <<<"$comp_opts" | sort -u | paste -sd' ')
[ "$help_opts" = "$comp_opts" ] || fail "--help and the completion disagree:
  --help:     $help_opts
  completion: $comp_opts"
# and the commands of --help
help_cmds=$("$MTHPD" --help | sed -nE 's/^(Usage:)? +mthpd ([a-z][a-z-]*).*/\2/p' | sort -u | paste -sd' ')
comp_cmds=$(complete_line "mthpd " | tr ' ' '\n' | grep -vx version | paste -sd' ')
[ "$help_cmds" = "$comp_cmds" ] || fail "the commands of --help ($help_cmds) are not those completed ($comp_cmds)"

[ "$FAILS" = 0 ] || { echo "$FAILS check(s) failed"; exit 1; }
echo PASS
