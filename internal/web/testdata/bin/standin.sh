#!/usr/bin/env bash
# Stand-in for an agent CLI's TUI, used by the web console tests. It draws with
# ANSI sequences (clear screen, cursor moves, colours), reports its terminal
# size (again whenever it changes), starts a child and a grandchild that run
# until killed, and answers line commands:
#   write PATH   try to create PATH, print WRITE-OK PATH or WRITE-DENIED PATH
#   flood N      print N bytes of text
#   size         print the terminal size
#   env NAME     print ENV NAME=<value>, or ENV NAME unset
#   exit N       exit with status N
#   deaf N       read no input for N seconds (then print DEAF-DONE), in
#                non-canonical mode, where the PTY's input buffer fills up
#                instead of dropping what does not fit a line
#   anything     echoed back as "echo: <line>"
name=${1:-standin}
size() {
  local s
  s=$(stty size 2>/dev/null) || s="? ?"
  printf 'size=%sx%s\n' "${s#* }" "${s% *}"
}
# Screen: clear, home, a coloured title, a box drawn by cursor moves.
printf '\033[2J\033[H\033[1;32mSTANDIN %s\033[0m ready\n' "$name"
printf '\033[3;5H\033[44;37m+------+\033[0m\033[4;5H\033[44;37m| DRAW |\033[0m\033[5;5H\033[44;37m+------+\033[0m\033[7;1H'
printf 'cwd=%s\nhome=%s\ntmp=%s\n' "$PWD" "$HOME" "$TMPDIR"
size
# A child and a grandchild in the same process group: Stop must take them too.
sleep "${STANDIN_SLEEP:-3600}" &
bash -c 'sleep "${STANDIN_SLEEP:-3600}" & wait' &
printf 'CHILDREN-STARTED\n'
last=$(stty size 2>/dev/null)
partial=
while true; do
  # Poll for input so that a size change is noticed too (bash does not run a
  # WINCH trap while `read` waits).
  if IFS= read -r -t 0.1 line; then
    line=$partial$line
    partial=
    case $line in
      write\ *)
        p=${line#write }
        if (printf 'x\n' > "$p") 2>/dev/null; then printf 'WRITE-OK %s\n' "$p"; else printf 'WRITE-DENIED %s\n' "$p"; fi ;;
      flood\ *)
        head -c "${line#flood }" /dev/zero | tr '\0' 'y'
        printf '\nFLOOD-DONE\n' ;;
      size) size ;;
      env\ *)
        n=${line#env }
        if [ -n "${!n+x}" ]; then printf 'ENV %s=%s\n' "$n" "${!n}"; else printf 'ENV %s unset\n' "$n"; fi ;;
      exit\ *) exit "${line#exit }" ;;
      deaf\ *) stty -icanon -echo; sleep "${line#deaf }"; stty icanon echo; printf 'DEAF-DONE\n' ;;
      *) printf 'echo: %s\n' "$line" ;;
    esac
  else
    rc=$?
    [ "$rc" -gt 128 ] || exit 0 # end of input
    # A timeout that strikes between the bytes of a line (the script was
    # descheduled on a busy machine) leaves them in line: keep them.
    partial=$partial$line
  fi
  now=$(stty size 2>/dev/null)
  if [ "$now" != "$last" ]; then
    last=$now
    size
  fi
done
