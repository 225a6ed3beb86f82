package anthropicsdk

import (
	"fmt"
	"io"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"
)

// ErrIncompleteStream is returned by ReadStream when a streamed message ends
// without its message_stop event: the connection was closed cleanly in the
// middle of the answer, which is therefore partial. It wraps
// io.ErrUnexpectedEOF, so Classify and policies.ClassifyError see it as
// Transient and Do repeats the whole request.
var ErrIncompleteStream = fmt.Errorf("anthropicsdk: the streamed message ended without message_stop: %w", io.ErrUnexpectedEOF)

// ReadStream reads a streamed message to its end and returns it whole. It
// returns the stream's error if there is one (an error event in the stream
// comes out as an *anthropic.Error, for Classify), and ErrIncompleteStream
// if the stream ended without message_stop. On an error the message is the
// part received, which cannot be completed by a later attempt: discard it.
// ReadStream does not close the stream.
func ReadStream(stream *ssestream.Stream[anthropic.MessageStreamEventUnion]) (anthropic.Message, error) {
	var msg anthropic.Message
	stopped := false
	for stream.Next() {
		event := stream.Current()
		if err := msg.Accumulate(event); err != nil {
			return msg, err
		}
		if event.Type == "message_stop" {
			stopped = true
		}
	}
	if err := stream.Err(); err != nil {
		return msg, err
	}
	if !stopped {
		return msg, ErrIncompleteStream
	}
	return msg, nil
}
