package cli

import "github.com/spf13/cobra"

func newChatCmd(stdio IO) *cobra.Command {
	return &cobra.Command{Use: "chat", Short: "Start the interactive agent (default)", RunE: notYet("synapse chat")}
}
