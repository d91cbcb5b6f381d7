package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/synapse-agent/synapse/internal/app"
	"github.com/synapse-agent/synapse/internal/session"
)

func newSessionsCmd(stdio IO) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List saved sessions, most recent first (resume one with --resume ID)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := app.New(stdio.Getenv)
			if err != nil {
				return exitCode(1, err)
			}
			store := a.SessionStore(func(err error) { fmt.Fprintln(stdio.Err, "synapse: warning:", err) })
			entries, err := store.List()
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
			if len(entries) == 0 {
				fmt.Fprintf(stdio.Out, "No saved sessions in %s yet.\n", a.Config.SessionsDir)
				return nil
			}
			tw := tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tUPDATED\tMSGS\tTOKENS\tCOST\tTITLE")
			for _, e := range entries {
				// session.Title again: an index written by an older version
				// may hold a title with escape sequences.
				cost := "-"
				if e.Usage.Priced {
					cost = fmt.Sprintf("$%.4f", e.Usage.CostUSD)
				}
				tokens := e.Usage.InputTokens + e.Usage.OutputTokens + e.Usage.CacheReadTokens + e.Usage.CacheCreationTokens
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", e.ID, e.UpdatedAt.Local().Format(time.DateTime), e.MessageCount, tokens, cost, session.Title(e.Title))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the index entries as JSON")
	return badUsageExits2(cmd)
}
