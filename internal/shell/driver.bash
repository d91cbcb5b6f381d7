# Synapse persistent-shell driver. Go writes this text to bash's stdin after
# a one-line loader (driverInput in proc.go) that moves stdin to fd 60,
# reads this text in one read and evals it; it then serves commands read
# from fd 60. Everything goes through the inherited stdin/stdout/stderr
# pipes, so it works unchanged inside bubblewrap or sandbox-exec.
#
# Request:  a 31-byte header "<id> <n>\n" (id: "syn" and 16 hex digits; n:
#           10 decimal digits) followed by exactly n bytes of command text,
#           all ASCII: with "~" for the space, the text is escaped for
#           printf %b (its other bytes as \xHH), since `read -N` counts
#           characters of the locale. A request shorter than 256 bytes is
#           padded to 256 with newlines, so the driver takes a small one in
#           one read. While a command runs, Go writes only "D": it asks
#           to move the command to the background (see the USR1 trap).
# Response: on stdout and stderr "<id>:start\n" before the command's output;
#           on stdout after it
#           "<id>:end:<status>:<kind>:<cwd>:<id>:jobs:<job pgids>\n<id>:fin\n"
#           (one pgid a line; none, and no newline, without jobs). stderr
#           has no end marker: the command's stderr is all in its pipe
#           when that trailer is written, so Go reads stderr to its end then.
# kind is "done", or "exit" when the command made the shell exit.
#
# Every system call here runs once per command, so the loop is shaped to make
# few (issue 30). Bash makes a redirection of a descriptor that is open cost
# about ten calls (it saves a copy, and restores and closes it afterwards),
# one onto a closed descriptor three (and a close to undo it), and one that
# opens a path onto the closed descriptor an open(2) fills (the lowest free
# number) just that open and the close. So between commands the driver keeps
# fds 0, 1 and 2 closed; each command opens /dev/null as its stdin and gets
# fds 1 and 2 from the private copies of the response pipes, 61 and 62. (Not
# by opening /dev/fd/61: fewer calls, but a lookup through /proc costs more
# than they do.) The requests come on 60, where the loader put them. That a command's `exec >file`
# lasts for that command only comes with it, and the driver's own lines
# write their traces (after a command that turned on `set -x`) to a closed
# fd 2, which drops them. A pipe cannot be read ahead by a line-reading
# `read` (one byte per system call), hence the fixed-width requests.
#
# There are no functions here on purpose: the cancel trap runs `return`,
# which must leave the user's sourced command, never a driver function.
# "builtin" guards against user functions named like the builtins we use.

