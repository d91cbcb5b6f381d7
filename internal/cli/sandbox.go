package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/spf13/cobra"

	"github.com/synapse-agent/synapse/internal/app"
	"github.com/synapse-agent/synapse/internal/sandbox"
)

func newSandboxCmd(stdio IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Run commands under the sandbox policy, or show what it enforces",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newSandboxExecCmd(stdio), newSandboxStatusCmd(stdio))
	return cmd
}

// sandboxManager builds the manager the way the agent would for this cwd.
func sandboxManager(stdio IO) (*sandbox.Manager, error) {
	a, err := app.New(stdio.Getenv)
	if err != nil {
		return nil, err
	}
	return a.NewSandbox(app.SandboxOptions{})
}

func newSandboxExecCmd(stdio IO) *cobra.Command {
	return &cobra.Command{
		Use:   "exec -- CMD [ARG...]",
		Short: "Run one command under the sandbox policy (always sandboxed: refuses when the sandbox cannot run)",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return exitCode(2, errors.New("give the command to run, e.g. synapse sandbox exec -- ls -la"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := sandboxManager(stdio)
			if err != nil {
				return exitCode(1, err)
			}
			for _, w := range m.Warnings() {
				fmt.Fprintln(stdio.Err, "synapse: warning:", w)
			}
			cwd, err := os.Getwd()
			if err != nil {
				return exitCode(1, fmt.Errorf("cannot find the working directory: %w", err))
			}
			// A private temp directory, as the agent's shell has: TMPDIR
			// (and under bubblewrap /tmp) is the command's own, removed after.
			m.PrivateTmp()
			defer func() { _ = m.Shutdown() }()
			env := m.Env() // without the agent's credentials, as in the agent's shell
			argv, err := m.WrapArgv(m.BuildPolicy(), args, sandbox.WrapOptions{Cwd: cwd, Env: env})
			if err != nil {
				return exitCode(1, fmt.Errorf("the command was not run: %w", err))
			}
			c := exec.CommandContext(cmd.Context(), argv[0], argv[1:]...)
			c.Env = env
			c.Stdin, c.Stdout, c.Stderr = stdio.In, stdio.Out, stdio.Err
			err = c.Run()
			var ee *exec.ExitError
			switch {
			case err == nil:
				return nil
			case errors.As(err, &ee):
				code := ee.ExitCode()
				if code < 0 {
					code = 128 + 9 // killed by a signal
				}
				return exitCode(code, nil)
			default:
				return exitCode(1, fmt.Errorf("run the sandbox: %w", err))
			}
		},
	}
}

func newSandboxStatusCmd(stdio IO) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Explain what the sandbox enforces on this machine and why",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := sandboxManager(stdio)
			if err != nil {
				return exitCode(1, err)
			}
			st := m.Status()
			if asJSON {
				enc := json.NewEncoder(stdio.Out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(st); err != nil {
					return err
				}
			} else {
				fmt.Fprint(stdio.Out, st.String())
			}
			// A sandbox that is on but cannot run refuses every command:
			// scripts checking the status must see a failure.
			if st.Unavailable {
				return exitCode(1, nil)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	return cmd
}
