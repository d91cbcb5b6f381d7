package cli

import "github.com/spf13/cobra"

func newServeCmd(stdio IO) *cobra.Command {
	return &cobra.Command{Use: "serve", Short: "Start the web console", RunE: notYet("synapse serve")}
}
