# Synapse persistent-shell driver. Go writes this text to bash's stdin; bash
# runs it and then serves commands read from the same stdin (see proc.go for
# the Go side). Everything goes through the inherited stdin/stdout/stderr
# pipes, so it works unchanged inside bubblewrap or sandbox-exec.
#
# Request:  "<id> <n>\n" followed by exactly n lines of command text.
# Response: on stdout and stderr "<id>:start\n" before the command's output;
#           on stderr "<id>:end\n" after it; on stdout
#           "<id>:end:<status>:<kind>\n<cwd>\n<id>:jobs\n<job pgids>\n<id>:fin\n".
# kind is "done", or "exit" when the command made the shell exit.
#
# There are no functions here on purpose: the cancel trap runs `return`,
# which must leave the user's sourced command, never a driver function.
# "builtin" guards against user functions named like the builtins we use.

# Job control gives every pipeline its own process group, so a cancel can kill
# a job's whole group without touching the shell.
set -m
# An inherited CDPATH would make `cd dir` land somewhere other than the
# ./dir the command names (and the ask mode's check reads): cd is relative.
builtin unset CDPATH
# Private copies of the response pipes. Commands run with fds 1 and 2
# redirected from these, so a command's `exec >file` only lasts for that
# command and the driver's own writes (plain fds 1 and 2, which saves
# syscalls per command) still reach Go.
exec 61>&1 62>&2
# The driver's own code runs with xtrace off; see __syn_flags below.
exec 59>/dev/null
__syn_src=
# Sourcing the command text (instead of eval) lets the cancel trap abort it
# with `return`, while `declare` in a command still makes globals.
[[ -e /dev/fd/0 ]] && __syn_src=1
builtin printf '%s:ready:%s\n%s\n%s:fin\n' @ID@ "$$" "$PWD" @ID@ >&61
while IFS=' ' builtin read -r __syn_id __syn_n; do
	[[ -n ${__syn_id-} && ${__syn_n-} =~ ^[0-9]+$ ]] || continue
	builtin mapfile -n "$__syn_n" __syn_lines
	builtin printf -v __syn_cmd '%s' "${__syn_lines[@]}"
	builtin unset __syn_lines
	# Cancel: a DEBUG trap that returns before every further simple command
	# unwinds the user's functions and then the sourced command itself, so
	# nothing after the interrupted part runs. -T makes functions see it.
	builtin trap 'if [[ -n ${__syn_busy-} ]]; then __syn_cancelled=1; [[ $- == *T* ]] || __syn_untrace=1; builtin set -T; builtin trap "builtin return 130 2>/dev/null" DEBUG; fi' USR1
	# Move to the background (Ctrl+B): Go sends USR2, then stops the
	# command's process groups; bash's wait returns, the same unwinding as a
	# cancel ends the sourced command, and `bg` below resumes the stopped job.
	builtin trap 'if [[ -n ${__syn_busy-} ]]; then __syn_detach=1 __syn_cancelled=1; [[ $- == *T* ]] || __syn_untrace=1; builtin set -T; builtin trap "builtin return 130 2>/dev/null" DEBUG; fi' USR2
	builtin trap '__syn_st=$?; if [[ -n ${__syn_busy-} ]]; then __syn_busy=; builtin printf "%s:end\n" "$__syn_id" >&62; builtin printf "%s:end:%s:exit\n%s\n%s:jobs\n%s:fin\n" "$__syn_id" "$__syn_st" "$PWD" "$__syn_id" "$__syn_id" >&61; fi' EXIT
	# Keep a user's `set -x` for their commands only: restore it inside the
	# command text (same line, so line numbers stay right).
	__syn_pre=
	[[ ${__syn_flags-} == *x* ]] && __syn_pre='builtin set -x; '
	__syn_busy=1
	builtin printf '%s:start\n' "$__syn_id" >&2
	builtin printf '%s:start\n' "$__syn_id"
	if [[ -n $__syn_src && ${#__syn_cmd} -lt 60000 ]]; then
		# Small commands arrive through a pipe (bash buffers here-strings
		# up to the pipe size in memory), so no temporary file is needed.
		# The one-pass loop catches a top-level `break`/`continue` of the
		# command, which would otherwise end the driver's own loop.
		for __syn_once in 1; do builtin source /dev/fd/63; done 63<<<"$__syn_pre$__syn_cmd" </dev/null >&61 2>&62
	else
		for __syn_once in 1; do builtin eval "$__syn_pre$__syn_cmd"; done </dev/null >&61 2>&62
	fi
	# Traces of this group go to /dev/null; afterwards xtrace is off.
	{ __syn_st=$? __syn_flags=$-; builtin set +x; } 2>&59
	# Not busy first: a late USR1 then does nothing, so the check below
	# cannot miss a DEBUG trap installed after it.
	__syn_busy=
	if [[ -n ${__syn_cancelled-} ]]; then
		builtin trap - DEBUG
		[[ -n ${__syn_untrace-} ]] && builtin set +T
		__syn_cancelled= __syn_untrace=
	fi
	if [[ -n ${__syn_detach-} ]]; then
		builtin bg >&59 2>&59
		__syn_detach=
	fi
	builtin unset __syn_cmd
	builtin printf '%s:end\n' "$__syn_id" >&2
	builtin printf '%s:end:%s:done\n%s\n%s:jobs\n' "$__syn_id" "$__syn_st" "$PWD" "$__syn_id"
	builtin jobs -p
	builtin printf '%s:fin\n' "$__syn_id"
done
