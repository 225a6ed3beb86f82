package main

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/retrysim/retrysim/scenarios"
	"github.com/retrysim/retrysim/serve"
)

// serveGrace is the default of --grace: how long the responses in flight
// may take to finish when serve stops; past it they are cut.
const serveGrace = 30 * time.Second

// serveLogEvery is how often serve writes its counts to stderr.
const serveLogEvery = time.Minute

// controlTokenEnv is where --control-token is read from by default (an
// environment variable, which other users of the machine cannot see in ps).
const controlTokenEnv = "RETRYSIM_CONTROL_TOKEN"

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve a scenario's server model over HTTP on the real clock",
		UsageText: "retrysim serve [--scenario NAME | --file PATH] [--addr HOST:PORT]\n" +
			"               [--speed X] [--seed N] [--allow-host NAME] [--grace D]\n\n" +
			"Prints the base URL on stdout, then serves until Ctrl-C or SIGTERM, and\n" +
			"lets the responses in flight finish (a second signal cuts them at once).\n" +
			"Point an SDK at the URL (any API key). It answers only requests whose\n" +
			"Host is localhost, an IP address or an --allow-host name; set\n" +
			controlTokenEnv + " to require a token for POST /control/*.\n\n" +
			"Examples:\n" +
			"   retrysim serve               # the default scenario on 127.0.0.1:8080\n" +
			"   retrysim serve --scenario rate-limited-burst --speed 10 --addr 127.0.0.1:0",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "scenario", Aliases: []string{"s"}, Usage: "scenario `NAME` whose server to run (default: the file's default scenario)"},
			fileFlag(),
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8080", Usage: "`HOST:PORT` to listen on (port 0 picks a free one; 0.0.0.0 is every interface)"},
			speedFlag(1),
			&decimalFlag{Name: "seed", HideDefault: true, Usage: "seed `N` of the server model's random draws (default: the scenario's own seed)"},
			&cli.StringSliceFlag{Name: "allow-host", Usage: "also answer requests whose Host is `NAME` (repeatable; '*' allows any)"},
			&cli.StringFlag{Name: "control-token", Sources: cli.EnvVars(controlTokenEnv), HideDefault: true,
				Usage: "require 'authorization: Bearer `TOKEN`' on POST /control/*"},
			&cli.DurationFlag{Name: "grace", Value: serveGrace, Usage: "on stopping, let the responses in flight finish for at most `D`"},
		},
		Action: serveAction,
	}
}

// loopbackAddr reports whether a base URL's host is a loopback address.
// serveAction listens, says where, and serves until a stop is asked for.
func serveAction(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Present() {
		return usagef("serve takes no arguments, got %q", cmd.Args().Slice())
	}
	if cmd.Duration("grace") < 0 {
		return usagef("--grace must be >= 0, got %v", cmd.Duration("grace"))
	}
	s, seed, err := scenarioAndSeed(cmd)
	if err != nil {
		return err
	}
	speed := cmd.Float("speed")
	stderr := cmd.Root().ErrWriter
	// Ctrl-C (which also ends ctx) and SIGTERM stop serving; a second
	// signal cuts the responses still in flight.
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	srv, err := serve.Listen(cmd.String("addr"), s.Server, serve.WithSpeed(speed), serve.WithSeed(seed),
		serve.WithAllowedHosts(cmd.StringSlice("allow-host")...), serve.WithControlToken(cmd.String("control-token")),
		serve.WithLog(stderr, serveLogEvery))
	var unsupported *serve.UnsupportedError
	var badAddr *serve.AddrError
	if errors.As(err, &unsupported) || errors.As(err, &badAddr) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(cmd.Root().Writer, srv.URL)
	fmt.Fprintf(stderr, "retrysim serve: scenario %s (seed %d, speed %g) on %s: POST /v1/messages, POST /v1/chat/completions, POST /v1/responses, POST /control/reset, GET /healthz, GET /metrics; Ctrl-C stops\n",
		s.Name, seed, speed, srv.URL)
	for _, w := range serve.Warnings(s.Server) {
		fmt.Fprintf(stderr, "retrysim serve: warning: %s\n", w)
	}
	if cmd.String("control-token") == "" && !loopbackAddr(srv.URL) {
		fmt.Fprintf(stderr, "retrysim serve: warning: anyone who reaches %s can reset the model; set %s to require a token\n", srv.URL, controlTokenEnv)
	}
	return stopServing(ctx, cmd, srv, signals)
}

// stopServing waits for Ctrl-C or SIGTERM, then lets the responses in
// flight finish for at most --grace (a second signal cuts them at once)
// and reports what was served.
func stopServing(ctx context.Context, cmd *cli.Command, srv *serve.Server, signals chan os.Signal) error {
	stderr := cmd.Root().ErrWriter
	got := 0 // signals received
	select {
	case <-ctx.Done():
	case <-signals:
		got++
	}
	grace := cmd.Duration("grace")
	fmt.Fprintf(stderr, "retrysim serve: stopping; the responses in flight finish first (for at most %v; a second Ctrl-C or SIGTERM cuts them now)\n", grace)
	gctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	go func() {
		for got < 2 {
			select {
			case <-signals:
				got++ // the Ctrl-C that ended ctx arrives here too: it counts once
			case <-gctx.Done():
				return
			}
		}
		cancel()
	}()
	err := srv.Shutdown(gctx)
	st := srv.Handler.Stats()
	fmt.Fprintf(stderr, "retrysim serve: stopped after %d requests: %d admitted, %d rejected, %d refused; %d other requests turned away (unknown path or method, Host, token); %d output tokens wasted (streamed before a mid-stream failure)\n",
		st.Requests, st.Admitted, st.Rejected, st.Refused, st.TurnedAway, st.WastedOutputTokens)
	// A stop that was asked for is serve's normal end, responses
	// cut included: they are reported, and serve exits 0.
	if cut := (*serve.CutError)(nil); errors.As(err, &cut) {
		fmt.Fprintf(stderr, "retrysim serve: cut %d responses still in flight\n", cut.InFlight)
		return nil
	}
	return err
}

func loopbackAddr(url string) bool {
	u, err := netip.ParseAddrPort(strings.TrimPrefix(url, "http://"))
	return err == nil && u.Addr().IsLoopback()
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
	f, err := loadFile(newCall(cmd))
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
