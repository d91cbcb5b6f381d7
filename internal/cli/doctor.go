package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/synapse-agent/synapse/internal/app"
	"github.com/synapse-agent/synapse/internal/textutil"
)

func newDoctorCmd(stdio IO) *cobra.Command {
	var f struct{ provider, model string }
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Say which provider, model and credentials a start would use, and the sandbox backend (never a secret)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := app.New(stdio.Getenv)
			if err != nil {
				return exitCode(1, err)
			}
			d, err := a.Diagnose(app.ProviderSelection{Provider: f.provider, Model: f.model})
			if err != nil {
				return exitCode(1, err)
			}
			printDiagnosis(stdio.Out, d)
			if m, err := sandboxManager(stdio); err != nil {
				fmt.Fprintf(stdio.Out, "Sandbox: cannot tell (%s)\n", textutil.OneLine(textutil.Sanitize(err.Error()), 200))
			} else {
				st := m.Status()
				fmt.Fprintf(stdio.Out, "%s\n  why: %s\n", st.Headline(), st.Reason)
			}
			if d.Problem != nil {
				fmt.Fprintln(stdio.Out, "Not ready: the provider cannot be used (below).")
				return exitCode(1, d.Problem)
			}
			fmt.Fprintf(stdio.Out, "Ready: %s with %s (credentials found, not checked against the server)\n", d.Provider, d.Model)
			return nil
		},
	}
	cmd.Flags().StringVar(&f.provider, "provider", "", "check this provider: anthropic, openai or gemini (default: as a start would choose)")
	cmd.Flags().StringVar(&f.model, "model", "", "check this model (default: as a start would choose)")
	return cmd
}

func printDiagnosis(w io.Writer, d app.Diagnosis) {
	fmt.Fprintf(w, "Provider: %s, chosen by %s\n", d.Provider, d.Why)
	if d.Model != "" {
		price := "no known price (pricing.json can add one)"
		if p := d.Price; p != nil {
			price = fmt.Sprintf("$%g input, $%g output, $%g cache read", p.Input, p.Output, p.CacheRead)
			if p.CacheWrite > 0 {
				price += fmt.Sprintf(", $%g cache write", p.CacheWrite)
			}
			price += " per million tokens"
		}
		fmt.Fprintf(w, "Model: %s, %s; %s\n", d.Model, d.ModelFrom, price)
	}
	if d.Endpoint != "" {
		fmt.Fprintf(w, "Endpoint: %s\n", d.Endpoint)
	}
	fmt.Fprintln(w, "Credentials (where each was found; values are never shown):")
	for _, c := range d.Credentials {
		found := "none; " + c.Missing
		if len(c.Found) > 0 {
			found = strings.Join(c.Found, "; ")
		}
		fmt.Fprintf(w, "  %s: %s\n", c.Provider, textutil.Sanitize(found))
	}
}
