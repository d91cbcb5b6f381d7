package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/synapse-agent/synapse/internal/app"
	"github.com/synapse-agent/synapse/internal/fsutil"
	"github.com/synapse-agent/synapse/internal/session"
	"github.com/synapse-agent/synapse/internal/textutil"
)

func newSessionsCmd(stdio IO) *cobra.Command {
	var asJSON, all bool
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List this project's saved sessions (the git repository you are in, else this directory), most recent first (--all: every project; resume one with --resume ID)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := app.New(stdio.Getenv)
			if err != nil {
				return exitCode(1, err)
			}
			store := a.SessionStore(func(err error) { fmt.Fprintln(stdio.Err, "synapse: warning:", err) })
			cwd, err := os.Getwd()
			if err != nil {
				return exitCode(1, fmt.Errorf("cannot find the working directory: %w", err))
			}
			var entries []session.Entry
			if all {
				entries, err = store.List()
			} else {
				entries, err = store.ListProject(cwd)
			}
			if err != nil {
				return exitCode(1, err)
			}
			if asJSON {
				if entries == nil {
					entries = []session.Entry{}
				}
				enc := json.NewEncoder(stdio.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(entries)
			}
			switch {
			case len(entries) == 0 && all:
				fmt.Fprintf(stdio.Out, "No saved sessions in %s yet.\n", a.Config.SessionsDir)
				return nil
			case len(entries) == 0:
				fmt.Fprintf(stdio.Out, "No saved sessions for project %s yet; `synapse sessions --all` lists every project's.\n", textutil.Sanitize(fsutil.ProjectRoot(cwd)))
				return nil
			}
			tw := tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
			header := "ID\tUPDATED\tMSGS\tTOKENS\tCOST\tTITLE"
			if all {
				header += "\tDIRECTORY"
			}
			fmt.Fprintln(tw, header)
			for _, e := range entries {
				// session.Title again: an index written by an older version
				// may hold a title with escape sequences.
				cost := "-"
				if e.Usage.Priced {
					cost = fmt.Sprintf("$%.4f", e.Usage.CostUSD)
				}
				tokens := e.Usage.InputTokens + e.Usage.OutputTokens + e.Usage.CacheReadTokens + e.Usage.CacheCreationTokens
				title := session.Title(e.Title)
				if e.HistoryMissing {
					// Listed so that it is not lost from sight; --resume ID starts it over empty.
					title += " (history missing)"
				}
				row := fmt.Sprintf("%s\t%s\t%d\t%d\t%s\t%s", e.ID, e.UpdatedAt.Local().Format(time.DateTime), e.MessageCount, tokens, cost, title)
				if all {
					row += "\t" + textutil.Sanitize(e.Cwd)
				}
				fmt.Fprintln(tw, row)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the index entries as JSON")
	cmd.Flags().BoolVar(&all, "all", false, "list the sessions of every project, not only this one's")
	return badUsageExits2(cmd)
}
