// Package harness is the Go client harness of 'retrysim validate --exec':
// RETRYSIM_CLIENTS callers of the real anthropic-sdk-go, with its default
// retries, each making one call at once against ANTHROPIC_BASE_URL and
// naming itself in RETRYSIM_CLIENT_HEADER, so that the server counts what
// each caller did. With RETRYSIM_STREAM=1 the calls stream.
package harness

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// Run runs the callers and writes how many completed; it fails only when
// the environment is not usable.
func Run(ctx context.Context, out io.Writer) error {
	n, err := strconv.Atoi(os.Getenv("RETRYSIM_CLIENTS"))
	if err != nil || n < 1 {
		return fmt.Errorf("RETRYSIM_CLIENTS: want a count >= 1, got %q", os.Getenv("RETRYSIM_CLIENTS"))
	}
	base, header := os.Getenv("ANTHROPIC_BASE_URL"), os.Getenv("RETRYSIM_CLIENT_HEADER")
	if base == "" || header == "" {
		return fmt.Errorf("ANTHROPIC_BASE_URL and RETRYSIM_CLIENT_HEADER must be set (retrysim validate --exec sets them)")
	}
	stream := os.Getenv("RETRYSIM_STREAM") == "1"
	params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 16,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		client := anthropic.NewClient(option.WithBaseURL(base), option.WithAPIKey("retrysim"),
			option.WithHeader(header, "c"+strconv.Itoa(i)))
		wg.Go(func() {
			if !stream {
				_, errs[i] = client.Messages.New(ctx, params)
				return
			}
			s := client.Messages.NewStreaming(ctx, params)
			for s.Next() {
			}
			errs[i] = s.Err()
			s.Close()
		})
	}
	wg.Wait()
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
		}
	}
	_, err = fmt.Fprintf(out, "anthropic-sdk-go: %d callers, %d completed, %d failed\n", n, n-failed, failed)
	return err
}
