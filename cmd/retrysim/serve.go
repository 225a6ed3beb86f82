package main

import (
	"context"
	"fmt"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/serve"
)

// serveShutdownTimeout bounds the wait for responses in flight when serve
// stops; past it the remaining connections are closed.
const serveShutdownTimeout = 30 * time.Second

// serveLogEvery is how often serve writes its counts to stderr.
const serveLogEvery = time.Minute

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve a scenario's server model over HTTP on the real clock",
		UsageText: "retrysim serve [--scenario NAME | --file PATH] [--addr HOST:PORT]\n" +
			"               [--speed X] [--seed N]\n\n" +
			"Prints the base URL on stdout, then serves until Ctrl-C or SIGTERM, and\n" +
			"lets the responses in flight finish. Point an SDK at the URL (any API key).\n\n" +
			"Examples:\n" +
			"   retrysim serve               # the default scenario on 127.0.0.1:8080\n" +
			"   retrysim serve --scenario rate-limited-burst --speed 10 --addr :0",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "scenario", Aliases: []string{"s"}, Usage: "scenario `NAME` whose server to run (default: the file's default scenario)"},
			fileFlag(),
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8080", Usage: "`HOST:PORT` to listen on (port 0 picks a free one)"},
			speedFlag(1),
			&decimalFlag{Name: "seed", HideDefault: true, Usage: "seed `N` of the server model's random draws (default: the scenario's own seed)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				return usagef("serve takes no arguments, got %q", cmd.Args().Slice())
			}
			s, seed, err := scenarioAndSeed(cmd)
			if err != nil {
				return err
			}
			speed := cmd.Float("speed")
			stderr := cmd.Root().ErrWriter
			ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
			defer stop()
			srv, err := serve.Listen(cmd.String("addr"), s.Server, serve.WithSpeed(speed), serve.WithSeed(seed),
				serve.WithLog(stderr, serveLogEvery))
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.Root().Writer, srv.URL)
			fmt.Fprintf(stderr, "retrysim serve: scenario %s (seed %d, speed %g) on %s: POST /v1/messages, POST /control/reset, GET /healthz, GET /metrics; Ctrl-C stops\n",
				s.Name, seed, speed, srv.URL)
			<-ctx.Done()
			fmt.Fprintln(stderr, "retrysim serve: stopping; the responses in flight finish first")
			sctx, cancel := context.WithTimeout(context.Background(), serveShutdownTimeout)
			defer cancel()
			err = srv.Shutdown(sctx)
			st := srv.Handler.Stats()
			fmt.Fprintf(stderr, "retrysim serve: stopped after %d requests: %d admitted, %d rejected, %d refused\n",
				st.Requests, st.Admitted, st.Rejected, st.Refused)
			return err
		},
	}
}

// speedFlag is --speed with a default.
func speedFlag(def float64) cli.Flag {
	return &cli.FloatFlag{Name: "speed", Value: def,
		Usage: fmt.Sprintf("run the model's clock `X` times faster than the real one (> 0, at most %d)", serve.MaxSpeed),
		Validator: func(x float64) error {
			if !(x > 0) || x > serve.MaxSpeed {
				return fmt.Errorf("--speed must be > 0 and at most %d, got %v", serve.MaxSpeed, x)
			}
			return nil
		}}
}

// scenarioAndSeed returns the scenario named by --scenario (or the file's
// default) and the seed (--seed, or the scenario's).
func scenarioAndSeed(cmd *cli.Command) (*scenarios.Scenario, uint64, error) {
	f, err := loadFile(cmd)
	if err != nil {
		return nil, 0, err
	}
	name := cmd.String("scenario")
	if name == "" {
		name = f.Default
	}
	s, err := f.Lookup(name)
	if err != nil {
		return nil, 0, usageError{err}
	}
	seed := s.Seed
	if cmd.IsSet("seed") {
		seed = cmd.Uint64("seed")
	}
	return s, seed, nil
}
