package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/synapse-agent/synapse/internal/app"
	"github.com/synapse-agent/synapse/internal/textutil"
)

func newMCPCmd(stdio IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Manage MCP configuration (project approvals)",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	var list, yes bool
	approve := &cobra.Command{
		Use:   "approve [--list] [--yes]",
		Short: "Review and approve this project's MCP files (.mcp.json, ./mcp_servers.json)",
		Long: `A project's .mcp.json and ./mcp_servers.json come with the repository (and the
agent's own commands can write them), yet Synapse starts their servers or
connects to their URLs on your behalf. So they are used only once you approve
them, per project directory and per file content: a changed file needs a new
approval. This command shows what each unapproved file defines and, once you
answer y (or pass --yes), records the approval in $SYNAPSE_HOME/mcp.
The REPL asks the same question at start-up; synapse run and exec skip
unapproved servers.

A project file expands only the variables listed in settings.json "shareEnv"
(e.g. "shareEnv": ["GITHUB_TOKEN"]); every other ${VAR} stays empty.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, cwd, err := newApp(stdio)
			if err != nil {
				return err
			}
			if list {
				return listApprovals(stdio.Out, a, cwd)
			}
			pending := a.ProjectMCP(cwd)
			if len(pending) == 0 {
				fmt.Fprintf(stdio.Out, "Nothing to approve: %s has no unapproved MCP file.\n", cwd)
				return nil
			}
			ask := !yes
			if ask && !isTerminalReader(stdio.In) {
				return exitCode(2, errors.New("stdin is not a terminal: pass --yes to approve what `synapse mcp approve --list` shows, or run it in a terminal to be asked"))
			}
			for _, p := range pending {
				fmt.Fprint(stdio.Out, p.Describe())
				if ask {
					ok, err := askYesNo(stdio.In, stdio.Out, "Approve this file for "+cwd+"? [y/N] ")
					if err != nil {
						return exitCode(1, err)
					}
					if !ok {
						fmt.Fprintln(stdio.Out, "Not approved: its servers stay off.")
						continue
					}
				}
				if err := a.ApproveProjectMCP(cwd, p); err != nil {
					return exitCode(1, err)
				}
				fmt.Fprintf(stdio.Out, "Approved %s for %s.\n", p.File, cwd)
			}
			return nil
		},
	}
	approve.Flags().BoolVar(&list, "list", false, "list the approvals on record and this project's unapproved files")
	approve.Flags().BoolVarP(&yes, "yes", "y", false, "approve without asking (after reviewing --list)")
	cmd.AddCommand(approve)
	return cmd
}

func listApprovals(w io.Writer, a *app.App, cwd string) error {
	list, err := a.MCPApprovals().List()
	if err != nil {
		return exitCode(1, err)
	}
	if len(list) == 0 {
		fmt.Fprintln(w, "No project MCP file is approved.")
	}
	for _, ap := range list {
		fmt.Fprintln(w, textutil.Sanitize(fmt.Sprintf("%s  %s  servers: %s  (approved %s, sha256 %s)",
			ap.Project, ap.File, strings.Join(ap.Servers, ", "), ap.ApprovedAt.Format("2006-01-02 15:04"), ap.SHA256[:min(12, len(ap.SHA256))])))
	}
	for _, p := range a.ProjectMCP(cwd) {
		fmt.Fprint(w, "\nNot approved: ", p.Describe())
	}
	return nil
}

func isTerminalReader(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// askYesNo prints question and reads one answer line. It reads byte by byte
// so that nothing after the line is consumed (the REPL reads on).
func askYesNo(in io.Reader, out io.Writer, question string) (bool, error) {
	fmt.Fprint(out, question)
	var line []byte
	b := make([]byte, 1)
	for {
		n, err := in.Read(b)
		if n == 1 {
			if b[0] == '\n' {
				break
			}
			line = append(line, b[0])
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, fmt.Errorf("read the answer: %w", err)
		}
	}
	a := strings.ToLower(strings.TrimSpace(string(line)))
	return a == "y" || a == "yes", nil
}
