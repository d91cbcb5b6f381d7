package cli

import "github.com/spf13/cobra"

func newSessionsCmd(stdio IO) *cobra.Command {
	return &cobra.Command{Use: "sessions", Short: "List saved sessions", RunE: notYet("synapse sessions")}
}