# Job control gives every pipeline its own process group, so a cancel can kill
# a job's whole group without touching the shell.
set -m
# The loader's copy of this text (driverInput) is not the user's variable.
builtin unset __syn_drv
# An inherited CDPATH would make `cd dir` land somewhere other than the
# ./dir the command names (and the ask mode's check reads): cd is relative.
builtin unset CDPATH
__syn_fd=
exec 59>/dev/null 61>&1 62>&2
# Sourcing the command text (instead of eval) lets the cancel trap abort it
# with `return`, while `declare` in a command still makes globals; it needs
# /dev/fd.
[[ -e /dev/fd/61 ]] && __syn_fd=1
# USR2 once moved a command to the background; Go no longer sends it, and it
# still does not end the shell: it cancels, as USR1 does without a "D".
builtin trap 'if [[ -n ${__syn_busy-} ]]; then __syn_cancelled=1; [[ $- == *T* ]] || __syn_untrace=1; builtin set -T; builtin trap "builtin return 130 2>/dev/null" DEBUG; fi' USR2
builtin printf '%s:ready:%s\n%s\n%s:fin\n' @ID@ "$$" "$PWD" @ID@ >&61
# The exit at the loop's end keeps the driver's end whatever ends the loop.
# TMOUT= : a command's `export TMOUT=n` would otherwise end the loop's read
# after n idle seconds.
exec 0<&- 1>&- 2>&-; while TMOUT= builtin read -r -N 256 -u 60 __syn_h; do
	# A move to the background asked for as its command ended, too late
	# for the trap to take its "D", left it before this request.
	while [[ $__syn_h == D* ]]; do
		TMOUT= builtin read -r -N 1 -u 60 __syn_c || builtin exit 2
		__syn_h=${__syn_h:1}$__syn_c
	done
	# Go never sends anything else; a stream out of step cannot be resynced.
	[[ $__syn_h == syn????????????????[' ~'][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]$'\n'* ]] ||
		{ builtin printf 'synapse driver: malformed request %q\n' "${__syn_h:0:31}" >&62; builtin exit 2; }
	__syn_id=${__syn_h:0:19} __syn_n=$((10#${__syn_h:20:10}))
	if ((__syn_n <= 225)); then
		__syn_cmd=${__syn_h:31:__syn_n}
	else
		TMOUT= builtin read -r -N "$((__syn_n - 225))" -u 60 __syn_cmd || builtin exit 2
		__syn_cmd=${__syn_h:31}$__syn_cmd
	fi
	[[ ${__syn_h:19:1} == '~' ]] && builtin printf -v __syn_cmd %b "$__syn_cmd"
	# Cancel: a DEBUG trap that returns before every further simple command
	# unwinds the user's functions and then the sourced command itself, so
	# nothing after the interrupted part runs. -T makes functions see it.
	# Move to the background (Ctrl+B): Go writes "D" to the requests, sends
	# USR1 too, then stops the command's process groups; bash's wait
	# returns, the same unwinding ends the sourced command, and `bg` below
	# resumes the stopped job. (One signal for both: setting a trap costs
	# three system calls, and it is set again for every command in case
	# the last one changed it.)
	builtin trap 'if [[ -n ${__syn_busy-} ]]; then __syn_cancelled=1; builtin read -r -t 0 -u 60 && TMOUT= builtin read -r -N 1 -u 60 __syn_c && [[ $__syn_c == D ]] && __syn_detach=1; [[ $- == *T* ]] || __syn_untrace=1; builtin set -T; builtin trap "builtin return 130 2>/dev/null" DEBUG; fi' USR1
	builtin trap '__syn_st=$?; if [[ -n ${__syn_busy-} ]]; then __syn_busy=; builtin printf "%s:end:%s:exit:%s:%s:jobs:%s:fin\n" "$__syn_id" "$__syn_st" "$PWD" "$__syn_id" "$__syn_id" >&61; fi' EXIT
	# Keep a user's `set -x` for their commands only: restore it inside the
	# command text (same line, so line numbers stay right). Assignments
	# share statements where they can: each statement costs bash a few
	# microseconds.
	__syn_pre= __syn_busy=1 __syn_src=
	[[ ${__syn_flags-} == *x* ]] && __syn_pre='builtin set -x; '
	# Small commands arrive through a pipe (bash buffers here-strings up
	# to the pipe size in memory), so no temporary file is needed; larger
	# ones go through eval.
	[[ -n $__syn_fd && ${#__syn_cmd} -lt 60000 ]] && __syn_src=$__syn_pre$__syn_cmd
	# The command's stdin is /dev/null, opened straight into the closed fd
	# 0 for the round trip. The here-string (its pipe made in the free fds
	# 1 and 2, then moved to 63) comes before the start markers, which then
	# reach Go together.
	{
		builtin printf '%s:start\n' "$__syn_id" 1>&62
		# The command's fds 1 and 2 are the response pipes; closing them
		# afterwards undoes whatever it did to them. The one-pass loop
		# catches a top-level `break`/`continue` of the command, which
		# would otherwise end the driver's own loop.
		if [[ -n $__syn_src ]]; then
			{
				builtin printf '%s:start\n' "$__syn_id"
				for __syn_once in 1; do builtin source /dev/fd/63; done
			} 1>&61 2>&62
		else
			{
				builtin printf '%s:start\n' "$__syn_id"
				for __syn_once in 1; do builtin eval "$__syn_pre$__syn_cmd"; done
			} 1>&61 2>&62
		fi
		# Not busy first: a late USR1 then does nothing, so the check below
		# cannot miss a DEBUG trap installed after it. Emptied, the command
		# text does not stay in memory.
		__syn_st=$? __syn_flags=$- __syn_busy= __syn_cmd= __syn_src=
		# Afterwards xtrace is off (its traces go to the closed fd 2).
		builtin set +x
		if [[ -n ${__syn_cancelled-} ]]; then
			builtin trap - DEBUG
			[[ -n ${__syn_untrace-} ]] && builtin set +T
			__syn_cancelled= __syn_untrace=
			# A move to the background is a cancel too.
			if [[ -n ${__syn_detach-} ]]; then
				builtin bg >&59
				__syn_detach=
			fi
		fi
		# `jobs -p` (a write of its own) runs only once a job was ever put
		# in the background ($! is set): before that there is none.
		if [[ -z ${!:-} ]]; then
			builtin printf '%s:end:%s:done:%s:%s:jobs:%s:fin\n' "$__syn_id" "$__syn_st" "$PWD" "$__syn_id" "$__syn_id" 1>&61
		else
			{
				builtin printf '%s:end:%s:done:%s:%s:jobs:' "$__syn_id" "$__syn_st" "$PWD" "$__syn_id"
				builtin jobs -p
				builtin printf '%s:fin\n' "$__syn_id"
			} 1>&61
		fi
	} 0</dev/null 63<<<"$__syn_src"
done; builtin exit 0
