package agentsh

import (
	"context"
	"os"
	"strings"

	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/router"
)

// bash runs `bash <command>` in the agent's shell session, through the same
// executor (and so the same sandbox, cwd and exported variables) as a native
// command. `bash --help` is answered by Run before this is reached; flags of
// the command itself (`bash echo -h`) belong to the command.
func (s *Shell) bash(ctx context.Context, rest string) command.Result {
	cmdline := strings.TrimSpace(rest)
	if cmdline == "" {
		return usageError("bash", "missing command")
	}
	if s.opts.Exec == nil {
		return failf("bash", "no shell session is available in this context")
	}
	cwd := s.cwd()
	// `bash -c '...'`, `bash -x script.sh` and `bash script.sh` mean the bash
	// program itself: run the line as written so bash reads the options or the
	// script file. Otherwise the arguments are the command to run.
	first := router.FirstWord(cmdline)
	if strings.HasPrefix(first, "-") || s.isScript(first, cwd) {
		cmdline = "bash " + cmdline
	}
	res, err := s.opts.Exec.Execute(ctx, cmdline, cwd)
	if err != nil {
		if ctx.Err() != nil {
			return interrupted("bash")
		}
		return failf("bash", err.Error())
	}
	return res
}

// isScript reports whether word names an existing regular file relative to
// cwd (not a command found on PATH), as in `bash build.sh`.
func (s *Shell) isScript(word, cwd string) bool {
	if word == "" || strings.ContainsAny(word, "$`'\"|&;<>(){}*?[]=") {
		return false
	}
	p := word
	if s.opts.Home != "" && strings.HasPrefix(p, "~") {
		p = s.resolve(p)
	} else if !strings.HasPrefix(p, "/") {
		p = cwd + "/" + p
	}
	info, err := os.Stat(p)
	return err == nil && info.Mode().IsRegular()
}
