package cli

import "github.com/spf13/cobra"

func newRunCmd(stdio IO) *cobra.Command {
	return &cobra.Command{Use: "run", Short: "Run one task without a REPL", RunE: notYet("synapse run")}
}
