package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/synapse-agent/synapse/internal/app"
)

type chatFlags struct {
	model, provider, resume string
	cont                    bool
}

func newChatCmd(stdio IO) *cobra.Command {
	var f chatFlags
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Start the interactive agent (default)",
		Long: "Start the interactive agent: type a task, watch it work, Ctrl+C to interrupt it.\n" +
			"Type /help inside for the commands. With stdin not a terminal, prompts are read\n" +
			"one per line (plain output, no line editing).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runChat(cmd.Context(), stdio, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "model to use (default: SYNAPSE_MODEL or settings.json)")
	fl.StringVar(&f.provider, "provider", "", "provider: anthropic or openai (default: SYNAPSE_PROVIDER or settings.json)")
	fl.StringVarP(&f.resume, "resume", "r", "", "resume the session with this id (or unique id prefix)")
	fl.BoolVarP(&f.cont, "continue", "c", false, "continue the most recently updated session")
	return badUsageExits2(cmd)
}

func runChat(ctx context.Context, stdio IO, f chatFlags) error {
	resume, err := resumeID(f.cont, f.resume)
	if err != nil {
		return err
	}
	getenv := getenvOr(stdio.Getenv)
	a, cwd, err := newApp(stdio)
	if err != nil {
		return err
	}

	in, inTTY := stdio.In.(*os.File)
	inTTY = inTTY && term.IsTerminal(int(in.Fd()))
	outTTY := isTTY(stdio.Out)
	tty := inTTY && outTTY
	width, height := termSize(stdio.Out)

	// Everything that can fail (a missing key, a broken settings.json, an
	// unknown session) fails here, before the terminal changes mode.
	chat, err := a.NewChat(ctx, app.ChatSetup{
		Provider: f.provider, Model: f.model, ResumeID: resume, Cwd: cwd,
		In: stdio.In, Out: stdio.Out, TTY: tty, RenderTTY: outTTY,
		Color: outTTY && getenv("NO_COLOR") == "", Width: width, Height: height,
		Version: Version,
	})
	if err != nil {
		return exitCode(1, err)
	}

	if tty {
		// Raw mode: keys arrive one by one and Ctrl+C is a byte the REPL
		// reads (cancel the turn, clear the line), not a signal.
		state, err := term.MakeRaw(int(in.Fd()))
		if err != nil {
			_ = chat.Close()
			return exitCode(1, fmt.Errorf("cannot put the terminal in raw mode: %w; run with stdin from a pipe for plain mode", err))
		}
		defer func() { _ = term.Restore(int(in.Fd()), state) }()
	}
	if outTTY {
		stop := watchResize(stdio.Out.(*os.File), chat.REPL.SetSize)
		defer stop()
	}

	code := chat.REPL.Run(ctx)
	if err := chat.Close(); err != nil {
		chat.Renderer.Notice("warning: " + err.Error())
	}
	if code != 0 {
		return exitCode(code, nil)
	}
	return nil
}

// watchResize passes the terminal's new size to set on every SIGWINCH.
func watchResize(out *os.File, set func(width, height int)) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGWINCH)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-ch:
				if w, h, err := term.GetSize(int(out.Fd())); err == nil {
					set(w, h)
				}
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
