package cli

import "github.com/spf13/cobra"

func newSandboxCmd(stdio IO) *cobra.Command {
	return &cobra.Command{Use: "sandbox", Short: "Run commands under the sandbox policy", RunE: notYet("synapse sandbox")}
}
