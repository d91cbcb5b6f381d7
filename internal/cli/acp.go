package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/synapse-agent/synapse/internal/acp"
	"github.com/synapse-agent/synapse/internal/tool"
)

func newACPCmd(stdio IO) *cobra.Command {
	var provider, model, mode string
	cmd := &cobra.Command{
		Use:   "acp",
		Short: "Serve the Agent Client Protocol on stdin/stdout (for editors such as Zed)",
		Long: `Serve the Agent Client Protocol (JSON-RPC over stdin/stdout) so that an editor
can use Synapse as its agent. Configure the editor to run "synapse acp".

Each ACP session is a Synapse session in the editor's working directory, saved
like any other (session/load resumes it; "synapse sessions" lists it), with the
editor's MCP servers added to the configured ones (session/resume continues one
without replaying it; session/list lists them). Answers, thinking, tool calls
(with the command's output as it runs, diffs for write and edit) and the todo
list (as the plan) stream as session/update. A write the sandbox blocks, a clone
the model asks for and, in the ask mode, a command that may change files are
asked as session/request_permission. Prompts may carry images and files. The
permission modes are the session's modes (session/set_mode); the model is a
session config option (session/set_config_option "model"): the configured model,
then the provider's current models.
Diagnostics go to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if stdio.In == nil {
				return exitCode(2, errors.New("synapse acp needs stdin: an editor runs it with pipes"))
			}
			m, err := tool.ParseMode(mode)
			if err != nil {
				return exitCode(2, err)
			}
			a, _, err := newApp(stdio)
			if err != nil {
				return err
			}
			return acp.Serve(cmd.Context(), acp.Options{App: a, Version: Version, Provider: provider, Model: model, Mode: m, Log: stdio.Err}, stdio.In, stdio.Out)
		},
	}
	cmd.Flags().StringVar(&provider, "provider", "", "provider: anthropic, openai, gemini, bedrock or vertex (default: settings.json)")
	cmd.Flags().StringVar(&model, "model", "", "model sessions start with (default: settings.json or SYNAPSE_MODEL); the editor switches with the \"model\" config option")
	cmd.Flags().StringVar(&mode, "permission-mode", string(tool.ModeDefault), "the mode sessions start in; "+permissionModeHelp+"; the editor switches with session/set_mode")
	return badUsageExits2(cmd)
}
