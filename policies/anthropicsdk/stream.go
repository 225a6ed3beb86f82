package anthropicsdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/retrysim/retrysim/policies"
)

// ErrIncompleteStream is returned by ReadStream when a streamed message ends
// without its message_stop event: the connection was closed cleanly in the
// middle of the answer, which is therefore partial. It wraps
// io.ErrUnexpectedEOF, so Classify and policies.ClassifyError see it as
// Transient and Do repeats the whole request.
var ErrIncompleteStream = fmt.Errorf("anthropicsdk: the streamed message ended without message_stop: %w", io.ErrUnexpectedEOF)

// ReadStream reads a streamed message to its end and returns it whole.
//
// ctx is the context the stream was made with, inside Do the attempt's:
// ReadStream tells the stream watchdog (Policy.StreamIdleTimeout,
// StreamFirstByteTimeout) of each content event it reads
// (content_block_delta, see policies.IsContentEvent) with
// policies.ContentEvent(ctx), so a slow but healthy stream is not ended
// while a stalled or ping-only one is. Without a watchdog in ctx that does
// nothing.
//
// It returns the stream's error if there is one (an error event in the
// stream comes out as an *anthropic.Error, for Classify), and
// ErrIncompleteStream if the stream ended without message_stop. A stream
// that breaks off (ErrIncompleteStream, or an error of the connection that
// policies.ClassifyError finds Transient) comes back as a
// *policies.StreamError wrapping that error, with the content events read,
// so that it classifies as the simulator classifies a cut stream: status
// 200 once content had arrived (a mid-stream failure, which
// Policy.NoMidStreamRetries does not retry), 0 before. On an error the
// message is the part received, which cannot be completed by a later
// attempt: discard it. ReadStream does not close the stream.
func ReadStream(ctx context.Context, stream *ssestream.Stream[anthropic.MessageStreamEventUnion]) (anthropic.Message, error) {
	var msg anthropic.Message
	stopped := false
	content := 0
	for stream.Next() {
		event := stream.Current()
		if policies.IsContentEvent(event.Type, nil) {
			content++
			policies.ContentEvent(ctx)
		}
		if err := msg.Accumulate(event); err != nil {
			return msg, err
		}
		if event.Type == "message_stop" {
			stopped = true
		}
	}
	if err := stream.Err(); err != nil {
		return msg, broken(err, content)
	}
	if !stopped {
		return msg, &policies.StreamError{Content: content, Err: ErrIncompleteStream}
	}
	return msg, nil
}

// broken wraps err in a *policies.StreamError if it says that the
// connection broke (a transient error that is not the API's), so that it
// counts the content events that came before.
func broken(err error, content int) error {
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) || policies.ClassifyError(err, time.Now()).Class != policies.Transient {
		return err
	}
	if se := (*policies.StreamError)(nil); errors.As(err, &se) {
		return err
	}
	return &policies.StreamError{Content: content, Err: err}
}
