#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The man pages and the bash completion the build writes from the option tables
# (tools/util/cli_man.c, cli_complete.c), checked against the same tables (the hidden
# --list-options): every page renders with `man -l` without a warning from groff, and
# every option of every command is in its command's page and in what bash's completion
# function offers for `PROG CMD --<TAB>` (a hidden one in neither); the commands are
# offered after the program's name, an option's names after it (--mode rxdrop...),
# and interface names for --iface and for IFACE arguments (those of a namespace made
# here, read from its /sys).
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
xt_require_root
command -v man >/dev/null || xt_skip "man missing (tools/setup/install-deps.sh installs man-db)"
M=$XT_BUILD/man C=$XT_BUILD/completion
for b in xpile xpile-loader xpile-agent xpile-bench; do
	[ -x "$XT_BUILD/$b" ] && [ -s "$M/$b.pages" ] && [ -s "$C/$b" ] || xt_skip "$b, its pages or its completion not built: run make"
done

# complete FILE WORDS...: what the completion function offers when the last word is
# the one being completed, one a line, from a clean bash.
complete_words() {
	# shellcheck disable=SC2016 # expanded by the inner bash
	env -i PATH="$PATH" bash --norc --noprofile -c '
		source "$1" || exit 1
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		fn=$(complete -p "$1" | sed -n "s/.*-F \([^ ]*\) .*/\1/p")
		[ -n "$fn" ] || { echo "no completion function for $1" >&2; exit 1; }
		"$fn" || exit 1
		printf "%s\n" "${COMPREPLY[@]}"' _ "$@"
}

pages=0 checked=0
for b in xpile xpile-loader xpile-agent xpile-bench; do
	bin=$XT_BUILD/$b
	[ "$(wc -l <"$M/$b.pages")" = $(($("$bin" --commands | wc -l) + 1)) ] ||
		xt_fail "$b: $(wc -l <"$M/$b.pages") pages for $("$bin" --commands | wc -l) commands"
	declare -A text=() offered=()
	while read -r page; do
		warn=$(MANWIDTH=100 man --warnings -l "$M/$page" 2>&1 >/dev/null)
		[ -z "$warn" ] || xt_fail "$page: groff warns: $warn"
		text[$page]=$(MANWIDTH=100 man -P cat -l "$M/$page" 2>/dev/null | col -b)
		grep -q '^NAME' <<<"${text[$page]}" && grep -q '^SYNOPSIS' <<<"${text[$page]}" &&
			grep -q '^OPTIONS' <<<"${text[$page]}" || xt_fail "$page: no NAME, SYNOPSIS or OPTIONS"
		pages=$((pages + 1))
	done <"$M/$b.pages"
	single=$([ -z "$("$bin" --commands)" ] && echo 1)
	while IFS=$'\t' read -r _ cmd opt vis; do
		page=$b-$cmd.8
		[ -n "$single" ] && page=$b.8
		[ -n "${offered[$cmd]+x}" ] || offered[$cmd]=$(complete_words "$C/$b" "$b" "$cmd" --) ||
			xt_fail "$b $cmd --<TAB>: the completion function failed"
		if [ "$vis" = hidden ]; then
			grep -qxF -- "$opt" <<<"${offered[$cmd]}" && xt_fail "$b $cmd: hidden $opt offered"
			continue
		fi
		grep -qE -- "(^|[ ,])$opt( |,|$)" <<<"${text[$page]}" || xt_fail "$page does not name $opt"
		grep -qxF -- "$opt" <<<"${offered[$cmd]}" || xt_fail "$b $cmd --<TAB> does not offer $opt"
		checked=$((checked + 1))
	done < <("$bin" --list-options | grep '^opt')
	# The program page names every command; the commands are what PROG <TAB> offers.
	for cmd in $("$bin" --commands); do
		grep -q "$b-$cmd(8)" <<<"${text[$b.8]}" || xt_fail "$b.8 does not point to $b-$cmd(8)"
		complete_words "$C/$b" "$b" "" | grep -qx "$cmd" || xt_fail "$b <TAB> does not offer $cmd"
	done
	unset text offered
done
echo "$pages pages render cleanly; $checked options each in its page and its completion"

# Values and arguments.
got=$(complete_words "$C/xpile" xpile run --mode "" | tr '\n' ' ')
[ "$got" = "rxdrop txonly l2fwd fwd router " ] || xt_fail "xpile run --mode <TAB>: '$got'"
got=$(complete_words "$C/xpile" xpile run --xsk-mode = z | tr '\n' ' ')
[ "$got" = "zero-copy " ] || xt_fail "xpile run --xsk-mode=z<TAB>: '$got'"
got=$(complete_words "$C/xpile-loader" xpile-loader rule "" | tr '\n' ' ')
[ "$got" = "add del list replace default " ] || xt_fail "xpile-loader rule <TAB>: '$got'"
xt_ns_var A man
xt_veth "$A" mc0 "$A" mc1
for words in "xpile run --iface" "xpile-loader load -m skb" "xpile-loader rule add" \
	"xpile-loader status --json" "xpile-bench gen --iface"; do
	# shellcheck disable=SC2086 # the words
	got=$(ip netns exec "$A" bash -c "$(declare -f complete_words); complete_words \"\$@\"" _ \
		"$C/${words%% *}" $words "" | tr '\n' ' ')
	[ "$got" = "lo mc0 mc1 " ] || xt_fail "$words <TAB> in a namespace with lo, mc0, mc1: '$got'"
done
echo "values, commands and interface names completed"
echo "xpile run --<TAB>:"
complete_words "$C/xpile" xpile run -- | column -c 100 | expand | sed 's/^/  /'
echo PASS
