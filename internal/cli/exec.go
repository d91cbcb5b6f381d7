package cli

import "github.com/spf13/cobra"

func newExecCmd(stdio IO) *cobra.Command {
	return &cobra.Command{Use: "exec", Short: "Run Bash-tool commands without a model", RunE: notYet("synapse exec")}
}
